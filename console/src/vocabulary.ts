// The names the console gives to parts of the API's shapes, and the lists of the API's enums it
// shows as checkboxes and selects. Every shape is the client's (workflow-run-client, generated
// from the API document): nothing here is written out again, only named. Each list is checked
// against its type both ways at compile time: `satisfies` refuses a value the API does not
// have, and `Exhaustive` below names a value the list leaves out.
import type {
  Actor,
  AuditEntryType,
  BulkAction,
  DeliveryStatus,
  ErrorCode,
  MigrateWorkflowRunRequest,
  RunEventType,
  RunStatus,
  ScheduleFire,
  Scope,
  WorkflowRunDetail,
  WorkflowRunMigration,
  WorkflowSchedule,
  WorkflowTemplateDetail,
} from 'workflow-run-client';
import { RUN_STATUSES } from '../../src/runs/run-status.js';
import { FIELD_TYPES } from '../../src/templates/definition/definition-types.js';

export type { Actor, DeliveryStatus, ErrorCode, RunStatus, ScheduleFire, Scope, WorkflowSchedule };
/** The service's own lists (modules that import nothing), checked against the client's types below. */
export { FIELD_TYPES, RUN_STATUSES };
/** An event of a run: a webhook's, a stream's and a history entry's type. */
export type EventType = RunEventType;
export type AuditType = AuditEntryType;
export type BulkActionKind = BulkAction['action'];

/** What moving a run onto another version did (or would do): a run.migrated event's data. */
export type Migration = WorkflowRunMigration['migration'];
/** A page of the run's version to the target's page it becomes (null: none). */
export type PageMap = NonNullable<MigrateWorkflowRunRequest['page_map']>;
/** A bulk migration's plan, as its bulk action shows it. */
export type BulkMigration = NonNullable<BulkAction['migration']>;

/** When a schedule's time comes while its previous run is still open. */
export type Overlap = WorkflowSchedule['overlap'];
export type ScheduleState = WorkflowSchedule['state'];
/** What asked for a schedule's record, what came of it, and why a time was skipped. */
export type FireKind = ScheduleFire['kind'];
export type FireOutcome = ScheduleFire['outcome'];
export type SkipReason = NonNullable<ScheduleFire['reason']>;

export type RunStep = WorkflowRunDetail['steps'][number];
export type RunHistoryEntry = WorkflowRunDetail['history'][number];

// A template's definition, as a version of it reads (the request bodies have the same shapes).
export type TemplatePage = WorkflowTemplateDetail['pages'][number];
export type TemplateField = TemplatePage['inputFields'][number];
export type FieldType = NonNullable<TemplateField['type']>;
export type DueSpec = NonNullable<TemplatePage['due']>;
export type DueAnchor = DueSpec['anchor'];
export type DueUnit = DueSpec['unit'];
export type Rule = NonNullable<WorkflowTemplateDetail['rules']>[number];
export type Condition = NonNullable<Rule['when']['all']>[number];
export type ConditionOp = Condition['op'];
export type RuleAction = Rule['then'][number];

/** A rule's conditions, and whether all of them must hold or any one of them. */
export function conditionsOf(rule: Rule): { match: 'all' | 'any'; conditions: Condition[] } {
  return rule.when.all
    ? { match: 'all', conditions: rule.when.all }
    : { match: 'any', conditions: rule.when.any ?? [] };
}

export const ALL_SCOPES = [
  'runs:read',
  'runs:write',
  'templates:read',
  'templates:write',
  'schedules:read',
  'schedules:write',
  'webhooks:read',
  'webhooks:write',
  'keys:manage',
  'audit:read',
] as const satisfies readonly Scope[];

export const EVENT_TYPES = [
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
] as const satisfies readonly EventType[];

export const DELIVERY_STATUSES = [
  'pending',
  'delivered',
  'failed',
] as const satisfies readonly DeliveryStatus[];

export const AUDIT_TYPES = [
  'template.created',
  'template.updated',
  'template.archived',
  'template.restored',
  'api_key.created',
  'api_key.revoked',
  'api_key.rolled',
  'api_key.expired',
  'webhook_endpoint.created',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'bulk_action.created',
  'schedule.created',
  'schedule.updated',
  'schedule.paused',
  'schedule.resumed',
  'schedule.deleted',
  'schedule.triggered',
  'schedule.backfilled',
  'organization.settings_updated',
] as const satisfies readonly AuditType[];

export const OVERLAP_POLICIES = [
  'skip',
  'buffer_one',
  'allow_all',
] as const satisfies readonly Overlap[];

export const SCHEDULE_STATES = ['active', 'paused'] as const satisfies readonly ScheduleState[];

/** Compiles only when `Left` is never: an error here names the value a list leaves out. */
type NoneLeft<Left extends never> = Left;
type LeftOut<Type, List extends readonly unknown[]> = Exclude<Type, List[number]>;

/** Every list above holds every value of its type, and the service's lists no value it lacks. */
export type Exhaustive = [
  NoneLeft<Exclude<(typeof RUN_STATUSES)[number], RunStatus>>,
  NoneLeft<Exclude<(typeof FIELD_TYPES)[number], FieldType>>,
  NoneLeft<LeftOut<Scope, typeof ALL_SCOPES>>,
  NoneLeft<LeftOut<RunStatus, typeof RUN_STATUSES>>,
  NoneLeft<LeftOut<EventType, typeof EVENT_TYPES>>,
  NoneLeft<LeftOut<DeliveryStatus, typeof DELIVERY_STATUSES>>,
  NoneLeft<LeftOut<AuditType, typeof AUDIT_TYPES>>,
  NoneLeft<LeftOut<FieldType, typeof FIELD_TYPES>>,
  NoneLeft<LeftOut<Overlap, typeof OVERLAP_POLICIES>>,
  NoneLeft<LeftOut<ScheduleState, typeof SCHEDULE_STATES>>,
];
