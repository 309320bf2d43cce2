import type { Knex } from 'knex';

// When the clock owes the current step something (workflow_runs.current_step_wake_at): becoming
// overdue, an escalation, an approval's decision timeout. One index over it replaces the
// (overdue, due date) index the overdue sweep read, so a run that has none of the new things
// pays what it paid: one index entry, at its due date. NULL for a run that is not active.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dateTime('current_step_wake_at', { precision: 3 }).nullable();
  });
  await knex.raw(
    'UPDATE workflow_runs SET current_step_wake_at = current_step_due_date ' +
      "WHERE status = 'active' AND current_step_overdue = 0 AND current_step_due_date IS NOT NULL",
  );
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.index(['current_step_wake_at'], 'workflow_runs_wake');
    t.dropIndex([], 'workflow_runs_due');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.index(['current_step_overdue', 'current_step_due_date'], 'workflow_runs_due');
    t.dropIndex([], 'workflow_runs_wake');
  });
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dropColumn('current_step_wake_at');
  });
}
