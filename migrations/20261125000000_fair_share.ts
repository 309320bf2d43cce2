import type { Knex } from 'knex';

// Fair share between organizations: workers take an organization's owed runs in turns
// (src/jobs/apply-runs.ts), each turn reading that organization's oldest owed runs, and the
// reconciler finds the organizations that owe runs. Both are range scans of one index,
// (organization_id, pending_since), which replaces the index on pending_since alone: a run
// carries one secondary index for its pending state, as before, so a change costs the same.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.index(['organization_id', 'pending_since'], 'workflow_runs_org_pending');
  });
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dropIndex([], 'workflow_runs_pending_since');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.index(['pending_since'], 'workflow_runs_pending_since');
  });
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dropIndex([], 'workflow_runs_org_pending');
  });
}
