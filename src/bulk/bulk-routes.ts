// The bulk action endpoints, each stating its contract (http/contract.ts); handlers only
// translate between HTTP and the bulk service.
import { defineRoute, type Route } from '../http/contract.js';
import { BulkActionSchema, type bulkSchemas } from './bulk-schemas.js';
import type { BulkService } from './bulk-service.js';

export function bulkRoutes(deps: {
  service: BulkService;
  schemas: ReturnType<typeof bulkSchemas>;
}): Route[] {
  const { service, schemas } = deps;
  const accepted = {
    202: {
      description: 'the bulk action, running; read its progress with get-bulk-action',
      schema: BulkActionSchema,
    },
  };
  return [
    defineRoute({
      operationId: 'bulkCancelWorkflowRuns',
      method: 'POST',
      path: '/bulk-cancel-workflow-runs',
      summary: 'Cancel every pending or active run matching a filter',
      description:
        'Each matching run is cancelled as a single cancel would cancel it (its run.cancelled ' +
        'event, its webhooks); runs that have ended are skipped. Runs created after the request ' +
        'are not matched.',
      scope: 'runs:write',
      body: schemas.cancelBody,
      responses: accepted,
      refusals: ['filter_required'],
      async handle({ principal, body, deadline, idempotency }) {
        const view = await service.start(principal, 'cancel', body, deadline, idempotency);
        return { status: 202, body: view };
      },
    }),
    defineRoute({
      operationId: 'bulkRetryWorkflowRuns',
      method: 'POST',
      path: '/bulk-retry-workflow-runs',
      summary: 'Retry every failed run matching a filter',
      description:
        'Each matching failed run is retried as a single retry would retry it (its run.retried ' +
        'event); runs that are not failed are skipped. Runs created after the request are not ' +
        'matched.',
      scope: 'runs:write',
      body: schemas.retryBody,
      responses: accepted,
      refusals: ['filter_required'],
      async handle({ principal, body, deadline, idempotency }) {
        const view = await service.start(principal, 'retry', body, deadline, idempotency);
        return { status: 202, body: view };
      },
    }),
    defineRoute({
      operationId: 'bulkMigrateWorkflowRuns',
      method: 'POST',
      path: '/bulk-migrate-workflow-runs',
      summary: 'Move every pending or active run matching a filter onto another template version',
      description:
        'The runs of filter.template_id at from_version are each moved as migrate-workflow-run ' +
        'would move them, by one plan checked now; a run that cannot move is counted in skipped ' +
        'by its refusal code. With dry_run: the counts, and nothing changed. Runs created after ' +
        'the request are not matched.',
      scope: 'runs:write',
      body: schemas.migrateBody,
      responses: accepted,
      refusals: [
        'filter_required',
        'unknown_template',
        'unknown_template_version',
        'invalid_page_map',
      ],
      async handle({ principal, body, deadline, idempotency }) {
        const view = await service.startMigration(principal, body, deadline, idempotency);
        return { status: 202, body: view };
      },
    }),
    defineRoute({
      operationId: 'getBulkAction',
      method: 'GET',
      path: '/get-bulk-action',
      summary: "A bulk action's progress: matched, done and skipped runs",
      scope: 'runs:read',
      query: schemas.getQuery,
      responses: { 200: { description: 'the bulk action', schema: BulkActionSchema } },
      refusals: ['bulk_action_not_found'],
      async handle({ principal, query }) {
        return { status: 200, body: await service.get(principal, query.id) };
      },
    }),
  ];
}
