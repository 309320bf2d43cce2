// The schedule endpoints' schemas: requests (bodies and queries) and answers, each named. A
// schedule holds what its runs are created with (a create-workflow-run's fields) and its
// cadence: a 5-field cron expression or an interval, a time zone, bounds, the overlap rule and
// the catch-up window.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';
import { LABELS_SCHEMA } from '../runs/run-labels.js';
import { unnamed } from '../lib/unnamed.js';
import { MIN_INTERVAL_SECONDS } from './cadence.js';
import { OVERLAP_POLICIES, SKIP_REASONS } from './schedule-firing.js';

const ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const orNull = <const S extends object>(schema: S) =>
  ({ anyOf: [schema, { type: 'null' }] }) as const;

export const SCHEDULE_STATES = ['active', 'paused'] as const;
export type ScheduleState = (typeof SCHEDULE_STATES)[number];
/** A year: the longest interval and catch-up window. */
const YEAR_SECONDS = 365 * 24 * 3600;
/** The most scheduled times one backfill may cover. */
export const BACKFILL_LIMIT = 1000;

type Limits = Pick<
  Config,
  'maxInputFields' | 'maxFieldLength' | 'maxAssigneeLength' | 'listDefaultLimit' | 'listMaxLimit'
>;

export function scheduleSchemas(limits: Limits) {
  const stringMap = (maxValue: number, minValue = 0) =>
    ({
      type: 'object',
      maxProperties: limits.maxInputFields,
      propertyNames: { type: 'string', minLength: 1, maxLength: 255 },
      additionalProperties: { type: 'string', minLength: minValue, maxLength: maxValue },
    }) as const;
  const runFields = {
    input_fields: { ...stringMap(limits.maxFieldLength), description: "each run's input values" },
    user_assignments: {
      ...stringMap(limits.maxAssigneeLength, 1),
      description: "each run's assignee of a page",
    },
    labels: LABELS_SCHEMA,
  } as const;
  const cadence = {
    cron: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description:
        'a cron expression of 5 fields (minute hour day-of-month month day-of-week), read in time_zone',
      example: '0 9 * * 1-5',
    },
    interval_seconds: {
      type: 'integer',
      minimum: MIN_INTERVAL_SECONDS,
      maximum: YEAR_SECONDS,
      description: 'or a run every this many seconds (at least 60), counted from start_at',
    },
    time_zone: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: "an IANA time zone; the organization's when left out",
      example: 'Europe/Berlin',
    },
    overlap: {
      type: 'string',
      enum: OVERLAP_POLICIES,
      description:
        'when a time comes while the previous run is still pending or active: skip it (the default), hold one until the previous run ends (buffer_one), or fire anyway (allow_all)',
    },
    catchup_window_seconds: {
      type: 'integer',
      minimum: 0,
      maximum: YEAR_SECONDS,
      description:
        'after downtime, missed times this recent still fire (in order); older ones are skipped (default 3600)',
    },
  } as const;
  return {
    createBody: {
      $id: 'CreateWorkflowScheduleRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_template_id'],
      properties: {
        workflow_template_id: ID,
        workflow_template_version: {
          type: 'integer',
          minimum: 1,
          description: "a version to pin; the template's latest at each firing when left out",
        },
        ...runFields,
        ...cadence,
        start_at: { ...dateTime, description: 'no time before this' },
        end_at: { ...dateTime, description: 'no time after this' },
        paused: { type: 'boolean', description: 'created paused' },
        note: { type: 'string', minLength: 1, maxLength: 1000, description: 'why it is paused' },
      },
    },
    updateBody: {
      $id: 'UpdateWorkflowScheduleRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: ID,
        workflow_template_version: {
          ...orNull({ type: 'integer', minimum: 1 }),
          description: 'a version to pin, or null for the latest',
        },
        ...runFields,
        ...cadence,
        start_at: { ...orNull(dateTime), description: 'no time before this; null: none' },
        end_at: { ...orNull(dateTime), description: 'no time after this; null: none' },
      },
    },
    noteBody: {
      $id: 'WorkflowScheduleNoteRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: ID,
        note: {
          type: 'string',
          minLength: 1,
          maxLength: 1000,
          description: 'kept with the change',
        },
      },
    },
    idBody: {
      $id: 'WorkflowScheduleIdRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: ID },
    },
    triggerBody: {
      $id: 'TriggerWorkflowScheduleRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: ID,
        overlap: {
          type: 'string',
          enum: OVERLAP_POLICIES,
          description: "the overlap rule for this run; the schedule's when left out",
        },
      },
    },
    backfillBody: {
      $id: 'BackfillWorkflowScheduleRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id', 'from', 'to'],
      properties: {
        id: ID,
        from: { ...dateTime, description: 'the first scheduled time to fire (inclusive)' },
        to: { ...dateTime, description: 'the last (inclusive); at most 1,000 times between' },
        overlap: {
          type: 'string',
          enum: OVERLAP_POLICIES,
          description: "the overlap rule for these runs; the schedule's when left out",
        },
      },
    },
    getQuery: {
      $id: 'GetWorkflowScheduleQuery',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: ID },
    },
    listQuery: {
      $id: 'GetWorkflowSchedulesQuery',
      type: 'object',
      additionalProperties: false,
      properties: {
        ...pageQueryProperties(limits),
        template_id: ID,
        state: { type: 'string', enum: SCHEDULE_STATES },
      },
    },
    historyQuery: {
      $id: 'GetWorkflowScheduleHistoryQuery',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { ...pageQueryProperties(limits), id: ID },
    },
  } as const;
}

type Schemas = ReturnType<typeof scheduleSchemas>;
export type CreateScheduleBody = FromSchema<Schemas['createBody']>;
export type UpdateScheduleBody = FromSchema<Schemas['updateBody']>;
export type ScheduleNoteBody = FromSchema<Schemas['noteBody']>;
export type TriggerScheduleBody = FromSchema<Schemas['triggerBody']>;
export type BackfillScheduleBody = FromSchema<Schemas['backfillBody']>;
export type ScheduleListQuery = FromSchema<Schemas['listQuery']>;
export type ScheduleHistoryQuery = FromSchema<Schemas['historyQuery']>;

/** One scheduled time and what happened at it: the schedule's history. */
export const ScheduleFireSchema = {
  $id: 'ScheduleFire',
  type: 'object',
  additionalProperties: false,
  required: ['scheduledFor', 'kind', 'outcome', 'at'],
  properties: {
    scheduledFor: dateTime,
    kind: {
      type: 'string',
      enum: ['cadence', 'trigger', 'backfill'],
      description:
        'what asked for it: the cadence, trigger-workflow-schedule, backfill-workflow-schedule',
    },
    outcome: {
      type: 'string',
      enum: ['fired', 'skipped', 'buffered'],
      description:
        'fired: its run was created; buffered: held until the previous run ends (then fired); skipped: see reason',
    },
    reason: {
      type: 'string',
      enum: SKIP_REASONS,
      description:
        "a skip's: overlap (the previous run still open), catchup_window (missed too long ago), paused, template_unavailable (archived, or its pinned version gone)",
    },
    missed: {
      type: 'integer',
      minimum: 2,
      description: 'a skip record for several times (catch-up, a pause): how many',
    },
    until: { ...dateTime, description: 'the last of those times' },
    runId: { type: 'string', description: 'the run it created' },
    at: { ...dateTime, description: 'when it was recorded' },
  },
} as const;
export type ScheduleFireView = FromSchema<typeof ScheduleFireSchema>;

export const WorkflowScheduleSchema = {
  $id: 'WorkflowSchedule',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'templateId',
    'inputFields',
    'userAssignments',
    'labels',
    'timeZone',
    'overlap',
    'catchupWindowSeconds',
    'state',
    'nextTimes',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string' },
    templateId: { type: 'string' },
    templateVersion: { type: 'integer', minimum: 1, description: 'the pinned version, if any' },
    inputFields: { type: 'object', additionalProperties: { type: 'string' } },
    userAssignments: { type: 'object', additionalProperties: { type: 'string' } },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    cron: { type: 'string' },
    intervalSeconds: { type: 'integer', minimum: MIN_INTERVAL_SECONDS },
    timeZone: { type: 'string' },
    startAt: dateTime,
    endAt: dateTime,
    overlap: { type: 'string', enum: OVERLAP_POLICIES },
    catchupWindowSeconds: { type: 'integer', minimum: 0 },
    state: { type: 'string', enum: SCHEDULE_STATES },
    note: { type: 'string', description: 'the note of the last pause or resume' },
    nextTimes: {
      type: 'array',
      items: dateTime,
      maxItems: 5,
      description: 'its next five times (none while paused, or once its cadence has ended)',
    },
    lastFire: { ...unnamed(ScheduleFireSchema), description: 'its latest record' },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
} as const;
export type WorkflowScheduleView = FromSchema<typeof WorkflowScheduleSchema>;

export const ScheduleDeletedSchema = {
  $id: 'WorkflowScheduleDeleted',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'deleted'],
  properties: { id: { type: 'string' }, deleted: { type: 'boolean', const: true } },
} as const;

export const BackfillResultSchema = {
  $id: 'WorkflowScheduleBackfill',
  type: 'object',
  additionalProperties: false,
  required: ['times', 'fired', 'skipped', 'alreadyRecorded'],
  properties: {
    times: { type: 'integer', minimum: 0, description: 'scheduled times in the range' },
    fired: { type: 'integer', minimum: 0, description: 'runs created' },
    buffered: { type: 'integer', minimum: 0, description: 'a time held (buffer_one)' },
    skipped: {
      type: 'object',
      additionalProperties: { type: 'integer', minimum: 1 },
      description: 'times skipped, by reason',
    },
    alreadyRecorded: {
      type: 'integer',
      minimum: 0,
      description: 'times that had a record already (fired or skipped before): left as they were',
    },
  },
} as const;
export type BackfillResultView = FromSchema<typeof BackfillResultSchema>;
