import type { Knex } from 'knex';

// organizations.time_zone: the IANA time zone (e.g. 'Europe/Berlin') in which the
// organization's due times count days and business days; NULL: UTC, the default. 64
// characters hold every IANA name (the longest are about 30).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.string('time_zone', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.dropColumn('time_zone');
  });
}
