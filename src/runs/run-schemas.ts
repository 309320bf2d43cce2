// The run endpoints' schemas: requests (bodies and queries) and responses, each named, built
// once per process from the configured limits. The TypeScript types of the requests are
// derived from these objects, so the two cannot drift.
import { ActorSchema } from '../audit/actor.js';
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';
import { RUN_EVENT_TYPES } from './run-events.js';
import { RUN_STATUSES, STEP_STATUSES, type RunStatus } from './run-status.js';
import {
  DECISIONS,
  FIELD_TYPES,
  PAGE_KINDS,
  TEMPLATE_LIMITS,
} from '../templates/definition/definition-types.js';
import { runFilterProperties } from './run-filter.js';
import { LABELS_SCHEMA } from './run-labels.js';

type Limits = Pick<
  Config,
  'maxInputFields' | 'maxFieldLength' | 'maxAssigneeLength' | 'listDefaultLimit' | 'listMaxLimit'
>;

const RUN_ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
const STEP_NAME = { type: 'string', minLength: 1, maxLength: 255 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

function stringMap(limits: Limits, minValueLength: number, maxValueLength: number) {
  return {
    type: 'object',
    maxProperties: limits.maxInputFields,
    propertyNames: { type: 'string', minLength: 1, maxLength: 255 },
    additionalProperties: { type: 'string', minLength: minValueLength, maxLength: maxValueLength },
  } as const;
}

export function runSchemas(limits: Limits) {
  const inputFields = stringMap(limits, 0, limits.maxFieldLength);
  const user = { type: 'string', minLength: 1, maxLength: limits.maxAssigneeLength } as const;
  return {
    createBody: {
      $id: 'CreateWorkflowRunRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_template_id', 'input_fields'],
      properties: {
        workflow_template_id: { type: 'string', minLength: 1, maxLength: 64 },
        workflow_template_version: {
          type: 'integer',
          minimum: 1,
          maximum: 4294967295,
          description:
            'the template version the run uses, from its creation to its end; the latest if left out',
        },
        input_fields: {
          ...inputFields,
          description: "values for the template's input fields, by inputId",
        },
        // An assignee becomes current_step_assignee, whose width bounds MAX_ASSIGNEE_LENGTH
        // (config.ts): a longer one would be accepted here and then never applied by a worker.
        user_assignments: {
          ...stringMap(limits, 1, limits.maxAssigneeLength),
          description: 'page name → user id',
        },
        labels: LABELS_SCHEMA,
      },
    },
    completeBody: {
      $id: 'CompleteWorkflowStepRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_run_id'],
      properties: {
        workflow_run_id: RUN_ID,
        input_fields: {
          ...inputFields,
          description: 'values for fields of the current step',
        },
        step_name: {
          type: 'string',
          minLength: 1,
          maxLength: 255,
          description:
            'the step the caller means to complete; a retried or doubled request then gets 409',
        },
        completed_by: {
          ...user,
          description:
            'the user who did the step (recorded in its event; for an approval, who decided)',
        },
        decision: {
          type: 'string',
          enum: DECISIONS,
          description:
            "an approval step: approved, or rejected (what a rejection does is its page's onReject)",
        },
        comment: {
          type: 'string',
          minLength: 1,
          maxLength: TEMPLATE_LIMITS.commentLength,
          description:
            "an approval step: the decision's comment (a run failed by a rejection keeps it as its error)",
        },
      },
    },
    claimBody: {
      $id: 'ClaimWorkflowStepRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_run_id', 'step_name', 'user_id'],
      properties: {
        workflow_run_id: RUN_ID,
        step_name: { ...STEP_NAME, description: 'the current step' },
        user_id: { ...user, description: 'who takes the step' },
        allow_override: {
          type: 'boolean',
          description:
            'take the step even when someone else holds it (otherwise 409 step_already_claimed)',
        },
      },
    },
    unclaimBody: {
      $id: 'UnclaimWorkflowStepRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_run_id', 'step_name'],
      properties: {
        workflow_run_id: RUN_ID,
        step_name: { ...STEP_NAME, description: 'the current step' },
        user_id: {
          ...user,
          description: 'only if this user holds the step (otherwise 409 step_not_held)',
        },
      },
    },
    assignBody: {
      $id: 'AssignWorkflowStepRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_run_id', 'step_name', 'user_id'],
      properties: {
        workflow_run_id: RUN_ID,
        step_name: { ...STEP_NAME, description: 'the current step' },
        user_id: { ...user, description: 'who is given the step, whoever holds it' },
      },
    },
    cancelBody: {
      $id: 'CancelWorkflowRunRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_run_id'],
      properties: {
        workflow_run_id: RUN_ID,
        reason: {
          type: 'string',
          minLength: 1,
          maxLength: 1000,
          description: 'kept in the history',
        },
      },
    },
    retryBody: {
      $id: 'RetryWorkflowRunRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_run_id'],
      properties: { workflow_run_id: RUN_ID },
    },
    getQuery: {
      $id: 'GetWorkflowRunQuery',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: RUN_ID },
    },
    listQuery: {
      $id: 'GetWorkflowRunsQuery',
      type: 'object',
      additionalProperties: false,
      properties: {
        ...pageQueryProperties(limits),
        ...runFilterProperties(limits),
      },
    },
    countQuery: {
      $id: 'CountWorkflowRunsQuery',
      type: 'object',
      additionalProperties: false,
      properties: runFilterProperties(limits),
    },
  } as const;
}

type Schemas = ReturnType<typeof runSchemas>;
export type CreateRunBody = FromSchema<Schemas['createBody']>;
export type CompleteStepBody = FromSchema<Schemas['completeBody']>;
export type ListRunsQuery = FromSchema<Schemas['listQuery']>;
export type CancelRunBody = FromSchema<Schemas['cancelBody']>;
export type ClaimStepBody = FromSchema<Schemas['claimBody']>;
export type UnclaimStepBody = FromSchema<Schemas['unclaimBody']>;
export type AssignStepBody = FromSchema<Schemas['assignBody']>;
export type RetryRunBody = FromSchema<Schemas['retryBody']>;

/** The WorkflowRun of the spec (snake_case): the answer to create and step requests. */
export const WorkflowRunSchema = {
  $id: 'WorkflowRun',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'organization_id', 'template_id', 'status', 'run_json', 'last_activity'],
  properties: {
    id: { type: 'string' },
    organization_id: { type: 'string' },
    template_id: { type: 'string' },
    status: { type: 'string', enum: RUN_STATUSES },
    run_json: { type: 'object', description: 'the whole run: template snapshot, inputs, steps' },
    last_activity: dateTime,
  },
} as const;

/** The WorkflowRunSummary of the spec (camelCase). A field without a value is left out. */
export const WorkflowRunSummarySchema = {
  $id: 'WorkflowRunSummary',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'lastActivity', 'workflowName', 'status'],
  properties: {
    id: { type: 'string' },
    lastActivity: dateTime,
    workflowName: { type: 'string' },
    currentStepAssignee: { type: 'string' },
    currentStepDueDate: dateTime,
    currentStepName: { type: 'string' },
    status: { type: 'string', enum: RUN_STATUSES },
  },
} as const;

export type RunSummary = FromSchema<typeof WorkflowRunSummarySchema>;

const ruleIndex = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;

/** One run in full (camelCase, like the list): its steps and its history. */
export const WorkflowRunDetailSchema = {
  $id: 'WorkflowRunDetail',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'templateId',
    'templateVersion',
    'workflowName',
    'status',
    'createdAt',
    'lastActivity',
    'inputFields',
    'userAssignments',
    'labels',
    'steps',
    'history',
  ],
  properties: {
    id: { type: 'string' },
    templateId: { type: 'string' },
    templateVersion: {
      type: 'integer',
      minimum: 1,
      description: 'the template version the run uses, from its creation to its end',
    },
    workflowName: { type: 'string' },
    status: { type: 'string', enum: RUN_STATUSES },
    createdAt: dateTime,
    lastActivity: dateTime,
    currentStepName: { type: 'string' },
    currentStepAssignee: { type: 'string' },
    currentStepDueDate: dateTime,
    scheduleId: { type: 'string', description: 'the schedule that created the run, if one did' },
    scheduledFor: { ...dateTime, description: 'the scheduled time it was created for' },
    inputFields: { type: 'object', additionalProperties: { type: 'string' } },
    userAssignments: { type: 'object', additionalProperties: { type: 'string' } },
    labels: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'the labels the run was created with (empty when none)',
    },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'status', 'overdue'],
        properties: {
          name: { type: 'string' },
          status: { type: 'string', enum: STEP_STATUSES },
          assignee: { type: 'string' },
          dueDate: dateTime,
          startedAt: dateTime,
          completedAt: dateTime,
          skippedAt: { ...dateTime, description: 'when the run passed over the step (skipped)' },
          overdue: { type: 'boolean' },
          kind: { type: 'string', enum: PAGE_KINDS, description: "its page's kind" },
          candidateUsers: { type: 'array', items: { type: 'string' } },
          candidateGroups: { type: 'array', items: { type: 'string' } },
          completedBy: { type: 'string' },
          decision: { type: 'string', enum: DECISIONS },
          comment: { type: 'string' },
          decidedBy: { type: 'string' },
          decisionDueAt: {
            ...dateTime,
            description: 'when an approval step nobody decided takes its default decision',
          },
          rejections: { type: 'integer', minimum: 0 },
          escalations: {
            type: 'integer',
            minimum: 0,
            description: "how many of its page's escalations this visit of the step has had",
          },
          reopenedAt: { ...dateTime, description: 'when a rejection last opened it again' },
          rules: {
            type: 'object',
            additionalProperties: false,
            description:
              "the template's rules (by index) that decided the step; absent when none did",
            properties: {
              shownBy: ruleIndex('showed its page'),
              hiddenBy: ruleIndex('hid its page'),
              notShownBy: ruleIndex('would show its page, and no rule did: so it was skipped'),
              dueBy: ruleIndex('set its due time'),
              assignedBy: ruleIndex('chose its assignee'),
            },
          },
        },
      },
    },
    fields: {
      type: 'array',
      description:
        "every input field of the run's template, in page order, with its type and the run's value (absent when it has none); present when the template's fields declare types",
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['inputId', 'fieldName', 'page', 'type'],
        properties: {
          inputId: { type: 'string' },
          fieldName: { type: 'string' },
          page: { type: 'string' },
          type: { type: 'string', enum: FIELD_TYPES },
          value: { type: 'string' },
        },
      },
    },
    history: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['seq', 'type', 'at', 'data'],
        properties: {
          seq: { type: 'integer', minimum: 1 },
          type: { type: 'string', enum: RUN_EVENT_TYPES },
          at: dateTime,
          data: { type: 'object' },
          actor: {
            ...ActorSchema,
            description: `${ActorSchema.description}; absent for events recorded before actors were`,
          },
        },
      },
    },
    error: {
      type: 'object',
      additionalProperties: false,
      required: ['message', 'at'],
      properties: { message: { type: 'string' }, at: dateTime },
    },
  },
} as const;

export type WorkflowRunDetail = FromSchema<typeof WorkflowRunDetailSchema>;

const statusCounts = {
  type: 'object',
  additionalProperties: false,
  required: RUN_STATUSES,
  properties: Object.fromEntries(
    RUN_STATUSES.map((status) => [status, { type: 'integer', minimum: 0 }]),
  ) as Record<RunStatus, { type: 'integer'; minimum: 0 }>,
} as const;

export const WorkflowRunCountsSchema = {
  $id: 'WorkflowRunCounts',
  type: 'object',
  additionalProperties: false,
  required: ['byStatus', 'total', 'limit', 'exceeded'],
  properties: {
    byStatus: {
      ...statusCounts,
      description: 'matching runs of each status, each counted up to `limit`',
    },
    total: { type: 'integer', minimum: 0, description: 'the sum of byStatus' },
    limit: { type: 'integer', minimum: 1, description: 'the most a status is counted to' },
    exceeded: {
      type: 'array',
      items: { type: 'string', enum: RUN_STATUSES },
      description: 'the statuses with more matching runs than `limit` (counted as `limit`)',
    },
  },
} as const;
