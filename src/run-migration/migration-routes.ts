// The migration endpoint, stating its contract (http/contract.ts): moving one run onto another
// version of its template. Moving many is a bulk action (src/bulk/).
import { defineRoute, type Route } from '../http/contract.js';
import { MigrateRunBodySchema, WorkflowRunMigrationSchema } from './migration-schemas.js';
import type { MigrationService } from './migration-service.js';

/** What moving a run can meet, single or in bulk (a bulk action counts the run's by code). */
export const MIGRATION_REFUSALS = [
  'unknown_template_version',
  'invalid_page_map',
  'run_not_migratable',
  'migration_same_version',
  'migration_step_unmapped',
  'migration_incompatible_value',
  'completion_pending',
] as const;

export function migrationRoutes(deps: { service: MigrationService }): Route[] {
  const { service } = deps;
  return [
    defineRoute({
      operationId: 'migrateWorkflowRun',
      method: 'POST',
      path: '/migrate-workflow-run',
      summary: 'Move a pending or active run onto another version of its template',
      description:
        'Pages map by name unless page_map says otherwise; the step the run is at must map. ' +
        'Steps done keep their state, values are carried by inputId, and the step the run is at ' +
        "takes the target page's due time (counted from its start), decision timeout and " +
        'candidates. All or nothing, with one run.migrated event. With dry_run: what would ' +
        'happen, and nothing changed.',
      scope: 'runs:write',
      body: MigrateRunBodySchema,
      responses: {
        200: {
          description: 'what the move did (or would do), and the run after it',
          schema: WorkflowRunMigrationSchema,
        },
      },
      refusals: ['run_not_found', ...MIGRATION_REFUSALS, 'run_changed_concurrently'],
      async handle({ principal, body, deadline, idempotency }) {
        return { status: 200, body: await service.migrate(principal, body, deadline, idempotency) };
      },
    }),
  ];
}
