// The runs' filter, in one place for every operation that takes it: the list's query
// (GET /get-workflow-runs) and a bulk action's body (POST /bulk-cancel-workflow-runs, …) use the
// same parameters with the same schemas, and become the same RunFilter (run-list.ts), so the
// runs a bulk action changes are those the list shows for the same filter.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { DomainError, pointer } from '../errors.js';
import { LABEL_FILTER_SCHEMA, parseLabelFilter } from './run-labels.js';
import type { RunFilter } from './run-list.js';
import { RUN_STATUSES, type RunStatus } from './run-status.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

/** The filter's parameters: the list's query names, and a bulk action's `filter` fields. */
export function runFilterProperties(limits: Pick<Config, 'maxAssigneeLength'>) {
  return {
    status: {
      type: 'string',
      pattern: `^(${RUN_STATUSES.join('|')})(,(${RUN_STATUSES.join('|')}))*$`,
      description: `one or several of ${RUN_STATUSES.join(', ')}, comma-separated`,
    },
    template_id: { type: 'string', minLength: 1, maxLength: 64 },
    template_version: {
      type: 'integer',
      minimum: 1,
      description: 'with template_id: the runs using this version of the template',
    },
    step: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'with template_id: the runs whose current step is this page (by name)',
    },
    assignee: {
      type: 'string',
      minLength: 1,
      maxLength: limits.maxAssigneeLength,
      description: 'assignee of the current step',
    },
    overdue: { type: 'boolean', description: 'whether the current step is overdue' },
    updated_after: { ...dateTime, description: 'lastActivity after this time' },
    updated_before: { ...dateTime, description: 'lastActivity before this time' },
    created_after: { ...dateTime, description: 'created after this time' },
    created_before: { ...dateTime, description: 'created before this time' },
    label: LABEL_FILTER_SCHEMA,
    schedule_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'the runs a schedule created',
    },
  } as const;
}

type FilterProperties = ReturnType<typeof runFilterProperties>;

/** The filter's parameters as given (checked against runFilterProperties). */
export type RunFilterInput = FromSchema<{
  type: 'object';
  additionalProperties: false;
  properties: FilterProperties;
}>;

/** The names of the filter's parameters. */
export const RUN_FILTER_NAMES = [
  'status',
  'template_id',
  'template_version',
  'step',
  'assignee',
  'overdue',
  'updated_after',
  'updated_before',
  'created_after',
  'created_before',
  'label',
  'schedule_id',
] as const satisfies ReadonlyArray<keyof FilterProperties>;

/** Where a filter came from: the code of a refusal of its values, and its fields' place. */
export interface FilterSource {
  code: 'invalid_query' | 'invalid_body';
  /** The pointer segments before a parameter's name: none for a query, ['filter'] in a body. */
  at: readonly string[];
}

export const QUERY_FILTER: FilterSource = { code: 'invalid_query', at: [] };

/** A date-time the schema let through whose value is no date ("2026-02-30T00:00:00Z"): a 400. */
export function parseTime(
  value: string | undefined,
  name: string,
  source: FilterSource = QUERY_FILTER,
): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new DomainError(
      source.code,
      `${name} is not a valid date-time`,
      pointer(...source.at, name),
    );
  }
  return date;
}

/** The RunFilter of the parameters given (already checked against their schemas). */
export function toRunFilter(input: RunFilterInput, source: FilterSource = QUERY_FILTER): RunFilter {
  if (input.template_version !== undefined && input.template_id === undefined) {
    throw new DomainError(
      source.code,
      'template_version filters the runs of one template: give template_id with it',
      pointer(...source.at, 'template_version'),
    );
  }
  if (input.step !== undefined && input.template_id === undefined) {
    throw new DomainError(
      source.code,
      'step names a page of one template: give template_id with it',
      pointer(...source.at, 'step'),
    );
  }
  return {
    statuses: input.status ? ([...new Set(input.status.split(','))] as RunStatus[]) : undefined,
    templateId: input.template_id,
    templateVersion: input.template_version,
    step: input.step,
    assignee: input.assignee,
    overdue: input.overdue,
    updatedAfter: parseTime(input.updated_after, 'updated_after', source),
    updatedBefore: parseTime(input.updated_before, 'updated_before', source),
    createdAfter: parseTime(input.created_after, 'created_after', source),
    createdBefore: parseTime(input.created_before, 'created_before', source),
    labels: parseLabelFilter(input.label),
    scheduleId: input.schedule_id,
  };
}

/** Only the filter's own parameters of an input that may hold others (a list's limit, cursor). */
export function filterInput(input: RunFilterInput): RunFilterInput {
  const out: Record<string, unknown> = {};
  for (const name of RUN_FILTER_NAMES) {
    if (input[name] !== undefined) out[name] = input[name];
  }
  return out as RunFilterInput;
}

/** True when the filter gives no parameter at all. */
export function isEmptyFilter(input: RunFilterInput): boolean {
  return RUN_FILTER_NAMES.every((name) => input[name] === undefined);
}
