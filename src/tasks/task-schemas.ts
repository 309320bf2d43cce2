// The inbox's query and its answer, named, built once per process from the configured limits;
// the TypeScript type of the query is derived from its schema.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';
import { LABEL_FILTER_SCHEMA } from '../runs/run-labels.js';
import { PAGE_KINDS } from '../templates/definition/definition-types.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

export function taskSchemas(
  limits: Pick<Config, 'maxAssigneeLength' | 'listDefaultLimit' | 'listMaxLimit'>,
) {
  const person = { type: 'string', minLength: 1, maxLength: limits.maxAssigneeLength } as const;
  return {
    listQuery: {
      $id: 'GetTasksQuery',
      type: 'object',
      additionalProperties: false,
      properties: {
        ...pageQueryProperties(limits),
        assignee: { ...person, description: 'tasks held by this user' },
        claimable_by: {
          ...person,
          description:
            'unclaimed tasks this user may claim: as one of their candidate users, or through a `group`',
        },
        group: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: person,
          description: 'with claimable_by: a group the user is in (repeat it for each)',
        },
        unassigned: { type: 'boolean', description: 'true: tasks nobody holds; false: held ones' },
        overdue: { type: 'boolean', description: 'whether the task is overdue' },
        due_before: { ...dateTime, description: 'tasks due before this time' },
        due_after: { ...dateTime, description: 'tasks due after this time' },
        template_id: { type: 'string', minLength: 1, maxLength: 64 },
        kind: { type: 'string', enum: PAGE_KINDS, description: 'step or approval' },
        label: LABEL_FILTER_SCHEMA,
        order: {
          type: 'string',
          enum: ['due', 'started'],
          description:
            'due (the default): by due date, tasks without one last, then by start; started: by start alone',
        },
      },
    },
  } as const;
}

export type TaskListQuery = FromSchema<ReturnType<typeof taskSchemas>['listQuery']>;

/** One task: an active run's current step, with what a person deciding to take it needs. */
export const TaskSchema = {
  $id: 'Task',
  type: 'object',
  additionalProperties: false,
  required: [
    'runId',
    'workflowName',
    'templateId',
    'step',
    'kind',
    'candidateUsers',
    'candidateGroups',
    'overdue',
    'startedAt',
    'labels',
  ],
  properties: {
    runId: { type: 'string' },
    workflowName: { type: 'string' },
    templateId: { type: 'string' },
    step: { type: 'string', description: 'the current step of the run (a page name)' },
    kind: { type: 'string', enum: PAGE_KINDS },
    assignee: { type: 'string', description: 'who holds the task; absent while nobody does' },
    candidateUsers: { type: 'array', items: { type: 'string' } },
    candidateGroups: { type: 'array', items: { type: 'string' } },
    dueDate: dateTime,
    overdue: { type: 'boolean' },
    startedAt: { ...dateTime, description: 'when the step began' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

export type Task = FromSchema<typeof TaskSchema>;
