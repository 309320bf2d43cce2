// The migration endpoints' schemas: moving one run onto another version of its template, and
// moving the runs a filter matches (a bulk action). The plan's parts (to_version, page_map,
// drop_incompatible, dry_run) are one set of schemas, used by both.
import type { FromSchema } from 'json-schema-to-ts';
import { RUN_EVENT_DATA } from '../runs/run-events.js';
import { WorkflowRunSchema } from '../runs/run-schemas.js';
import { TEMPLATE_LIMITS } from '../templates/definition/definition-types.js';
import { unnamed } from '../lib/unnamed.js';

const version = { type: 'integer', minimum: 1 } as const;

/** The plan's parts, as both endpoints take them. */
export const PLAN_PROPERTIES = {
  to_version: { ...version, description: 'the version of the template to move onto' },
  page_map: {
    type: 'object',
    maxProperties: TEMPLATE_LIMITS.pages,
    propertyNames: { type: 'string', minLength: 1, maxLength: 255 },
    additionalProperties: {
      anyOf: [{ type: 'string', minLength: 1, maxLength: 255 }, { type: 'null' }],
    },
    description:
      "a page of the run's version to the target page it maps to (null: to none); the pages " +
      'it leaves out map by name',
  },
  drop_incompatible: {
    type: 'boolean',
    description:
      "drop values the target's fields refuse (kept in the run.migrated event) rather than refuse the run",
  },
  dry_run: { type: 'boolean', description: 'answer what would happen, and change nothing' },
} as const;

export const MigrateRunBodySchema = {
  $id: 'MigrateWorkflowRunRequest',
  type: 'object',
  additionalProperties: false,
  required: ['workflow_run_id', 'to_version'],
  properties: {
    workflow_run_id: { type: 'string', minLength: 1, maxLength: 64 },
    ...PLAN_PROPERTIES,
  },
} as const;

export type MigrateRunBody = FromSchema<typeof MigrateRunBodySchema>;

const runSchema = unnamed(WorkflowRunSchema);

/** The answer to a migration: what it did (or would do) and the run after it. */
export const WorkflowRunMigrationSchema = {
  $id: 'WorkflowRunMigration',
  type: 'object',
  additionalProperties: false,
  required: ['dryRun', 'migration', 'run'],
  properties: {
    dryRun: { type: 'boolean', description: 'true: nothing was changed' },
    migration: {
      ...RUN_EVENT_DATA['run.migrated'],
      description: 'what the move did (or would do): the data of its run.migrated event',
    },
    run: {
      ...runSchema,
      description: 'the run as stored after the move (in a dry run: as it would be)',
    },
  },
} as const;
