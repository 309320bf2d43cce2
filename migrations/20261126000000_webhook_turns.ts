import type { Knex } from 'knex';

// Webhook deliveries go out in endpoint turns (src/webhooks/deliverer.ts): a turn takes an
// endpoint's owed deliveries in the order they fall due, `endpoint_id = ? AND status =
// 'pending' AND next_attempt_at <= ?`, one range scan of this index however many other
// endpoints are owed anything.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['endpoint_id', 'status', 'next_attempt_at'], 'webhook_deliveries_endpoint_due');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex([], 'webhook_deliveries_endpoint_due');
  });
}
