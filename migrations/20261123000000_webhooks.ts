import type { Knex } from 'knex';

// Outbound webhooks: the endpoints an organization subscribes, the deliveries owed to them (one
// per endpoint and event), each attempt made, and the outbox flag on run_events that says which
// committed events have been turned into deliveries. MySQL decides what is owed; Redis only
// carries the delivery jobs.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_events', (t) => {
    // 0 until the dispatcher has made the event's deliveries (in one transaction with them).
    // A flag, not a cursor over ids: ids are taken at INSERT and committed in any order, so a
    // cursor could pass an event whose transaction had not committed yet.
    t.boolean('dispatched').notNullable().defaultTo(false);
    t.index(['dispatched', 'id'], 'run_events_undispatched');
  });
  // Events from before webhooks existed are owed to nobody.
  await knex('run_events').update({ dispatched: true });

  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.string('id', 36).primary();
    t.string('organization_id', 36).notNullable();
    t.string('url', 2048).notNullable();
    t.string('description', 500).nullable();
    // A JSON array of event types; NULL: every type.
    t.text('event_types').nullable();
    t.string('secret', 100).notNullable();
    // After a rotation the old secret signs too, until previous_secret_expires_at.
    t.string('previous_secret', 100).nullable();
    t.datetime('previous_secret_expires_at', { precision: 3 }).nullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.string('disabled_reason', 255).nullable();
    t.datetime('disabled_at', { precision: 3 }).nullable();
    // Since when every attempt has failed (NULL after a success): 5 days of it disables.
    t.datetime('failing_since', { precision: 3 }).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    // The newest event committed when the endpoint was made: it is owed only later ones.
    t.bigInteger('from_event_id').unsigned().notNullable();
    t.index(['organization_id', 'created_at'], 'webhook_endpoints_org');
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    // seq: the keyset order of the delivery log.
    t.bigIncrements('seq').primary();
    t.string('id', 36).notNullable().unique('webhook_deliveries_id');
    t.string('organization_id', 36).notNullable();
    t.string('endpoint_id', 36).notNullable();
    t.bigInteger('event_id').unsigned().notNullable();
    t.string('run_id', 36).notNullable();
    t.integer('event_seq').unsigned().notNullable();
    t.string('event_type', 32).notNullable();
    // pending (owed), delivered, failed (given up, or the endpoint was disabled).
    t.string('status', 16).notNullable();
    // round: 1, and one more per redelivery; attempts counts those of the current round.
    t.smallint('round').unsigned().notNullable().defaultTo(1);
    t.smallint('attempts').unsigned().notNullable().defaultTo(0);
    t.datetime('next_attempt_at', { precision: 3 }).nullable();
    // Held by the worker attempting it until then: one attempt at a time.
    t.datetime('locked_until', { precision: 3 }).nullable();
    t.datetime('last_attempt_at', { precision: 3 }).nullable();
    t.smallint('last_status_code').unsigned().nullable();
    t.string('last_error', 255).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('delivered_at', { precision: 3 }).nullable();
    // One delivery per endpoint and event: a second dispatch of an event adds nothing.
    t.unique(['endpoint_id', 'event_id'], { indexName: 'webhook_deliveries_endpoint_event' });
    // The order of one run's deliveries to one endpoint.
    t.index(['endpoint_id', 'run_id', 'event_seq'], 'webhook_deliveries_chain');
    // What the reconciler looks for: owed and due.
    t.index(['status', 'next_attempt_at'], 'webhook_deliveries_owed');
    // The delivery log's filters, newest first.
    t.index(['organization_id', 'seq'], 'webhook_deliveries_org_seq');
    t.index(['organization_id', 'endpoint_id', 'seq'], 'webhook_deliveries_org_endpoint_seq');
    t.index(['organization_id', 'run_id', 'seq'], 'webhook_deliveries_org_run_seq');
    t.index(['organization_id', 'status', 'seq'], 'webhook_deliveries_org_status_seq');
  });

  await knex.schema.createTable('webhook_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.string('delivery_id', 36).notNullable();
    t.smallint('round').unsigned().notNullable();
    t.datetime('attempted_at', { precision: 3 }).notNullable();
    // NULL when no HTTP answer came (refused address, connection error, timeout).
    t.smallint('status_code').unsigned().nullable();
    t.integer('latency_ms').unsigned().notNullable();
    // The first 1 KB of the answer's body.
    t.text('response_body').nullable();
    t.string('error', 255).nullable();
    t.index(['delivery_id', 'id'], 'webhook_attempts_delivery');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_endpoints');
  await knex.schema.alterTable('run_events', (t) => {
    t.dropIndex(['dispatched', 'id'], 'run_events_undispatched');
    t.dropColumn('dispatched');
  });
}
