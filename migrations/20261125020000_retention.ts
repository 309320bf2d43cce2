import type { Knex } from 'knex';

// Run deletion and retention.
// - organizations.run_retention_days: how long the organization keeps its finished runs
//   (NULL: the operator's default, RUN_RETENTION_DAYS).
// - idempotency_keys.run_id: the run a stored answer shows, so that deleting a run deletes the
//   answers that hold its inputs (looked up by organization and run).
// - workflow_runs.finished_at: when a finished run (completed, failed, cancelled) finished, NULL
//   while it is not finished; a column MariaDB derives from status and last_activity (a
//   finished run's last_activity is when it finished), with the index (organization_id,
//   finished_at). The runs whose retention ended are one range scan of it. Derived, so no
//   writer can forget it; NULL through a run's whole life until it finishes, so the index
//   changes once per run (and again on a retry), not on every change as an index on
//   last_activity would.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.integer('run_retention_days').unsigned().nullable();
  });
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.string('run_id', 36).nullable();
    t.index(['organization_id', 'run_id'], 'idempotency_keys_org_run');
  });
  await knex.raw(
    'ALTER TABLE workflow_runs ADD COLUMN finished_at DATETIME(3) AS ' +
      "(IF(status IN ('completed', 'failed', 'cancelled'), last_activity, NULL)) VIRTUAL",
  );
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.index(['organization_id', 'finished_at'], 'workflow_runs_org_finished');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dropIndex([], 'workflow_runs_org_finished');
    t.dropColumn('finished_at');
  });
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropIndex([], 'idempotency_keys_org_run');
    t.dropColumn('run_id');
  });
  await knex.schema.alterTable('organizations', (t) => {
    t.dropColumn('run_retention_days');
  });
}
