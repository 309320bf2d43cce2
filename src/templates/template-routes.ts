import type { Router } from '@koa/router';
import type { Middleware } from 'koa';
import type { AppState } from '../http/context.js';
import { parsePageRequest, sendPage } from '../http/pagination.js';
import type { Template } from './template.js';
import type { TemplateStore } from './template-store.js';

/** The WorkflowTemplate of the spec: its fields flattened, each naming its page. */
function toResource(template: Template) {
  return {
    id: template.id,
    name: template.name,
    inputFields: template.pages.flatMap((page) =>
      page.inputFields.map((field) => ({
        pageName: page.name,
        inputId: field.inputId,
        fieldName: field.fieldName,
      })),
    ),
  };
}

export function templateRoutes(
  router: Router<AppState>,
  deps: {
    store: TemplateStore;
    list: { defaultLimit: number; maxLimit: number };
    guard: Middleware<AppState>[];
    timeout: Middleware<AppState>;
  },
): void {
  router.get('/get-workflow-templates', ...deps.guard, deps.timeout, async (ctx) => {
    const page = parsePageRequest(ctx.query, deps.list.defaultLimit, deps.list.maxLimit);
    const rows = await deps.store.list(
      ctx.state.principal!.organizationId,
      page.limit + 1,
      page.beforeSeq,
    );
    sendPage(ctx, page, rows, toResource);
  });
}
