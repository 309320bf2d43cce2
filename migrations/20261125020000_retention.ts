import type { Knex } from 'knex';

// Run deletion and retention.
// - organizations.run_retention_days: how long the organization keeps its finished runs
//   (NULL: the operator's default, RUN_RETENTION_DAYS).
// - idempotency_keys.run_id: the run a stored answer shows, so that deleting a run deletes the
//   answers that hold its inputs (looked up by organization and run).
// - workflow_runs (organization_id, status, last_activity): a finished run's last_activity is
//   when it finished, so the runs whose retention ended are one range scan per status.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.integer('run_retention_days').unsigned().nullable();
  });
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.string('run_id', 36).nullable();
    t.index(['organization_id', 'run_id'], 'idempotency_keys_org_run');
  });
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.index(['organization_id', 'status', 'last_activity'], 'workflow_runs_org_status_activity');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dropIndex([], 'workflow_runs_org_status_activity');
  });
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropIndex([], 'idempotency_keys_org_run');
    t.dropColumn('run_id');
  });
  await knex.schema.alterTable('organizations', (t) => {
    t.dropColumn('run_retention_days');
  });
}
