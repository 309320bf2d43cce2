// The shapes the runs screens read: a run in full (GET /get-workflow-run, the API document's
// WorkflowRunDetail), the template version a run uses (WorkflowTemplateDetail, for the current
// step's form and the rules' names) and the run summary a stream event carries (WebhookPayload's
// data.run).
import type { RunStatus, RunSummary } from './types.js';
import type { FieldType, Rule, TemplateField, TemplatePage } from './types-templates.js';

export type { FieldType, Rule, TemplateField as TemplateInputField, TemplatePage };

/** skipped: the template's rules hid the step's page when the run reached it. */
export type StepStatus = 'waiting' | 'active' | 'completed' | 'skipped' | 'cancelled';

/** Who made a change: an API key, the service itself, or an operator's admin CLI. */
export type Actor =
  { type: 'api_key'; id: string; name?: string } | { type: 'system' | 'admin_cli' };

/** The template's rules (by index) that decided a step; each absent when none did. */
export interface StepRules {
  shownBy?: number;
  hiddenBy?: number;
  /** Would show the page, and no rule did: so it was skipped. */
  notShownBy?: number;
  dueBy?: number;
  assignedBy?: number;
}

export interface RunStep {
  name: string;
  status: StepStatus;
  assignee?: string;
  dueDate?: string;
  startedAt?: string;
  completedAt?: string;
  /** When the run passed over the step (skipped). */
  skippedAt?: string;
  overdue: boolean;
  /** Absent when no rule decided the step. */
  rules?: StepRules;
}

/** An input field of the run's template with its type, and the run's value when it has one. */
export interface RunField {
  inputId: string;
  fieldName: string;
  page: string;
  type: FieldType;
  value?: string;
}

export interface RunHistoryEntry {
  seq: number;
  type: string;
  at: string;
  data: Record<string, unknown>;
  actor?: Actor;
}

export interface RunDetail {
  id: string;
  templateId: string;
  templateVersion: number;
  workflowName: string;
  status: RunStatus;
  createdAt: string;
  lastActivity: string;
  currentStepName?: string;
  currentStepAssignee?: string;
  currentStepDueDate?: string;
  inputFields: Record<string, string>;
  userAssignments: Record<string, string>;
  labels: Record<string, string>;
  steps: RunStep[];
  /** Every field of the template in page order; present when the template's fields declare types. */
  fields?: RunField[];
  history: RunHistoryEntry[];
  error?: { message: string; at: string };
}

export interface TemplateVersionDetail {
  id: string;
  version: number;
  name: string;
  pages: TemplatePage[];
  rules?: Rule[];
}

/** A stream event's data (WebhookPayload.data): the event's own data and the run's summary. */
export interface RunEventData {
  runId: string;
  seq: number;
  templateId?: string;
  actor?: Actor;
  run: RunSummary;
  [other: string]: unknown;
}
