// The schemas of run deletion and of the organization's settings: requests and answers, each
// named; the request types are derived from them.
import type { FromSchema } from 'json-schema-to-ts';
import { MAX_RETENTION_DAYS } from '../config.js';

const RUN_ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
const DAYS = { type: 'integer', minimum: 1, maximum: MAX_RETENTION_DAYS } as const;
const TIME_ZONE = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const retentionSchemas = {
  deleteBody: {
    $id: 'DeleteWorkflowRunRequest',
    type: 'object',
    additionalProperties: false,
    required: ['workflow_run_id'],
    properties: { workflow_run_id: RUN_ID },
  },
  updateSettingsBody: {
    $id: 'UpdateOrganizationSettingsRequest',
    type: 'object',
    description:
      'the settings to change, at least one; a setting left out stays as it is, "default" sets it back to its default',
    additionalProperties: false,
    required: [],
    minProperties: 1,
    properties: {
      run_retention_days: {
        description: `days a finished run (completed, failed, cancelled) is kept, 1 to ${MAX_RETENTION_DAYS}; "default" for the operator's default (RUN_RETENTION_DAYS)`,
        anyOf: [DAYS, { type: 'string', const: 'default' }],
      },
      time_zone: {
        ...TIME_ZONE,
        description:
          'the IANA time zone in which due times count days and business days (e.g. "Europe/Berlin"); "default" for UTC. A name this service does not know is refused (invalid_time_zone)',
        example: 'Europe/Berlin',
      },
    },
  },
} as const;

export type DeleteRunBody = FromSchema<(typeof retentionSchemas)['deleteBody']>;
export type UpdateSettingsBody = FromSchema<(typeof retentionSchemas)['updateSettingsBody']>;

/** The answer to a deletion: the run is gone. */
export const WorkflowRunDeletedSchema = {
  $id: 'WorkflowRunDeleted',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'deleted'],
  properties: { id: { type: 'string' }, deleted: { type: 'boolean', const: true } },
} as const;

/** The organization's settings; a value that may be absent is not set (see each description). */
export const OrganizationSettingsSchema = {
  $id: 'OrganizationSettings',
  type: 'object',
  additionalProperties: false,
  required: ['timeZone'],
  properties: {
    timeZone: {
      ...TIME_ZONE,
      description:
        "the organization's IANA time zone, in which due times count days and business days; UTC unless set",
      example: 'Europe/Berlin',
    },
    runRetentionDays: {
      ...DAYS,
      description: "the organization's own retention of finished runs; absent: the default",
    },
    defaultRunRetentionDays: {
      ...DAYS,
      description: "the operator's default (RUN_RETENTION_DAYS); absent: kept forever",
    },
    effectiveRunRetentionDays: {
      ...DAYS,
      description: 'the retention that applies; absent: finished runs are kept forever',
    },
  },
} as const;

export type OrganizationSettingsView = FromSchema<typeof OrganizationSettingsSchema>;
