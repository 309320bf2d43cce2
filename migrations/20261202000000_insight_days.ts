import type { Knex } from 'knex';
import { rebuildDailyRollups } from '../src/insights/insight-store.js';

// The insights' daily rollups (src/insights/insight-fold.ts): the hourly slots summed per day of
// the organization's clock, so that an answer by day or week reads a row per day, not 24. The
// same columns as the hourly tables (20261201000000_insights.ts), and `zone`: the time zone whose
// days they are (an answer in another zone, after the organization's changed, sums the hourly
// rows instead). Filled from the hourly rows, in each organization's zone now.
//
// Not in a transaction of its own: MySQL commits at each CREATE TABLE anyway, and the fill is a
// transaction of its own (with the fold's cursor locked).
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  const dayTable = (name: string, step: boolean, counts: string[]) =>
    knex.schema.createTable(name, (t) => {
      t.string('organization_id', 36).notNullable();
      t.string('template_id', 36).notNullable();
      t.integer('template_version').unsigned().notNullable();
      t.string('slice', 330).notNullable().collate('utf8mb4_bin');
      if (step) t.string('step', 255).notNullable().collate('utf8mb4_bin');
      t.datetime('slot').notNullable();
      t.string('zone', 64).notNullable().collate('utf8mb4_bin');
      for (const column of counts) t.integer(column).unsigned().notNullable().defaultTo(0);
      t.integer('duration_count').unsigned().notNullable().defaultTo(0);
      t.bigInteger('duration_max').unsigned().notNullable().defaultTo(0);
      t.text('duration_bins').notNullable();
      const key = ['organization_id', 'template_id', 'slice', 'slot', 'template_version', 'zone'];
      t.primary(step ? [...key, 'step'] : key);
      t.index(['organization_id', 'slice', 'slot'], `${name}_org`);
    });
  await dayTable('insight_run_days', false, ['created', 'completed', 'failed', 'cancelled']);
  await dayTable('insight_step_days', true, ['done', 'late', 'rejected', 'skipped', 'reopened']);
  await rebuildDailyRollups(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('insight_step_days');
  await knex.schema.dropTable('insight_run_days');
}
