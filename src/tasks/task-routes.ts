// The task inbox's endpoint, stating its contract (http/contract.ts); the handler only
// translates between HTTP and the task service.
import { defineRoute, pageResponse, type Route } from '../http/contract.js';
import { nextPageLink } from '../http/pagination.js';
import { TaskSchema, type taskSchemas } from './task-schemas.js';
import type { TaskService } from './task-service.js';

export function taskRoutes(deps: {
  service: TaskService;
  schemas: ReturnType<typeof taskSchemas>;
  defaultLimit: number;
}): Route[] {
  return [
    defineRoute({
      operationId: 'getTasks',
      method: 'GET',
      path: '/get-tasks',
      summary: "The organization's task inbox: every active run's current step, filtered",
      description:
        'Filters combine. Ordered by due date (tasks without one last), then by start, or by start alone (order=started); pages by cursor, the next announced in a Link header. claimable_by (with group, repeatable) lists the unclaimed tasks that user may claim.',
      scope: 'runs:read',
      query: deps.schemas.listQuery,
      responses: { 200: pageResponse('tasks', TaskSchema) },
      async handle({ principal, query }, ctx) {
        const limit = query.limit ?? deps.defaultLimit;
        const page = await deps.service.list(principal, query, limit);
        const headers: Record<string, string> = {};
        if (page.next) headers.Link = nextPageLink(ctx, limit, page.next);
        return { status: 200, body: page.tasks, headers };
      },
    }),
  ];
}
