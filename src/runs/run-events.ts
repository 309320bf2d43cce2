// A run's history: every change of a run is an event, written in the same transaction as the
// change itself (by every writer of runs: RunStore), so an event exists only if its change was
// committed, and every committed change has its event. This one vocabulary is what clients see
// as the run's history and what is delivered to subscribers.
//
// The vocabulary is closed: each type has its own data, described once below as a JSON Schema
// from which its TypeScript type is derived. A new type does not compile until every consumer
// that switches on types (the state machine that makes it, the webhook summary fold) handles it.
import type { FromSchema } from 'json-schema-to-ts';
import { data, index, text, time } from '../lib/event-data-schema.js';
import { parseActor, type Actor } from '../audit/actor.js';
import { RUN_STATUSES } from './run-status.js';

export const RUN_EVENT_TYPES = [
  'run.created',
  'run.started',
  'step.completed',
  'step.approved',
  'step.rejected',
  'step.reopened',
  'step.assigned',
  'step.escalated',
  'step.skipped',
  'step.overdue',
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.retried',
  'run.migrated',
  'run.deleted',
] as const;

export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** What an event says of the step that became current after it, if one did. */
const NEXT_STEP = {
  nextStep: text,
  nextAssignee: text,
  nextDueDate: time,
  nextShownByRule: {
    ...index,
    description: 'the rule (its index) that showed the next step, when one did',
  },
  nextAssigneeByRule: {
    ...index,
    description: "the rule (its index) that chose the next step's assignee",
  },
  nextDueByRule: {
    ...index,
    description: "the rule (its index) that set the next step's due time",
  },
} as const;

/** What each type of event says, in camelCase; a value that is absent is left out. */
export const RUN_EVENT_DATA = {
  'run.created': data(
    'the run was created, pending',
    {
      templateId: text,
      templateVersion: {
        type: 'integer',
        minimum: 1,
        description: 'the version of the template it was created from',
      },
      workflowName: text,
    },
    ['templateId', 'workflowName'],
  ),
  'run.started': data(
    'a worker started the run: its first step is current',
    {
      step: text,
      assignee: text,
      dueDate: time,
      assigneeByRule: { ...index, description: 'the rule (its index) that chose the assignee' },
      dueByRule: { ...index, description: 'the rule (its index) that set the due time' },
    },
    ['step'],
  ),
  'step.completed': data(
    'the step was completed with these inputs; the next step (if any) is current',
    {
      step: text,
      inputFields: { type: 'object', additionalProperties: text },
      completedBy: { ...text, description: 'the user the client named as having done it' },
      ...NEXT_STEP,
    },
    ['step', 'inputFields'],
  ),
  'step.approved': data(
    'the approval step was approved; the next step (if any) is current',
    {
      step: text,
      inputFields: { type: 'object', additionalProperties: text },
      comment: text,
      decidedBy: { ...text, description: 'the user who decided; absent for a timeout' },
      timedOut: {
        type: 'boolean',
        const: true,
        description: "nobody decided in time: the page's decisionTimeout decided",
      },
      ...NEXT_STEP,
    },
    ['step', 'inputFields'],
  ),
  'step.rejected': data(
    'the approval step was rejected: the run went back (outcome reopened, step.reopened follows) or failed (run.failed follows)',
    {
      step: text,
      inputFields: { type: 'object', additionalProperties: text },
      comment: text,
      decidedBy: { ...text, description: 'the user who decided; absent for a timeout' },
      timedOut: {
        type: 'boolean',
        const: true,
        description: "nobody decided in time: the page's decisionTimeout decided",
      },
      rejections: {
        type: 'integer',
        minimum: 1,
        description: 'how often this step has been rejected in the run, this one included',
      },
      outcome: {
        type: 'string',
        enum: ['reopened', 'failed', 'continued'],
        description:
          'continued: the page lets a rejection go on to the next page (onReject continue)',
      },
      ...NEXT_STEP,
    },
    ['step', 'inputFields', 'rejections', 'outcome'],
  ),
  'step.reopened': data(
    'a rejection sent the run back: these steps are open again, in order, their values kept',
    {
      step: { ...text, description: 'the page the run went back to' },
      from: { ...text, description: 'the approval step whose rejection sent it back' },
      steps: { type: 'array', items: text, description: 'the steps open again' },
    },
    ['step', 'from', 'steps'],
  ),
  'step.assigned': data(
    "the current step's assignee changed: claimed, unclaimed or given to someone",
    {
      step: text,
      change: { type: 'string', enum: ['claim', 'unclaim', 'assign'] },
      assignee: { ...text, description: 'the new assignee; absent once unclaimed' },
      previousAssignee: { ...text, description: 'absent when the step was unclaimed' },
    },
    ['step', 'change'],
  ),
  'step.escalated': data(
    "the step stayed overdue for one of its page's escalations: reassigned and/or given more candidate groups",
    {
      step: text,
      escalation: { ...index, description: "the escalation (its index in the page's escalations)" },
      overdueByHours: { type: 'number', minimum: 0 },
      assignee: text,
      previousAssignee: text,
      addedCandidateGroups: { type: 'array', items: text },
    },
    ['step', 'escalation', 'overdueByHours'],
  ),
  'step.skipped': data(
    "the run passed over the step: the template's rules hide its page, given the values known when the run reached it",
    {
      step: text,
      rule: { ...index, description: 'the rule (its index in the template) that hid the page' },
      ruleName: text,
      reason: {
        type: 'string',
        enum: ['hidden', 'not_shown'],
        description:
          'hidden: the rule hid the page; not_shown: the rule would show the page, and no rule did',
      },
    },
    ['step', 'rule', 'reason'],
  ),
  'step.overdue': data(
    'the step was still current at its due date',
    { step: text, dueDate: time },
    ['step', 'dueDate'],
  ),
  'run.completed': data('the last step was completed', {}, []),
  'run.failed': data(
    'the run failed: a worker gave up on its change (which waits for a retry), or its approval was rejected',
    { error: text, step: text },
    ['error'],
  ),
  'run.cancelled': data(
    'the run was cancelled, with the reason given',
    { reason: text, step: text },
    [],
  ),
  'run.retried': data(
    "the failed run's change waits for a worker again",
    { change: { type: 'string', enum: ['start', 'completeStep'] }, step: text },
    ['change'],
  ),
  'run.migrated': data(
    'the run moved onto another version of its template: its steps mapped by page, its values carried by inputId',
    {
      fromVersion: { type: 'integer', minimum: 1 },
      toVersion: { type: 'integer', minimum: 1 },
      workflowName: { ...text, description: "the target version's name" },
      pageMap: {
        type: 'object',
        additionalProperties: text,
        description: "each page of the run's version that maps, to the target's page",
      },
      unmappedPages: {
        type: 'array',
        items: text,
        description: "pages of the run's version that map to none: their steps were left behind",
      },
      step: { ...text, description: 'the step the run is at, under its target page' },
      assignee: text,
      dueDate: { ...time, description: 'its due time, counted again from its start' },
      droppedFields: {
        type: 'object',
        additionalProperties: text,
        description:
          'values dropped from the run (inputId to value): the target lacks the field, or refuses the value',
      },
      incompatibleFields: {
        type: 'array',
        items: text,
        description: 'the dropped values that the target field refused (drop_incompatible)',
      },
      defaultedFields: {
        type: 'array',
        items: text,
        description: "fields without a value that took the target's default",
      },
      droppedAssignments: {
        type: 'object',
        additionalProperties: text,
        description: 'user_assignments of pages that map to none (page to user)',
      },
      skippedSteps: {
        type: 'array',
        items: text,
        description:
          "the target's pages before the step the run is at that no page maps onto: passed over",
      },
    },
    ['fromVersion', 'toVersion', 'workflowName', 'pageMap'],
  ),
  // Nothing personal: the run's inputs, assignees and history are gone with it (run-deletion.ts).
  'run.deleted': data(
    'the run was deleted with its history; only this event is left of it',
    { workflowName: text, status: { type: 'string', enum: RUN_STATUSES } },
    ['workflowName', 'status'],
  ),
} as const satisfies Record<RunEventType, { type: 'object' }>;

/** The data of one type of event. */
export type RunEventData<T extends RunEventType> = FromSchema<(typeof RUN_EVENT_DATA)[T]>;

/** An event of one type, or (without a type argument) of any: a union tagged by `type`. */
export type RunEvent<T extends RunEventType = RunEventType> = {
  [K in T]: {
    /** 1, 2, 3, … within the run: the order of its history. */
    seq: number;
    type: K;
    /** ISO 8601 time of the change. */
    at: string;
    data: RunEventData<K>;
    /** Who made the change; absent for events stored before actors were recorded. */
    actor?: Actor;
  };
}[T];

/** An event as a change makes it, before it is numbered and timed (see run-state withEvents). */
export type NewRunEvent = { [K in RunEventType]: { type: K; data: RunEventData<K> } }[RunEventType];

/** For the default of an exhaustive switch: a case left out does not compile. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}

/** An event on its way to the table: the run it belongs to beside it. */
export interface RunEventRow {
  runId: string;
  organizationId: string;
  event: RunEvent;
}

/** The stored form of an event, as read back. */
export interface RunEventTableRow {
  id: number;
  run_id: string;
  organization_id: string;
  seq: number;
  type: RunEventType;
  at: Date;
  data: string;
  actor: string | null;
}

/**
 * An event as read back from MySQL. Its data is what the state machine made for its type (only
 * it writes events), so it is taken as that type's data without checking it again.
 */
export function storedEvent(
  seq: number,
  type: RunEventType,
  at: string,
  data: unknown,
  actor?: Actor,
): RunEvent {
  return (actor ? { seq, type, at, data, actor } : { seq, type, at, data }) as RunEvent;
}

export function fromEventRow(
  row: Pick<RunEventTableRow, 'seq' | 'type' | 'at' | 'data' | 'actor'>,
): RunEvent {
  return storedEvent(
    Number(row.seq),
    row.type,
    row.at.toISOString(),
    JSON.parse(row.data),
    parseActor(row.actor),
  );
}
