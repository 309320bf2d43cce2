import type { Knex } from 'knex';

// The task inbox (src/tasks/): every active run's current step is a task, listed by due date
// (tasks without one last), then by start, or by start alone.
// - workflow_runs.current_step_started_at: when the current step began (written by every change).
// - workflow_runs.task_due / task_started: columns MariaDB derives, NULL unless the run is
//   active, so an index range that starts past NULL holds the active runs' tasks only, however
//   many finished runs share the organization; task_due puts a step without a due date last.
// - indexes for each filter the runs table itself answers: the assignee (and no assignee), the
//   template, overdue (whose two halves, merged, are also the inbox without a filter); each
//   ordered by due date, then start (then seq, which every secondary index ends with); and one
//   by start alone. Every change of a run's current step moves its entry in each of them: they
//   are the fewest that keep every filter one bounded range scan.
// - run_task_terms: one row per term of an active run's task that a run's own columns cannot
//   index (a candidate user or group of an unclaimed step, an approval, a label), ordered as the
//   inbox. Only runs with such terms have rows: a plain run without labels writes none.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dateTime('current_step_started_at', { precision: 3 }).nullable();
  });
  // The active runs' current steps began when their document says (else: their last activity).
  await knex.raw(
    'UPDATE workflow_runs SET current_step_started_at = COALESCE(' +
      "STR_TO_DATE(JSON_VALUE(run_json, CONCAT('$.steps[', current_step_index, '].started_at')), '%Y-%m-%dT%H:%i:%s.%fZ'), " +
      "last_activity) WHERE status = 'active' AND current_step_index IS NOT NULL",
  );
  await knex.raw(
    'ALTER TABLE workflow_runs ' +
      'ADD COLUMN task_due DATETIME(3) AS ' +
      "(IF(status = 'active', COALESCE(current_step_due_date, TIMESTAMP'9999-12-31 23:59:59.999'), NULL)) VIRTUAL, " +
      "ADD COLUMN task_started DATETIME(3) AS (IF(status = 'active', current_step_started_at, NULL)) VIRTUAL",
  );
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.index(['organization_id', 'task_started'], 'workflow_runs_tasks_started');
    t.index(
      ['organization_id', 'current_step_assignee', 'task_due', 'task_started'],
      'workflow_runs_tasks_assignee',
    );
    t.index(
      ['organization_id', 'template_id', 'task_due', 'task_started'],
      'workflow_runs_tasks_template',
    );
    t.index(
      ['organization_id', 'current_step_overdue', 'task_due', 'task_started'],
      'workflow_runs_tasks_overdue',
    );
  });
  await knex.schema.createTable('run_task_terms', (t) => {
    t.string('organization_id', 36).notNullable();
    // k:approval, u:<user>, g:<group>, l:<key>:<value>
    t.string('term', 330).notNullable();
    t.dateTime('task_due', { precision: 3 }).notNullable();
    t.dateTime('task_started', { precision: 3 }).notNullable();
    t.bigInteger('run_seq').unsigned().notNullable();
    t.primary(['organization_id', 'term', 'task_due', 'task_started', 'run_seq']);
    t.index(['organization_id', 'term', 'task_started', 'run_seq'], 'run_task_terms_started');
    t.index(['run_seq'], 'run_task_terms_run');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('run_task_terms');
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dropIndex([], 'workflow_runs_tasks_overdue');
    t.dropIndex([], 'workflow_runs_tasks_template');
    t.dropIndex([], 'workflow_runs_tasks_assignee');
    t.dropIndex([], 'workflow_runs_tasks_started');
  });
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dropColumn('task_started');
    t.dropColumn('task_due');
    t.dropColumn('current_step_started_at');
  });
}
