import type { Knex } from 'knex';

// The run's history (run_events, written in the same transaction as each change), the run's
// version (event_seq: the seq of its latest event, which every writer names in its guard),
// overdue steps, the indexes of the list filters and of the due-date reconciler, and the
// Idempotency-Keys of requests, stored with their effect and their answer.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('run_events', (t) => {
    // id: one order over every event of every run (for readers that follow the whole stream).
    t.bigIncrements('id').primary();
    t.string('run_id', 36).notNullable();
    t.string('organization_id', 36).notNullable();
    t.integer('seq').unsigned().notNullable();
    t.string('type', 32).notNullable();
    t.datetime('at', { precision: 3 }).notNullable();
    t.text('data', 'longtext').notNullable();
    // One event per place in a run's history: a second writer of the same change is refused.
    t.unique(['run_id', 'seq'], { indexName: 'run_events_run_seq' });
  });

  await knex.schema.alterTable('workflow_runs', (t) => {
    t.integer('event_seq').unsigned().notNullable().defaultTo(0);
    t.boolean('current_step_overdue').notNullable().defaultTo(false);
    // Steps past due and not yet marked: the reconciler's range scan.
    t.index(['current_step_overdue', 'current_step_due_date'], 'workflow_runs_due');
    // The list's filters: each a keyset range scan, newest first, at any organization size.
    t.index(['organization_id', 'status', 'seq'], 'workflow_runs_org_status_seq');
    t.index(['organization_id', 'template_id', 'seq'], 'workflow_runs_org_template_seq');
    t.index(['organization_id', 'current_step_assignee', 'seq'], 'workflow_runs_org_assignee_seq');
    t.index(['organization_id', 'current_step_overdue', 'seq'], 'workflow_runs_org_overdue_seq');
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.bigIncrements('id').primary();
    t.string('organization_id', 36).notNullable();
    // Compared byte for byte: 'abc' and 'ABC' are two keys.
    t.string('idem_key', 255).notNullable().collate('utf8mb4_bin');
    t.string('endpoint', 64).notNullable();
    t.specificType('request_hash', 'CHAR(64)').notNullable();
    t.smallint('status_code').unsigned().notNullable();
    t.text('response', 'longtext').notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('expires_at', { precision: 3 }).notNullable();
    // Keys are the client's, so they are unique per organization only. Named, so that a
    // second writer of a key can tell from the error which key it met.
    t.unique(['organization_id', 'idem_key'], { indexName: 'idempotency_keys_org_key' });
    t.index(['expires_at'], 'idempotency_keys_expires');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.dropIndex([], 'workflow_runs_org_overdue_seq');
    t.dropIndex([], 'workflow_runs_org_assignee_seq');
    t.dropIndex([], 'workflow_runs_org_template_seq');
    t.dropIndex([], 'workflow_runs_org_status_seq');
    t.dropIndex(['current_step_overdue', 'current_step_due_date'], 'workflow_runs_due');
    t.dropColumn('current_step_overdue');
    t.dropColumn('event_seq');
  });
  await knex.schema.dropTable('run_events');
}
