// The shapes of the bulk actions and the audit log, as the console reads them (from the API
// document's BulkAction and AuditEntry).

export type BulkActionKind = 'cancel' | 'retry';

/** POST /bulk-cancel-workflow-runs, /bulk-retry-workflow-runs (202) and GET /get-bulk-action. */
export interface BulkAction {
  id: string;
  action: BulkActionKind;
  status: 'running' | 'completed';
  /** The filter as given: the list's parameter names (status, template_id, label, …). */
  filter: Record<string, unknown>;
  reason?: string;
  /** Runs found by the filter so far (all of them once completed). */
  matched: number;
  done: number;
  /** Runs matched but left alone, by the code a single cancel or retry would have been refused with. */
  skipped: Record<string, number>;
  startedAt: string;
  finishedAt?: string;
}

/** A bulk action's body's `filter`: the list's parameters, with `overdue` a boolean. */
export type BulkFilter = {
  status?: string;
  template_id?: string;
  assignee?: string;
  overdue?: boolean;
  created_after?: string;
  created_before?: string;
  updated_after?: string;
  updated_before?: string;
  label?: string[];
};

export type Actor =
  { type: 'api_key'; id: string; name?: string } | { type: 'system' | 'admin_cli' };

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
  'organization.settings_updated',
] as const;

export type AuditType = (typeof AUDIT_TYPES)[number];

/** One entry of GET /get-audit-log; `data` is the type's own (described per type by the API). */
export interface AuditEntry {
  id: string;
  type: AuditType;
  at: string;
  actor: Actor;
  targetId: string;
  data: Record<string, unknown>;
}
