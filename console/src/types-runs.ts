// The shapes the runs screens read: a run in full (GET /get-workflow-run, the API document's
// WorkflowRunDetail), the template version a run uses (WorkflowTemplateDetail, for the current
// step's form) and the run summary a stream event carries (WebhookPayload's data.run).
import type { RunStatus, RunSummary } from './types.js';

export type StepStatus = 'waiting' | 'active' | 'completed' | 'cancelled';

/** Who made a change: an API key, the service itself, or an operator's admin CLI. */
export type Actor =
  { type: 'api_key'; id: string; name?: string } | { type: 'system' | 'admin_cli' };

export interface RunStep {
  name: string;
  status: StepStatus;
  assignee?: string;
  dueDate?: string;
  startedAt?: string;
  completedAt?: string;
  overdue: boolean;
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
  history: RunHistoryEntry[];
  error?: { message: string; at: string };
}

export interface TemplateInputField {
  inputId: string;
  fieldName: string;
  required?: boolean;
}

export interface TemplatePage {
  name: string;
  dueInHours?: number;
  inputFields: TemplateInputField[];
}

export interface TemplateVersionDetail {
  id: string;
  version: number;
  name: string;
  pages: TemplatePage[];
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
