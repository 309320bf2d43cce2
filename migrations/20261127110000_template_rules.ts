import type { Knex } from 'knex';

// A template version's rules (JSON, templates/definition/rules.ts), beside its pages: NULL for
// a version without rules, as every version saved before rules existed is.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_template_versions', (t) => {
    t.text('rules', 'longtext').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_template_versions', (t) => {
    t.dropColumn('rules');
  });
}
