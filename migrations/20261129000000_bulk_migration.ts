import type { Knex } from 'knex';

// A bulk migration's plan (JSON: fromVersion, toVersion, pageMap, dropIncompatible, dryRun),
// kept with the bulk action so that a worker taking it over plans what was asked. NULL for a
// bulk cancel or retry.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('bulk_actions', (t) => {
    t.text('plan').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('bulk_actions', (t) => {
    t.dropColumn('plan');
  });
}
