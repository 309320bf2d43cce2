// The run endpoints' schemas: requests (bodies and queries) and responses, each named, built
// once per process from the configured limits. The TypeScript types of the requests are
// derived from these objects, so the two cannot drift.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';

type Limits = Pick<
  Config,
  'maxInputFields' | 'maxFieldLength' | 'maxAssigneeLength' | 'listDefaultLimit' | 'listMaxLimit'
>;

const RUN_ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
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
  return {
    createBody: {
      $id: 'CreateWorkflowRunRequest',
      type: 'object',
      additionalProperties: false,
      required: ['workflow_template_id', 'input_fields'],
      properties: {
        workflow_template_id: { type: 'string', minLength: 1, maxLength: 64 },
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
      },
    },
    listQuery: {
      $id: 'GetWorkflowRunsQuery',
      type: 'object',
      additionalProperties: false,
      properties: pageQueryProperties(limits),
    },
  } as const;
}

type Schemas = ReturnType<typeof runSchemas>;
export type CreateRunBody = FromSchema<Schemas['createBody']>;
export type CompleteStepBody = FromSchema<Schemas['completeBody']>;
export type ListRunsQuery = FromSchema<Schemas['listQuery']>;

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
    status: { type: 'string', enum: ['pending', 'active', 'completed', 'failed'] },
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
    status: { type: 'string', enum: ['pending', 'active', 'completed', 'failed'] },
  },
} as const;

export type RunSummary = FromSchema<typeof WorkflowRunSummarySchema>;
