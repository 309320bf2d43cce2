import type { Router } from '@koa/router';
import type { Middleware } from 'koa';
import type { AppState } from '../http/context.js';
import { NO_DEADLINE } from '../lib/deadline.js';
import { parsePageRequest, sendPage } from '../http/pagination.js';
import { resourceJson, type RunService } from './run-service.js';
import type { RunStore, RunSummaryRow } from './run-store.js';

/** The WorkflowRunSummary of the spec (camelCase). */
export interface RunSummary {
  id: string;
  lastActivity: string;
  workflowName: string;
  currentStepAssignee?: string;
  currentStepDueDate?: string;
  currentStepName?: string;
  status: string;
}

/**
 * A field with no value is left out, never null: the spec types every field as a string, and
 * a client generated from it may reject a null (pending, completed and failed runs have no
 * current step; a step may have no assignee or due date).
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

export function runRoutes(
  router: Router<AppState>,
  deps: {
    service: RunService;
    store: RunStore;
    list: { defaultLimit: number; maxLimit: number };
    guard: Middleware<AppState>[];
    body: Middleware<AppState>;
    timeout: Middleware<AppState>;
  },
): void {
  router.post('/create-workflow-run', ...deps.guard, deps.body, deps.timeout, async (ctx) => {
    const run = await deps.service.create(
      ctx.state.principal!,
      ctx.state.body,
      ctx.state.deadline ?? NO_DEADLINE,
    );
    ctx.type = 'application/json';
    ctx.body = resourceJson(run);
  });

  router.post('/complete-workflow-step', ...deps.guard, deps.body, deps.timeout, async (ctx) => {
    const run = await deps.service.completeStep(
      ctx.state.principal!,
      ctx.state.body,
      ctx.state.deadline ?? NO_DEADLINE,
    );
    ctx.status = 202;
    ctx.type = 'application/json';
    ctx.body = resourceJson(run);
  });

  router.get('/get-workflow-runs', ...deps.guard, deps.timeout, async (ctx) => {
    const page = parsePageRequest(ctx.query, deps.list.defaultLimit, deps.list.maxLimit);
    const rows = await deps.store.listSummaries(
      ctx.state.principal!.organizationId,
      page.limit + 1,
      page.beforeSeq,
    );
    sendPage(ctx, page, rows, toSummary);
  });
}
