// The audit log's endpoint, stating its contract (http/contract.ts); the handler only
// translates between HTTP and the store.
import { defineRoute, pageResponse, type Route } from '../http/contract.js';
import { listPage } from '../http/pagination.js';
import { queryTime } from '../http/query-time.js';
import type { AuditEventType } from './audit-events.js';
import { AuditEntrySchema, type AuditLogQuery, type auditSchemas } from './audit-schemas.js';
import { toAuditEntry, type AuditFilter, type AuditStore } from './audit-store.js';

/** The log's filters, from its query (already checked against the schema). */
function auditFilter(query: AuditLogQuery): AuditFilter {
  return {
    types: query.type ? ([...new Set(query.type.split(','))] as AuditEventType[]) : undefined,
    actor: query.actor,
    after: queryTime(query.after, 'after'),
    before: queryTime(query.before, 'before'),
  };
}

export function auditRoutes(deps: {
  store: AuditStore;
  schemas: ReturnType<typeof auditSchemas>;
  defaultLimit: number;
}): Route[] {
  const { store, schemas } = deps;
  return [
    defineRoute({
      operationId: 'getAuditLog',
      method: 'GET',
      path: '/get-audit-log',
      summary: "The organization's administrative changes, newest first, optionally filtered",
      description:
        'Templates created, updated, archived and restored; API keys created, revoked, rolled and expired; webhook endpoints created, deleted and their secrets rotated. Each entry is written in the same transaction as its change and names who made it; none holds a secret.',
      scope: 'audit:read',
      query: schemas.listQuery,
      responses: { 200: pageResponse('audit entries', AuditEntrySchema) },
      async handle({ principal, query }, ctx) {
        const filter = auditFilter(query);
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeSeq) => store.list(principal.organizationId, filter, limit, beforeSeq),
          toAuditEntry,
        );
      },
    }),
  ];
}
