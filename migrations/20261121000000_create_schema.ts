import type { Knex } from 'knex';

// Types chosen to mean the same on MySQL 8 and MariaDB 10.11: JSON documents are LONGTEXT
// (MariaDB's JSON is an alias of it, and mysql2 would parse MySQL's JSON but not MariaDB's),
// times are DATETIME(3) in UTC.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('organizations', (t) => {
    t.string('id', 36).primary();
    t.string('name', 200).notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.string('id', 36).primary();
    t.string('organization_id', 36).notNullable().references('organizations.id');
    t.string('name', 200).nullable();
    // Only the SHA-256 of the key is kept; the prefix helps an operator tell keys apart.
    t.string('key_hash', 64).notNullable().unique();
    t.string('key_prefix', 16).notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('revoked_at', { precision: 3 }).nullable();
  });

  await knex.schema.createTable('workflow_templates', (t) => {
    t.bigIncrements('seq').primary();
    t.string('id', 36).notNullable().unique();
    t.string('organization_id', 36).notNullable().references('organizations.id');
    t.string('name', 255).notNullable();
    t.text('pages', 'longtext').notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'seq'], 'workflow_templates_org_seq');
  });

  await knex.schema.createTable('workflow_runs', (t) => {
    // seq orders the list (newest first) and drives keyset pagination; id is the public name.
    t.bigIncrements('seq').primary();
    t.string('id', 36).notNullable().unique();
    t.string('organization_id', 36).notNullable().references('organizations.id');
    t.string('template_id', 36).notNullable().references('workflow_templates.id');
    t.string('workflow_name', 255).notNullable();
    t.string('status', 16).notNullable();
    t.integer('current_step_index').nullable();
    t.string('current_step_name', 255).nullable();
    // ASSIGNEE_COLUMN in src/config.ts: MAX_ASSIGNEE_LENGTH can never exceed this width.
    t.string('current_step_assignee', 255).nullable();
    t.datetime('current_step_due_date', { precision: 3 }).nullable();
    t.text('run_json', 'longtext').notNullable();
    // requested_seq counts accepted changes (start, each step completion), applied_seq those
    // a worker has applied. A worker moves a run only from applied_seq = n to n + 1.
    t.integer('requested_seq').unsigned().notNullable();
    t.integer('applied_seq').unsigned().notNullable();
    // Set while a change waits for a worker; the reconciler scans this index.
    t.datetime('pending_since', { precision: 3 }).nullable();
    t.datetime('last_activity', { precision: 3 }).notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'seq'], 'workflow_runs_org_seq');
    t.index(['pending_since'], 'workflow_runs_pending_since');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('workflow_runs');
  await knex.schema.dropTable('workflow_templates');
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('organizations');
}
