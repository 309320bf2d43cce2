// The bulk action endpoints' schemas. A bulk action's `filter` is the runs list's filter: the
// same parameter names, each with the list's own schema (runFilterProperties), so the runs a
// bulk action changes are the runs the list shows for it.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { runFilterProperties } from '../runs/run-filter.js';
import { PLAN_PROPERTIES } from '../run-migration/migration-schemas.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

export const BULK_ACTIONS = ['cancel', 'retry', 'migrate'] as const;
export type BulkActionKind = (typeof BULK_ACTIONS)[number];
export const BULK_STATUSES = ['running', 'completed'] as const;
export type BulkStatus = (typeof BULK_STATUSES)[number];

export function bulkSchemas(limits: Pick<Config, 'maxAssigneeLength'>) {
  const filter = {
    type: 'object',
    additionalProperties: false,
    properties: runFilterProperties(limits),
    description:
      "the runs to change: the list's filter parameters (GET /get-workflow-runs), with the same " +
      'names and values; `label` is an array of key:value. At least one is required',
  } as const;
  const reason = {
    type: 'string',
    minLength: 1,
    maxLength: 1000,
    description: 'kept with the bulk action (and, for a cancel, in each run.cancelled event)',
  } as const;
  return {
    cancelBody: {
      $id: 'BulkCancelWorkflowRunsRequest',
      type: 'object',
      additionalProperties: false,
      properties: { filter, reason },
    },
    retryBody: {
      $id: 'BulkRetryWorkflowRunsRequest',
      type: 'object',
      additionalProperties: false,
      properties: { filter, reason },
    },
    migrateBody: {
      $id: 'BulkMigrateWorkflowRunsRequest',
      type: 'object',
      additionalProperties: false,
      required: ['filter', 'from_version', 'to_version'],
      properties: {
        filter: {
          ...filter,
          description:
            "the runs to move: the list's filter parameters (GET /get-workflow-runs), with " +
            'template_id required; only those using from_version are moved',
        },
        from_version: {
          type: 'integer',
          minimum: 1,
          description: 'the version the runs use now (the plan maps its pages)',
        },
        ...PLAN_PROPERTIES,
        dry_run: {
          type: 'boolean',
          description:
            'count the runs that would move and those that would not, by refusal code, and change nothing',
        },
      },
    },
    getQuery: {
      $id: 'GetBulkActionQuery',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
    },
    filter,
  } as const;
}

type Schemas = ReturnType<typeof bulkSchemas>;
export type BulkActionBody = FromSchema<Schemas['cancelBody']>;
export type BulkMigrateBody = FromSchema<Schemas['migrateBody']>;

/** A bulk migration's plan, as a bulk action keeps it and shows it. */
export const BulkMigrationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['fromVersion', 'toVersion'],
  properties: {
    fromVersion: { type: 'integer', minimum: 1 },
    toVersion: { type: 'integer', minimum: 1 },
    pageMap: {
      type: 'object',
      additionalProperties: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      description: 'the page_map as given',
    },
    dropIncompatible: { type: 'boolean' },
  },
} as const;
export type BulkMigration = FromSchema<typeof BulkMigrationSchema>;

/** A bulk action as clients read it. */
export const BulkActionSchema = {
  $id: 'BulkAction',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'action', 'status', 'filter', 'matched', 'done', 'skipped', 'startedAt'],
  properties: {
    id: { type: 'string' },
    action: { type: 'string', enum: BULK_ACTIONS },
    status: {
      type: 'string',
      enum: BULK_STATUSES,
      description: 'running until every matching run was handled, then completed',
    },
    filter: { type: 'object', description: 'the filter as given' },
    reason: { type: 'string' },
    migration: { ...BulkMigrationSchema, description: 'a bulk migration: its plan' },
    dryRun: {
      type: 'boolean',
      const: true,
      description: 'a dry run: `done` counts the runs that would move; nothing was changed',
    },
    matched: {
      type: 'integer',
      minimum: 0,
      description: 'runs found by the filter so far (all of them once completed)',
    },
    done: {
      type: 'integer',
      minimum: 0,
      description: 'runs cancelled, retried or moved (in a dry run: that would move)',
    },
    skipped: {
      type: 'object',
      additionalProperties: { type: 'integer', minimum: 1 },
      description:
        'runs matched but left alone, counted by the code a single cancel, retry or migration ' +
        'of it would have been refused with (run_not_cancellable: it had ended; ' +
        'run_not_retryable: it was not failed, or held no failed change; a migration: ' +
        'run_not_migratable, migration_step_unmapped, migration_incompatible_value, ' +
        'completion_pending)',
    },
    startedAt: dateTime,
    finishedAt: dateTime,
  },
} as const;

export type BulkActionView = FromSchema<typeof BulkActionSchema>;
