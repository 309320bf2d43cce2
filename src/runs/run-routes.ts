import type { Router } from '@koa/router';
import type { Middleware } from 'koa';
import { toIso } from '../db.js';
import type { AppState } from '../http/context.js';
import { parsePageRequest, sendPage } from '../http/pagination.js';
import { resourceJson, type RunService } from './run-service.js';
import type { RunStore, RunSummaryRow } from './run-store.js';

/** The WorkflowRunSummary of the spec (camelCase). */
function toSummary(row: RunSummaryRow) {
  return {
    id: row.id,
    lastActivity: toIso(row.last_activity),
    workflowName: row.workflow_name,
    currentStepAssignee: row.current_step_assignee,
    currentStepDueDate: toIso(row.current_step_due_date),
    currentStepName: row.current_step_name,
    status: row.status,
  };
}

export function runRoutes(
  router: Router<AppState>,
  deps: {
    service: RunService;
    store: RunStore;
    list: { defaultLimit: number; maxLimit: number };
    guard: Middleware<AppState>[];
    body: Middleware<AppState>;
  },
): void {
  router.post('/create-workflow-run', ...deps.guard, deps.body, async (ctx) => {
    const run = await deps.service.create(ctx.state.principal!, ctx.state.body);
    ctx.type = 'application/json';
    ctx.body = resourceJson(run);
  });

  router.post('/complete-workflow-step', ...deps.guard, deps.body, async (ctx) => {
    const run = await deps.service.completeStep(ctx.state.principal!, ctx.state.body);
    ctx.status = 202;
    ctx.type = 'application/json';
    ctx.body = resourceJson(run);
  });

  router.get('/get-workflow-runs', ...deps.guard, async (ctx) => {
    const page = parsePageRequest(ctx.query, deps.list.defaultLimit, deps.list.maxLimit);
    const rows = await deps.store.listSummaries(
      ctx.state.principal!.organizationId,
      page.limit + 1,
      page.beforeSeq,
    );
    sendPage(ctx, page, rows, toSummary);
  });
}
