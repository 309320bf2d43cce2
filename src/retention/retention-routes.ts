// Run deletion and the organization's settings, each stating its contract (http/contract.ts);
// handlers only translate between HTTP and the retention service.
import { defineRoute, type Route } from '../http/contract.js';
import {
  OrganizationSettingsSchema,
  WorkflowRunDeletedSchema,
  retentionSchemas,
} from './retention-schemas.js';
import type { RetentionService } from './retention-service.js';

export function retentionRoutes(deps: { service: RetentionService }): Route[] {
  const { service } = deps;
  return [
    defineRoute({
      operationId: 'deleteWorkflowRun',
      method: 'POST',
      path: '/delete-workflow-run',
      summary: 'Delete a run with its history, deliveries and Idempotency-Key answers',
      description:
        'In one transaction, in any status; the run is then unknown everywhere. A run.deleted event, with nothing personal in it, goes out to the webhooks.',
      scope: 'runs:write',
      body: retentionSchemas.deleteBody,
      responses: { 200: { description: 'the run is deleted', schema: WorkflowRunDeletedSchema } },
      refusals: ['run_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.deleteRun(principal, body, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'getOrganizationSettings',
      method: 'GET',
      path: '/get-organization-settings',
      summary:
        "The organization's settings: how long its finished runs are kept, and its time zone",
      scope: 'runs:read',
      responses: { 200: { description: 'the settings', schema: OrganizationSettingsSchema } },
      async handle({ principal }) {
        return { status: 200, body: await service.getSettings(principal) };
      },
    }),
    defineRoute({
      operationId: 'updateOrganizationSettings',
      method: 'POST',
      path: '/update-organization-settings',
      summary:
        "Set how long the organization's finished runs are kept, or the time zone its due times count in",
      description:
        'Finished runs (completed, failed, cancelled) are deleted once they finished that many days ago, with their history, and the delivery log and audit entries older than that. Due times in days and business days count in the time zone (the local time kept, weekdays Monday to Friday there); a change applies to runs created after it.',
      scope: 'keys:manage',
      body: retentionSchemas.updateSettingsBody,
      responses: { 200: { description: 'the settings now', schema: OrganizationSettingsSchema } },
      refusals: ['invalid_time_zone'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.updateSettings(principal, body, deadline, idempotency),
        };
      },
    }),
  ];
}
