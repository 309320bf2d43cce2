// How a run is shown: the WorkflowRun of the spec (snake_case, the answer to requests that
// change a run), the WorkflowRunSummary of the lists (camelCase), and one run in full with its
// steps and history (camelCase). In all three a value that is absent is left out, never null.
import type { RunEvent } from './run-events.js';
import type { RunSummary, WorkflowRunDetail } from './run-schemas.js';
import { documentJson, type RunRecord, type StepRules } from './run-record.js';
import type { RunSummaryRow } from './run-list.js';
import { templateNames } from '../templates/definition/template-definition.js';

/** The WorkflowRun resource of the spec (snake_case). */
export interface RunResource {
  id: string;
  organization_id: string;
  template_id: string;
  status: string;
  run_json: unknown;
  last_activity: string;
}

export function toResource(run: RunRecord): RunResource {
  return {
    id: run.id,
    organization_id: run.organizationId,
    template_id: run.templateId,
    status: run.status,
    run_json: run.document,
    last_activity: run.lastActivity.toISOString(),
  };
}

/**
 * toResource(run) as JSON text, written out so that the document's JSON made for the INSERT
 * is reused rather than serialized a second time for the response.
 */
export function resourceJson(run: RunRecord): string {
  return (
    `{"id":${JSON.stringify(run.id)},"organization_id":${JSON.stringify(run.organizationId)},` +
    `"template_id":${JSON.stringify(run.templateId)},"status":${JSON.stringify(run.status)},` +
    `"run_json":${documentJson(run.document)},"last_activity":"${run.lastActivity.toISOString()}"}`
  );
}

/**
 * The WorkflowRunSummary of the spec. A field with no value is left out, never null: the spec
 * types every field as a string, and a client generated from it may reject a null (pending,
 * completed and failed runs have no current step; a step may have no assignee or due date).
 */
export function toSummary(row: RunSummaryRow): RunSummary {
  const summary: RunSummary = {
    id: row.id,
    lastActivity: row.last_activity.toISOString(),
    workflowName: row.workflow_name,
    status: row.status,
  };
  if (row.current_step_assignee !== null) summary.currentStepAssignee = row.current_step_assignee;
  if (row.current_step_due_date !== null)
    summary.currentStepDueDate = row.current_step_due_date.toISOString();
  if (row.current_step_name !== null) summary.currentStepName = row.current_step_name;
  return summary;
}

/** Copies the entries whose value is not null or undefined; the copy's types say so. */
function present<T extends Record<string, unknown>>(
  entries: T,
): { [K in keyof T]?: Exclude<T[K], null | undefined> } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entries)) {
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out as { [K in keyof T]?: Exclude<T[K], null | undefined> };
}

/** One run in full: what the list says, its inputs, every step, and its history. */
export function toDetail(run: RunRecord, history: RunEvent[]): WorkflowRunDetail {
  const doc = run.document;
  return {
    id: run.id,
    templateId: run.templateId,
    templateVersion: run.templateVersion,
    workflowName: run.workflowName,
    status: run.status,
    createdAt: run.createdAt.toISOString(),
    lastActivity: run.lastActivity.toISOString(),
    ...present({
      currentStepName: run.currentStepName,
      currentStepAssignee: run.currentStepAssignee,
      currentStepDueDate: run.currentStepDueDate?.toISOString(),
      scheduleId: doc.schedule?.id,
      scheduledFor: doc.schedule?.scheduled_for,
    }),
    inputFields: doc.input_fields,
    userAssignments: doc.user_assignments,
    labels: doc.labels ?? {},
    steps: doc.steps.map((step, i) => ({
      name: step.name,
      status: step.status,
      overdue: step.overdue === true,
      ...(doc.template.pages[i]?.kind === 'approval' ? { kind: 'approval' as const } : {}),
      ...present({
        candidateUsers: step.candidate_users,
        candidateGroups: step.candidate_groups,
        completedBy: step.completed_by,
        decision: step.decision,
        comment: step.comment,
        decidedBy: step.decided_by,
        decisionDueAt: step.decision_due_at,
        rejections: step.rejections,
        escalations: step.escalated,
        reopenedAt: step.reopened_at,
        assignee: step.assignee,
        dueDate: step.due_date,
        startedAt: step.started_at,
        completedAt: step.completed_at,
        skippedAt: step.skipped_at,
        rules: step.rules && ruleView(step.rules),
      }),
    })),
    ...(templateNames(doc.template).typed ? { fields: fieldsView(doc) } : {}),
    history: history.map((event) => ({
      seq: event.seq,
      type: event.type,
      at: event.at,
      data: event.data,
      ...(event.actor ? { actor: event.actor } : {}),
    })),
    ...(run.status === 'failed' && doc.error ? { error: doc.error } : {}),
  };
}

function ruleView(rules: StepRules) {
  return present({
    shownBy: rules.shown_by,
    hiddenBy: rules.hidden_by,
    notShownBy: rules.not_shown_by,
    dueBy: rules.due_by,
    assignedBy: rules.assigned_by,
  });
}

/** Each field of the run's template with its type, beside the run's value. */
function fieldsView(doc: RunRecord['document']) {
  return doc.template.pages.flatMap((page) =>
    page.inputFields.map((field) => ({
      inputId: field.inputId,
      fieldName: field.fieldName,
      page: page.name,
      type: field.type ?? 'text',
      ...(Object.hasOwn(doc.input_fields, field.inputId)
        ? { value: doc.input_fields[field.inputId]! }
        : {}),
    })),
  );
}
