import type { Knex } from 'knex';

// Schedules (src/schedules/): a template's runs created on a cadence. MySQL holds each schedule's
// next time (next_fire_at) and when a sweep owes it a look (wake_at: NULL while paused or
// ended), which the sweep reads by index; Redis only wakes the workers.
//
// schedule_fires: what happened at each scheduled time, at most one row per (schedule, time)
// (the unique key that makes a firing happen once whatever races it): fired (with its run), or
// skipped with why. It is the schedule's history, and the runs of a schedule are read through
// it (run_seq), so a plain run carries nothing of schedules.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workflow_schedules', (t) => {
    t.bigIncrements('seq').primary();
    t.string('id', 36).notNullable().unique();
    t.string('organization_id', 36).notNullable().references('organizations.id');
    t.string('template_id', 36).notNullable();
    t.integer('template_version').unsigned().nullable(); // pinned; NULL: the latest
    t.text('run_request').notNullable(); // JSON: input_fields, user_assignments, labels
    t.string('cron', 255).nullable();
    t.integer('interval_seconds').unsigned().nullable();
    t.string('time_zone', 64).notNullable();
    t.datetime('start_at', { precision: 3 }).nullable();
    t.datetime('end_at', { precision: 3 }).nullable();
    t.string('overlap', 16).notNullable();
    t.integer('catchup_window_seconds').unsigned().notNullable();
    t.string('state', 16).notNullable(); // active | paused
    t.string('note', 1000).nullable();
    t.datetime('next_fire_at', { precision: 3 }).nullable();
    t.datetime('buffered_for', { precision: 3 }).nullable();
    t.datetime('wake_at', { precision: 3 }).nullable();
    t.string('last_run_id', 36).nullable();
    t.integer('version').unsigned().notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['wake_at'], 'workflow_schedules_wake');
    t.index(['organization_id', 'seq'], 'workflow_schedules_org_seq');
    t.index(['organization_id', 'template_id', 'seq'], 'workflow_schedules_org_template_seq');
  });
  await knex.schema.createTable('schedule_fires', (t) => {
    t.bigIncrements('id').primary();
    t.string('schedule_id', 36).notNullable();
    t.string('organization_id', 36).notNullable();
    t.datetime('scheduled_for', { precision: 3 }).notNullable();
    t.string('kind', 16).notNullable(); // cadence | buffered | trigger | backfill
    t.string('outcome', 16).notNullable(); // fired | skipped
    t.string('reason', 32).nullable(); // a skip's: overlap | catchup_window | paused | template_unavailable
    t.integer('missed').unsigned().notNullable().defaultTo(1); // times a skip record stands for
    t.datetime('until', { precision: 3 }).nullable(); // the last of them
    t.string('run_id', 36).nullable();
    t.bigInteger('run_seq').unsigned().nullable();
    t.datetime('at', { precision: 3 }).notNullable();
    t.unique(['schedule_id', 'scheduled_for'], { indexName: 'schedule_fires_once' });
    t.index(['schedule_id', 'id'], 'schedule_fires_history');
    t.index(['organization_id', 'schedule_id', 'run_seq'], 'schedule_fires_runs');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('schedule_fires');
  await knex.schema.dropTable('workflow_schedules');
}
