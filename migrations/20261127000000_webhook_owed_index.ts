import type { Knex } from 'knex';

// The index of owed deliveries by due time alone (status, next_attempt_at) was the reconciler's
// look across every endpoint. The reconciler now looks per endpoint, as turns do, through
// webhook_deliveries_endpoint_due, and nothing else reads by status and due time alone; every
// delivery made and every attempt recorded still paid to keep the index.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex([], 'webhook_deliveries_owed');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['status', 'next_attempt_at'], 'webhook_deliveries_owed');
  });
}
