// The run endpoints, each stating its contract (http/contract.ts); handlers only translate
// between HTTP and the run service or store.
import { defineRoute, pageResponse, type Route } from '../http/contract.js';
import { listPage } from '../http/pagination.js';
import {
  WorkflowRunDetailSchema,
  WorkflowRunSchema,
  WorkflowRunCountsSchema,
  WorkflowRunSummarySchema,
  type runSchemas,
} from './run-schemas.js';
import type { RunService } from './run-service.js';
import { toRunFilter } from './run-filter.js';
import type { RunStore } from './run-store.js';
import { resourceJson, toDetail, toSummary } from './run-views.js';

/** What a request to take or hand over the current step can meet. */
const STEP_REFUSALS = [
  'run_not_found',
  'run_not_started',
  'run_not_active',
  'step_not_current',
  'completion_pending',
  'run_changed_concurrently',
] as const;

export function runRoutes(deps: {
  service: RunService;
  store: RunStore;
  schemas: ReturnType<typeof runSchemas>;
  defaultLimit: number;
}): Route[] {
  const { service, store, schemas } = deps;
  return [
    defineRoute({
      operationId: 'createWorkflowRun',
      method: 'POST',
      path: '/create-workflow-run',
      summary: 'Create a workflow run from a template',
      description:
        'Answered after the run is committed, status pending; a worker starts it within milliseconds.',
      scope: 'runs:write',
      body: schemas.createBody,
      responses: { 200: { description: 'the run as stored', schema: WorkflowRunSchema } },
      refusals: [
        'unknown_template',
        'unknown_template_version',
        'template_archived',
        'unknown_input_field',
        'invalid_field_value',
        'unknown_page',
        'template_changed_concurrently',
      ],
      async handle({ principal, body, deadline, idempotency }) {
        const run = await service.create(principal, body, deadline, idempotency);
        return { status: 200, body: resourceJson(run) };
      },
    }),
    defineRoute({
      operationId: 'completeWorkflowStep',
      method: 'POST',
      path: '/complete-workflow-step',
      summary: "Complete the run's current step",
      description:
        "The completion is stored, then a worker moves the run to its next step (or completes it). An approval step takes `decision` and an optional `comment`: a rejection sends the run back to an earlier page or fails it, as its page's onReject says.",
      scope: 'runs:write',
      body: schemas.completeBody,
      responses: {
        202: {
          description: 'the run as stored, the completion pending',
          schema: WorkflowRunSchema,
        },
      },
      refusals: [
        'run_not_found',
        'unknown_input_field',
        'invalid_field_value',
        'missing_required_field',
        'decision_required',
        'decision_not_taken',
        'run_not_started',
        'run_not_active',
        'completion_pending',
        'step_not_current',
        'run_changed_concurrently',
      ],
      async handle({ principal, body, deadline, idempotency }) {
        const run = await service.completeStep(principal, body, deadline, idempotency);
        return { status: 202, body: resourceJson(run) };
      },
    }),
    defineRoute({
      operationId: 'claimWorkflowStep',
      method: 'POST',
      path: '/claim-workflow-step',
      summary: "Take the run's current step for a user",
      description:
        'Refused with 409 step_already_claimed when someone else holds it, unless allow_override is true; of two racing claims exactly one wins. The user holding it already changes nothing. Each change is a step.assigned event.',
      scope: 'runs:write',
      body: schemas.claimBody,
      responses: { 200: { description: 'the run as stored', schema: WorkflowRunSchema } },
      refusals: [...STEP_REFUSALS, 'step_already_claimed'],
      async handle({ principal, body, deadline, idempotency }) {
        const run = await service.claim(principal, body, deadline, idempotency);
        return { status: 200, body: resourceJson(run) };
      },
    }),
    defineRoute({
      operationId: 'unclaimWorkflowStep',
      method: 'POST',
      path: '/unclaim-workflow-step',
      summary: "Leave the run's current step to its candidates again",
      description:
        'With user_id, only if that user holds the step (409 step_not_held otherwise). A step held by nobody changes nothing.',
      scope: 'runs:write',
      body: schemas.unclaimBody,
      responses: { 200: { description: 'the run as stored', schema: WorkflowRunSchema } },
      refusals: [...STEP_REFUSALS, 'step_not_held'],
      async handle({ principal, body, deadline, idempotency }) {
        const run = await service.unclaim(principal, body, deadline, idempotency);
        return { status: 200, body: resourceJson(run) };
      },
    }),
    defineRoute({
      operationId: 'assignWorkflowStep',
      method: 'POST',
      path: '/assign-workflow-step',
      summary: "Give the run's current step to a user, whoever holds it",
      scope: 'runs:write',
      body: schemas.assignBody,
      responses: { 200: { description: 'the run as stored', schema: WorkflowRunSchema } },
      refusals: STEP_REFUSALS,
      async handle({ principal, body, deadline, idempotency }) {
        const run = await service.assign(principal, body, deadline, idempotency);
        return { status: 200, body: resourceJson(run) };
      },
    }),
    defineRoute({
      operationId: 'cancelWorkflowRun',
      method: 'POST',
      path: '/cancel-workflow-run',
      summary: 'Cancel a pending or active run',
      description:
        'Takes effect at once, also over a start or completion that waits for a worker (which is dropped).',
      scope: 'runs:write',
      body: schemas.cancelBody,
      responses: {
        200: { description: 'the run as stored, status cancelled', schema: WorkflowRunSchema },
      },
      refusals: ['run_not_found', 'run_not_cancellable', 'run_changed_concurrently'],
      async handle({ principal, body, deadline, idempotency }) {
        const run = await service.cancel(principal, body, deadline, idempotency);
        return { status: 200, body: resourceJson(run) };
      },
    }),
    defineRoute({
      operationId: 'retryWorkflowRun',
      method: 'POST',
      path: '/retry-workflow-run',
      summary: "Request a failed run's failed change again",
      scope: 'runs:write',
      body: schemas.retryBody,
      responses: {
        202: {
          description: 'the run as stored, the change pending again',
          schema: WorkflowRunSchema,
        },
      },
      refusals: ['run_not_found', 'run_not_retryable', 'run_changed_concurrently'],
      async handle({ principal, body, deadline, idempotency }) {
        const run = await service.retry(principal, body, deadline, idempotency);
        return { status: 202, body: resourceJson(run) };
      },
    }),
    defineRoute({
      operationId: 'getWorkflowRun',
      method: 'GET',
      path: '/get-workflow-run',
      summary: 'One run in full: its steps and its history',
      scope: 'runs:read',
      query: schemas.getQuery,
      responses: {
        200: { description: 'the run', schema: WorkflowRunDetailSchema },
      },
      refusals: ['run_not_found'],
      async handle({ principal, query }) {
        const { run, history } = await service.get(principal, query.id);
        return { status: 200, body: toDetail(run, history) };
      },
    }),
    defineRoute({
      operationId: 'getWorkflowRuns',
      method: 'GET',
      path: '/get-workflow-runs',
      summary: "List the organization's runs, newest first, optionally filtered",
      scope: 'runs:read',
      query: schemas.listQuery,
      responses: {
        200: pageResponse('runs', WorkflowRunSummarySchema),
      },
      async handle({ principal, query }, ctx) {
        const filter = toRunFilter(query);
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeSeq) =>
            store.listSummaries(principal.organizationId, limit, beforeSeq, filter),
          toSummary,
        );
      },
    }),
    defineRoute({
      operationId: 'countWorkflowRuns',
      method: 'GET',
      path: '/count-workflow-runs',
      summary: "How many of the organization's runs match the list's filters, by status",
      description:
        'Takes the filters of GET /get-workflow-runs. Each status is counted up to `limit` (10,000) by one bounded index scan, so a count costs the same at any organization size; a status with more is reported as `limit` and listed in `exceeded`.',
      scope: 'runs:read',
      query: schemas.countQuery,
      responses: {
        200: { description: 'the counts', schema: WorkflowRunCountsSchema },
      },
      async handle({ principal, query }) {
        return {
          status: 200,
          body: await store.countRuns(principal.organizationId, toRunFilter(query)),
        };
      },
    }),
  ];
}
