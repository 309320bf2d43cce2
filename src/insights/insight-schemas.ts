// The insights endpoint's query and its answer, named, built once per process from the
// configured limits; the TypeScript types are derived from the schemas.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { unnamed } from '../lib/unnamed.js';
import { LABEL_KEY_PATTERN, MAX_LABEL_VALUE } from '../runs/run-labels.js';
import { RELATIVE_ACCURACY } from './duration-sketch.js';
import { BUCKET_UNITS } from './insight-buckets.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

/** More buckets than this in one answer are refused (400 naming `bucket`). */
export const MAX_BUCKETS = 500;

export function insightSchemas(limits: Pick<Config, 'maxAssigneeLength'>) {
  return {
    query: {
      $id: 'GetRunInsightsQuery',
      type: 'object',
      additionalProperties: false,
      properties: {
        template_id: {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          description: "one template's runs; absent: every template of the organization",
        },
        template_version: {
          type: 'integer',
          minimum: 1,
          description: 'with template_id: the runs at this version of the template',
        },
        from: {
          ...dateTime,
          description:
            "the range's start, moved back to the start of its bucket; default: to less 2 days (hour), 30 days (day) or 26 weeks (week)",
        },
        to: {
          ...dateTime,
          description: "the range's end, moved on to the end of its bucket; default: now",
        },
        bucket: {
          type: 'string',
          enum: BUCKET_UNITS,
          description: `hours, days or weeks (from Monday) of the organization's time zone; default day; at most ${MAX_BUCKETS} in the range`,
        },
        label: {
          type: 'string',
          pattern: `^${LABEL_KEY_PATTERN.slice(1, -1)}:[\\s\\S]{0,${MAX_LABEL_VALUE}}$`,
          description: 'key:value: the runs with this label',
        },
        assignee: {
          type: 'string',
          minLength: 1,
          maxLength: limits.maxAssigneeLength,
          description:
            "the steps this user held when they ended (steps) or holds now (open); the run figures (buckets, timeToComplete) stay every run's. Not with label",
        },
      },
    },
  } as const;
}

export type InsightsQuery = FromSchema<ReturnType<typeof insightSchemas>['query']>;

const count = { type: 'integer', minimum: 0 } as const;
const ms = (what: string) =>
  ({
    type: ['number', 'null'],
    minimum: 0,
    description: `${what} (ms); null when count is 0`,
  }) as const;

export const DurationSchema = {
  $id: 'InsightDuration',
  type: 'object',
  additionalProperties: false,
  required: ['count', 'p50Ms', 'p90Ms', 'maxMs'],
  description: `durations in milliseconds: the median and 90th percentile within ${RELATIVE_ACCURACY * 100}% of the exact ones (DDSketch), the maximum exact`,
  properties: {
    count,
    p50Ms: ms('the median'),
    p90Ms: ms('the 90th percentile'),
    maxMs: ms('the longest'),
  },
} as const;

const duration = unnamed(DurationSchema);

export const RunInsightsSchema = {
  $id: 'RunInsights',
  type: 'object',
  additionalProperties: false,
  required: [
    'templateId',
    'templateVersion',
    'timeZone',
    'bucket',
    'from',
    'to',
    'asOf',
    'lagMs',
    'buckets',
    'timeToComplete',
    'steps',
    'open',
  ],
  properties: {
    templateId: { type: ['string', 'null'] },
    templateVersion: { type: ['integer', 'null'], minimum: 1 },
    timeZone: { type: 'string', description: "the organization's time zone: the buckets' clock" },
    bucket: { type: 'string', enum: BUCKET_UNITS },
    from: { ...dateTime, description: 'the start of the first bucket' },
    to: { ...dateTime, description: 'the end of the last bucket' },
    asOf: {
      ...dateTime,
      description:
        'the figures hold every change committed before about this time (the rollups are folded from the history behind a cursor)',
    },
    lagMs: { ...count, description: 'now less asOf: 0 once caught up' },
    buckets: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['start', 'end', 'created', 'completed', 'failed', 'cancelled', 'timeToComplete'],
        properties: {
          start: dateTime,
          end: dateTime,
          created: { ...count, description: 'runs created in the bucket' },
          completed: { ...count, description: 'runs completed in the bucket' },
          failed: { ...count, description: 'runs that failed in the bucket' },
          cancelled: { ...count, description: 'runs cancelled in the bucket' },
          timeToComplete: {
            ...duration,
            description: 'creation to completion of the runs completed in the bucket',
          },
        },
      },
    },
    timeToComplete: {
      ...duration,
      description: 'creation to completion of the runs completed in the range',
    },
    steps: {
      type: 'array',
      description:
        'each step (a page, by name) of a template, with what happened to it in the range',
      items: {
        type: 'object',
        additionalProperties: false,
        required: [
          'templateId',
          'step',
          'completed',
          'late',
          'rejected',
          'skipped',
          'reopened',
          'activeTime',
        ],
        properties: {
          templateId: { type: 'string' },
          step: { type: 'string' },
          completed: { ...count, description: 'times the step was done (completed or approved)' },
          late: { ...count, description: 'of those, done after its due date' },
          rejected: { ...count, description: 'times an approval step was rejected' },
          skipped: { ...count, description: "times a template's rule passed over it" },
          reopened: { ...count, description: 'times a rejection sent a run back over it' },
          activeTime: {
            ...duration,
            description: 'from becoming current to being done or rejected',
          },
        },
      },
    },
    open: {
      type: 'object',
      additionalProperties: false,
      required: ['runs', 'pending', 'overdue', 'steps'],
      description: 'the open runs now (as of asOf)',
      properties: {
        runs: { ...count, description: 'pending and active runs' },
        pending: { ...count, description: 'runs waiting to start' },
        overdue: { ...count, description: 'active runs whose step is overdue' },
        steps: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['templateId', 'step', 'runs', 'overdue'],
            properties: {
              templateId: { type: 'string' },
              step: { type: 'string' },
              runs: { ...count, description: 'active runs at this step' },
              overdue: { ...count, description: 'of those, overdue' },
            },
          },
        },
      },
    },
  },
} as const;

export type RunInsights = FromSchema<typeof RunInsightsSchema>;
export type InsightDuration = FromSchema<typeof DurationSchema>;
