import type { Knex } from 'knex';

// Labels on runs, and bulk cancel / retry by filter.
//
// run_labels: one row per label of a run, written in the transaction that inserts the run.
// Its primary key (organization_id, label_key, label_value, run_seq) is the index a
// label-filtered list page scans, newest first, from its cursor: a page costs the same at any
// organization size. Keys and values compare exactly (utf8mb4_bin): `env:Prod` is not `env:prod`.
//
// bulk_actions: one row per bulk cancel or retry: its filter, the highest run seq it may match
// (runs created later are not matched), the cursor of the last run handled and the counts,
// moved in the same transaction as each batch of changes, so a worker that dies midway
// resumes where the last committed batch left off.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('run_labels', (t) => {
    t.string('organization_id', 36).notNullable();
    t.string('label_key', 63).notNullable().collate('utf8mb4_bin');
    t.string('label_value', 255).notNullable().collate('utf8mb4_bin');
    t.bigInteger('run_seq').unsigned().notNullable();
    t.string('run_id', 36).notNullable();
    t.primary(['organization_id', 'label_key', 'label_value', 'run_seq']);
    t.index(['run_seq'], 'run_labels_run_seq');
  });

  await knex.schema.createTable('bulk_actions', (t) => {
    t.bigIncrements('seq').primary();
    t.string('id', 36).notNullable().unique();
    t.string('organization_id', 36).notNullable().references('organizations.id');
    t.string('action', 16).notNullable(); // cancel | retry
    t.string('status', 16).notNullable(); // running | completed
    t.text('filter').notNullable(); // the filter as given (JSON)
    t.string('reason', 1000).nullable();
    t.text('actor').notNullable(); // JSON: who asked (the actor of every change it makes)
    // Runs with seq <= max_seq may match; cursor_seq is the lowest seq handled so far (runs are
    // taken newest first), NULL before the first batch.
    t.bigInteger('max_seq').unsigned().notNullable();
    t.bigInteger('cursor_seq').unsigned().nullable();
    t.integer('matched').unsigned().notNullable().defaultTo(0);
    t.integer('done').unsigned().notNullable().defaultTo(0);
    t.text('skipped').notNullable(); // JSON: {code: count}
    t.datetime('started_at', { precision: 3 }).notNullable();
    t.datetime('finished_at', { precision: 3 }).nullable();
    t.index(['organization_id', 'seq'], 'bulk_actions_org_seq');
    t.index(['status'], 'bulk_actions_status');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('bulk_actions');
  await knex.schema.dropTable('run_labels');
}
