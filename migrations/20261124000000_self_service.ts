import type { Knex } from 'knex';
import { ALL_SCOPES } from '../src/auth/scopes.js';

// Self-service: templates with immutable versions (the pages of each version kept once, runs
// naming the version they use), API keys with scopes, expiry and rolling, who made each run
// event, and the audit log of administrative changes.
export async function up(knex: Knex): Promise<void> {
  // Each version of a template, never changed once written. Runs read their pages by
  // (template_id, version), so a run keeps the pages and due times it started with.
  await knex.schema.createTable('workflow_template_versions', (t) => {
    t.string('template_id', 36).notNullable();
    t.integer('version').unsigned().notNullable();
    t.string('organization_id', 36).notNullable();
    t.string('name', 255).notNullable();
    t.text('pages', 'longtext').notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    // The actor that saved it (JSON); NULL for versions from before actors were recorded.
    t.string('created_by', 500).nullable();
    t.primary(['template_id', 'version']);
  });
  await knex.raw(
    `INSERT INTO workflow_template_versions
       (template_id, version, organization_id, name, pages, created_at, created_by)
     SELECT id, 1, organization_id, name, pages, created_at, NULL FROM workflow_templates`,
  );
  // The template itself is now its head: which version is the latest, and whether it is
  // archived. Its name and pages are its versions'.
  await knex.schema.alterTable('workflow_templates', (t) => {
    t.integer('latest_version').unsigned().notNullable().defaultTo(1);
    t.boolean('archived').notNullable().defaultTo(false);
    t.datetime('updated_at', { precision: 3 }).nullable();
    t.index(['organization_id', 'archived', 'seq'], 'workflow_templates_org_archived_seq');
  });
  await knex('workflow_templates').update({ updated_at: knex.ref('created_at') });
  await knex.schema.alterTable('workflow_templates', (t) => {
    t.dropColumn('pages');
    t.dropColumn('name');
  });
  await knex.raw('ALTER TABLE workflow_templates MODIFY updated_at DATETIME(3) NOT NULL');

  // Runs from before versions use version 1, which is what they were made from.
  await knex.schema.alterTable('workflow_runs', (t) => {
    t.integer('template_version').unsigned().notNullable().defaultTo(1);
  });

  // Who made each event (JSON, actor.ts); NULL for events from before actors were recorded.
  await knex.schema.alterTable('run_events', (t) => {
    t.string('actor', 500).nullable();
  });

  await knex.schema.alterTable('api_keys', (t) => {
    // A JSON array of scopes (auth/scopes.ts).
    t.text('scopes').nullable();
    t.datetime('expires_at', { precision: 3 }).nullable();
    // Set in batches, at most a minute late (key-store.ts), never by the request itself.
    t.datetime('last_used_at', { precision: 3 }).nullable();
    // When the audit log recorded the key's expiry (the reconciler does, once).
    t.datetime('expiry_recorded_at', { precision: 3 }).nullable();
    // The key a roll made in this one's place.
    t.string('replaced_by', 36).nullable();
    t.string('created_by', 500).nullable();
  });
  // Keys from before scopes existed hold every scope, as keys made by the admin CLI do.
  await knex('api_keys').update({ scopes: JSON.stringify(ALL_SCOPES) });
  await knex.raw('ALTER TABLE api_keys MODIFY scopes TEXT NOT NULL');
  // The keyset order of the key list (ids are random).
  await knex.raw(
    'ALTER TABLE api_keys ADD COLUMN seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE',
  );
  await knex.schema.alterTable('api_keys', (t) => {
    t.index(['organization_id', 'seq'], 'api_keys_org_seq');
    // What the reconciler looks for: keys past their expiry not yet recorded as expired.
    t.index(['expiry_recorded_at', 'expires_at'], 'api_keys_expiry');
  });

  await knex.schema.createTable('audit_log', (t) => {
    // seq: the keyset order of the log, newest first.
    t.bigIncrements('seq').primary();
    t.string('id', 36).notNullable().unique('audit_log_id');
    t.string('organization_id', 36).notNullable();
    t.string('type', 48).notNullable();
    t.datetime('at', { precision: 3 }).notNullable();
    // What the actor filter matches: a key's id, or 'system' / 'admin_cli'.
    t.string('actor_ref', 36).notNullable();
    t.string('actor', 500).notNullable();
    t.string('target_id', 36).notNullable();
    t.text('data').notNullable();
    t.index(['organization_id', 'seq'], 'audit_log_org_seq');
    t.index(['organization_id', 'type', 'seq'], 'audit_log_org_type_seq');
    t.index(['organization_id', 'actor_ref', 'seq'], 'audit_log_org_actor_seq');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_log');
  // Once api_keys_org_seq could serve the foreign key on organization_id, MariaDB dropped the
  // key's own index (on a fresh database; not on one whose index predates it): make sure one
  // is there before that index goes.
  const [ownIndex] = (await knex.raw(
    `SELECT 1 FROM information_schema.STATISTICS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'api_keys'
        AND INDEX_NAME = 'api_keys_organization_id_foreign'`,
  )) as [unknown[]];
  if (ownIndex.length === 0) {
    await knex.schema.alterTable('api_keys', (t) => {
      t.index(['organization_id'], 'api_keys_organization_id_foreign');
    });
  }
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropIndex([], 'api_keys_expiry');
    t.dropIndex([], 'api_keys_org_seq');
  });
  await knex.raw('ALTER TABLE api_keys DROP COLUMN seq');
  await knex.schema.alterTable('api_keys', (t) => {
    for (const c of [
      'scopes',
      'expires_at',
      'last_used_at',
      'expiry_recorded_at',
      'replaced_by',
      'created_by',
    ]) {
      t.dropColumn(c);
    }
  });
  await knex.schema.alterTable('run_events', (t) => t.dropColumn('actor'));
  await knex.schema.alterTable('workflow_runs', (t) => t.dropColumn('template_version'));
  // Each template back to one row holding its latest version's name and pages.
  await knex.schema.alterTable('workflow_templates', (t) => {
    t.string('name', 255).nullable();
    t.text('pages', 'longtext').nullable();
  });
  await knex.raw(
    `UPDATE workflow_templates t JOIN workflow_template_versions v
       ON v.template_id = t.id AND v.version = t.latest_version
     SET t.name = v.name, t.pages = v.pages`,
  );
  await knex.raw('ALTER TABLE workflow_templates MODIFY name VARCHAR(255) NOT NULL');
  await knex.raw('ALTER TABLE workflow_templates MODIFY pages LONGTEXT NOT NULL');
  await knex.schema.alterTable('workflow_templates', (t) => {
    t.dropIndex([], 'workflow_templates_org_archived_seq');
    t.dropColumn('latest_version');
    t.dropColumn('archived');
    t.dropColumn('updated_at');
  });
  await knex.schema.dropTable('workflow_template_versions');
}
