import type { Knex } from 'knex';

// The live event stream (src/streams/) reads an organization's events after a position:
// `organization_id = ? AND id > ? AND id <= ?`, one range scan of this index whatever the
// organization's size or the other organizations' traffic.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_events', (t) => {
    t.index(['organization_id', 'id'], 'run_events_org_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_events', (t) => {
    t.dropIndex([], 'run_events_org_id');
  });
}
