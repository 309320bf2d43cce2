// The API's shapes as the console reads them. Written from the API document (GET /openapi.json);
// test/integration/console-* checks every answer the console gets against that document, so a
// shape here that drifted from the API shows up as a failing screen, not a silent blank.

export type Scope =
  | 'runs:read'
  | 'runs:write'
  | 'templates:read'
  | 'templates:write'
  | 'webhooks:read'
  | 'webhooks:write'
  | 'keys:manage'
  | 'audit:read';

export const ALL_SCOPES: readonly Scope[] = [
  'runs:read',
  'runs:write',
  'templates:read',
  'templates:write',
  'webhooks:read',
  'webhooks:write',
  'keys:manage',
  'audit:read',
];

export type RunStatus = 'pending' | 'active' | 'completed' | 'failed' | 'cancelled';
export const RUN_STATUSES: readonly RunStatus[] = [
  'pending',
  'active',
  'completed',
  'failed',
  'cancelled',
];

export interface ApiKey {
  id: string;
  name?: string;
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  expiresAt?: string;
  lastUsedAt?: string;
  revokedAt?: string;
  replacedBy?: string;
}

export interface ApiKeyWithSecret extends ApiKey {
  key?: string;
}

/** A list item of GET /get-workflow-runs (the spec's WorkflowRunSummary). */
export interface RunSummary {
  id: string;
  workflowName: string;
  status: RunStatus;
  currentStepName?: string | null;
  currentStepAssignee?: string | null;
  currentStepDueDate?: string | null;
  lastActivity: string;
  [other: string]: unknown;
}

/** GET /count-workflow-runs: runs matching a filter, by status, each counted up to `limit`. */
export interface RunCounts {
  byStatus: Record<RunStatus, number>;
  total: number;
  limit: number;
  /** Statuses with more matching runs than `limit` (their count is `limit`). */
  exceeded: RunStatus[];
}
