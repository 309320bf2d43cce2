import type { Knex } from 'knex';

// The insights' rollups (src/insights/), folded from run_events behind a cursor by one worker at
// a time, never written by a change itself: a plain change pays nothing for them.
// - insight_cursor: the one row whose event_id is the last event folded; the rollups and the
//   cursor move in one transaction, so each event is folded exactly once. The first worker makes
//   it, at 0: the events already stored are folded first.
// - insight_runs: what the fold knows of each run it has seen and that may still change (its
//   template version, labels, current step with its start, due time, assignee and overdue
//   flag); a run's row goes when it completes, is cancelled or deleted.
// - insight_run_slots / insight_step_slots: per organization, template, version, slice ('' for
//   every run, 'l:<key>:<value>' for a label's, 'a:<user>' for an assignee's steps) and hour of
//   the organization's time zone (slot: its start, UTC): the runs created, completed, failed and
//   cancelled, and the steps done, late, rejected, skipped and reopened, with the durations'
//   DDSketch bins (JSON: key → count), their count and maximum.
// - insight_open_steps: how many open runs sit at each step now (step '': pending), and how
//   many of them are overdue.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('insight_cursor', (t) => {
    t.tinyint('id').unsigned().primary();
    t.bigInteger('event_id').unsigned().notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
  });

  await knex.schema.createTable('insight_runs', (t) => {
    t.string('run_id', 36).primary();
    t.string('organization_id', 36).notNullable();
    t.string('template_id', 36).notNullable();
    t.integer('template_version').unsigned().notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.text('slices').notNullable(); // JSON array of the run's label slices
    t.string('status', 16).notNullable();
    t.string('step', 255).nullable().collate('utf8mb4_bin');
    t.datetime('step_started_at', { precision: 3 }).nullable();
    t.datetime('step_due_at', { precision: 3 }).nullable();
    t.string('step_assignee', 255).nullable();
    t.boolean('overdue').notNullable().defaultTo(false);
  });

  const slotTable = (name: string, step: boolean, columns: (t: Knex.CreateTableBuilder) => void) =>
    knex.schema.createTable(name, (t) => {
      t.string('organization_id', 36).notNullable();
      t.string('template_id', 36).notNullable();
      t.integer('template_version').unsigned().notNullable();
      t.string('slice', 330).notNullable().collate('utf8mb4_bin');
      if (step) t.string('step', 255).notNullable().collate('utf8mb4_bin');
      t.datetime('slot').notNullable();
      columns(t);
      t.integer('duration_count').unsigned().notNullable().defaultTo(0);
      t.bigInteger('duration_max').unsigned().notNullable().defaultTo(0);
      t.text('duration_bins').notNullable();
      const key = ['organization_id', 'template_id', 'slice', 'slot', 'template_version'];
      t.primary(step ? [...key, 'step'] : key);
      // The organization's view: every template's slots of a slice in a range.
      t.index(['organization_id', 'slice', 'slot'], `${name}_org`);
    });
  const counts = (t: Knex.CreateTableBuilder, names: string[]) => {
    for (const column of names) t.integer(column).unsigned().notNullable().defaultTo(0);
  };
  await slotTable('insight_run_slots', false, (t) =>
    counts(t, ['created', 'completed', 'failed', 'cancelled']),
  );
  await slotTable('insight_step_slots', true, (t) =>
    counts(t, ['done', 'late', 'rejected', 'skipped', 'reopened']),
  );

  await knex.schema.createTable('insight_open_steps', (t) => {
    t.string('organization_id', 36).notNullable();
    t.string('template_id', 36).notNullable();
    t.integer('template_version').unsigned().notNullable();
    t.string('slice', 330).notNullable().collate('utf8mb4_bin');
    t.string('step', 255).notNullable().collate('utf8mb4_bin');
    t.integer('runs').notNullable().defaultTo(0);
    t.integer('overdue').notNullable().defaultTo(0);
    t.primary(['organization_id', 'template_id', 'slice', 'template_version', 'step']);
    t.index(['organization_id', 'slice'], 'insight_open_steps_org');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'insight_open_steps',
    'insight_step_slots',
    'insight_run_slots',
    'insight_runs',
    'insight_cursor',
  ]) {
    await knex.schema.dropTable(table);
  }
}
