// The run endpoints, each stating its contract (http/contract.ts); handlers only translate
// between HTTP and the run service or store.
import { defineRoute, type Route } from '../http/contract.js';
import { decodeCursor, sendPage } from '../http/pagination.js';
import {
  type CompleteStepBody,
  type CreateRunBody,
  type ListRunsQuery,
  type RunSummary,
  type runSchemas,
} from './run-schemas.js';
import { resourceJson, type RunService } from './run-service.js';
import type { RunStore, RunSummaryRow } from './run-store.js';

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

export function runRoutes(deps: {
  service: RunService;
  store: RunStore;
  schemas: ReturnType<typeof runSchemas>;
  defaultLimit: number;
}): Route[] {
  const { service, store, schemas } = deps;
  return [
    defineRoute<Record<string, never>, CreateRunBody>({
      operationId: 'createWorkflowRun',
      method: 'POST',
      path: '/create-workflow-run',
      summary: 'Create a workflow run from a template',
      description:
        'Answered after the run is committed, status pending; a worker starts it within milliseconds.',
      auth: 'apiKey',
      body: schemas.createBody,
      responses: { 200: { description: 'the run as stored', schema: 'WorkflowRun' } },
      async handle({ principal, body, deadline }) {
        const run = await service.create(principal, body, deadline);
        return { status: 200, body: resourceJson(run) };
      },
    }),
    defineRoute<Record<string, never>, CompleteStepBody>({
      operationId: 'completeWorkflowStep',
      method: 'POST',
      path: '/complete-workflow-step',
      summary: "Complete the run's current step",
      description:
        'The completion is stored, then a worker moves the run to its next step (or completes it).',
      auth: 'apiKey',
      body: schemas.completeBody,
      responses: {
        202: { description: 'the run as stored, the completion pending', schema: 'WorkflowRun' },
        404: { description: 'no such run in this organization', schema: 'Error' },
        409: {
          description:
            'the run is not active, a completion already waits, or step_name is not current',
          schema: 'Error',
        },
      },
      async handle({ principal, body, deadline }) {
        const run = await service.completeStep(principal, body, deadline);
        return { status: 202, body: resourceJson(run) };
      },
    }),
    defineRoute<ListRunsQuery>({
      operationId: 'getWorkflowRuns',
      method: 'GET',
      path: '/get-workflow-runs',
      summary: "List the organization's runs, newest first",
      auth: 'apiKey',
      query: schemas.listQuery,
      responses: {
        200: {
          description: 'a page of runs; the next page is in the Link header',
          schema: { type: 'array', items: { $ref: 'WorkflowRunSummary' } },
          headers: { Link: '<next page URL>; rel="next", when there is one' },
        },
      },
      async handle({ principal, query }, ctx) {
        const limit = query.limit ?? deps.defaultLimit;
        const beforeSeq = query.cursor === undefined ? null : decodeCursor(query.cursor);
        const rows = await store.listSummaries(principal.organizationId, limit + 1, beforeSeq);
        return sendPage(ctx, limit, rows, toSummary);
      },
    }),
  ];
}
