// The bulk action endpoints' schemas. A bulk action's `filter` is the runs list's filter: the
// same parameter names, each with the list's own schema (runFilterProperties), so the runs a
// bulk action changes are the runs the list shows for it.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { runFilterProperties } from '../runs/run-filter.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

export const BULK_ACTIONS = ['cancel', 'retry'] as const;
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
    matched: {
      type: 'integer',
      minimum: 0,
      description: 'runs found by the filter so far (all of them once completed)',
    },
    done: { type: 'integer', minimum: 0, description: 'runs cancelled (or retried)' },
    skipped: {
      type: 'object',
      additionalProperties: { type: 'integer', minimum: 1 },
      description:
        'runs matched but left alone, counted by the code a single cancel or retry of it would ' +
        'have been refused with (run_not_cancellable: it had ended; run_not_retryable: it was ' +
        'not failed, or held no failed change)',
    },
    startedAt: dateTime,
    finishedAt: dateTime,
  },
} as const;

export type BulkActionView = FromSchema<typeof BulkActionSchema>;
