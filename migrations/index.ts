// The migrations, in order. Listing them here (rather than scanning a folder) makes them
// load the same way from source, from the build output and inside the container image.
import type { Knex } from 'knex';
import * as createSchema from './20261121000000_create_schema.js';
import * as runEvents from './20261122000000_run_events_and_lifecycle.js';
import * as webhooks from './20261123000000_webhooks.js';
import * as selfService from './20261124000000_self_service.js';
import * as fairShare from './20261125000000_fair_share.js';
import * as labelsAndBulkActions from './20261125010000_labels_and_bulk_actions.js';
import * as retention from './20261125020000_retention.js';
import * as eventStream from './20261125030000_event_stream.js';
import * as webhookTurns from './20261126000000_webhook_turns.js';
import * as webhookOwedIndex from './20261127000000_webhook_owed_index.js';
import * as organizationTimeZone from './20261127100000_organization_time_zone.js';
import * as templateRules from './20261127110000_template_rules.js';
import * as stepWake from './20261128000000_step_wake.js';
import * as taskInbox from './20261128010000_task_inbox.js';
import * as bulkMigration from './20261129000000_bulk_migration.js';
import * as schedules from './20261130000000_schedules.js';
import * as insights from './20261201000000_insights.js';
import * as insightDays from './20261202000000_insight_days.js';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const migrations: Record<string, Migration> = {
  '20261121000000_create_schema': createSchema,
  '20261122000000_run_events_and_lifecycle': runEvents,
  '20261123000000_webhooks': webhooks,
  '20261124000000_self_service': selfService,
  '20261125000000_fair_share': fairShare,
  '20261125010000_labels_and_bulk_actions': labelsAndBulkActions,
  '20261125020000_retention': retention,
  '20261125030000_event_stream': eventStream,
  '20261126000000_webhook_turns': webhookTurns,
  '20261127000000_webhook_owed_index': webhookOwedIndex,
  '20261127100000_organization_time_zone': organizationTimeZone,
  '20261127110000_template_rules': templateRules,
  '20261128000000_step_wake': stepWake,
  '20261128010000_task_inbox': taskInbox,
  '20261129000000_bulk_migration': bulkMigration,
  '20261130000000_schedules': schedules,
  '20261201000000_insights': insights,
  '20261202000000_insight_days': insightDays,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const migration = migrations[name];
    if (!migration) throw new Error(`unknown migration ${name}`);
    return migration;
  },
};
