// The template endpoints, each stating its contract (http/contract.ts); handlers only translate
// between HTTP and the template service.
import type { FromSchema } from 'json-schema-to-ts';
import { defineRoute, pageResponse, type Route } from '../http/contract.js';
import { listPage } from '../http/pagination.js';
import type { Template } from './template.js';
import {
  WorkflowTemplateDetailSchema,
  WorkflowTemplateSchema,
  WorkflowTemplateVersionSchema,
  type templateSchemas,
} from './template-schemas.js';
import type { TemplateService } from './template-service.js';

/** The WorkflowTemplate of the spec: its fields flattened, each naming its page. */
function toResource(template: Template): FromSchema<typeof WorkflowTemplateSchema> {
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

const DEFINITION_REFUSALS = [
  'duplicate_page_name',
  'duplicate_input_id',
  'invalid_template_field',
  'invalid_rule',
] as const;

export function templateRoutes(deps: {
  service: TemplateService;
  schemas: ReturnType<typeof templateSchemas>;
  defaultLimit: number;
}): Route[] {
  const { service, schemas } = deps;
  const detail = (description: string) => ({
    200: { description, schema: WorkflowTemplateDetailSchema },
  });
  /** Archive (or restore): one route each way, the same but for the state asked for. */
  const archivalRoute = (archived: boolean) =>
    defineRoute({
      operationId: archived ? 'archiveWorkflowTemplate' : 'restoreWorkflowTemplate',
      method: 'POST',
      path: archived ? '/archive-workflow-template' : '/restore-workflow-template',
      summary: archived
        ? 'Archive a template: it takes no new runs; its runs go on'
        : 'Restore an archived template: it takes new runs again',
      description: archived
        ? 'Archiving an archived template changes nothing and answers it as it is.'
        : 'Restoring a template that is not archived changes nothing.',
      scope: 'templates:write',
      body: schemas.idBody,
      responses: detail(archived ? 'the template, archived' : 'the template, not archived'),
      refusals: ['template_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.setArchived(principal, body.id, archived, deadline, idempotency),
        };
      },
    });

  return [
    defineRoute({
      operationId: 'getWorkflowTemplates',
      method: 'GET',
      path: '/get-workflow-templates',
      summary: "List the organization's templates, newest first, each at its latest version",
      description:
        'The templates that take new runs; with archived=true, the archived ones instead.',
      scope: 'templates:read',
      query: schemas.listQuery,
      responses: {
        200: pageResponse('templates', WorkflowTemplateSchema),
      },
      async handle({ principal, query }, ctx) {
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeSeq) => service.list(principal, query.archived === true, limit, beforeSeq),
          (template) => toResource(template),
        );
      },
    }),
    defineRoute({
      operationId: 'createWorkflowTemplate',
      method: 'POST',
      path: '/create-workflow-template',
      summary: 'Create a template, as its version 1',
      scope: 'templates:write',
      body: schemas.createBody,
      responses: detail('the template as stored'),
      refusals: DEFINITION_REFUSALS,
      async handle({ principal, body, deadline, idempotency }) {
        return { status: 200, body: await service.create(principal, body, deadline, idempotency) };
      },
    }),
    defineRoute({
      operationId: 'updateWorkflowTemplate',
      method: 'POST',
      path: '/update-workflow-template',
      summary: 'Save a new version of a template, expected_version + 1',
      description:
        'Versions never change once saved: runs already created keep theirs (pages and due times), new runs use the latest. A stale expected_version (another version was saved first) is a 409 and saves nothing.',
      scope: 'templates:write',
      body: schemas.updateBody,
      responses: detail('the new version, as stored'),
      refusals: [...DEFINITION_REFUSALS, 'template_not_found', 'template_version_conflict'],
      async handle({ principal, body, deadline, idempotency }) {
        return { status: 200, body: await service.update(principal, body, deadline, idempotency) };
      },
    }),
    defineRoute({
      operationId: 'getWorkflowTemplate',
      method: 'GET',
      path: '/get-workflow-template',
      summary: 'One template in full: a version (the latest when none is given) with its pages',
      scope: 'templates:read',
      query: schemas.getQuery,
      responses: detail('the template at that version'),
      refusals: ['template_not_found', 'template_version_not_found'],
      async handle({ principal, query }) {
        return { status: 200, body: await service.get(principal, query.id, query.version) };
      },
    }),
    defineRoute({
      operationId: 'getWorkflowTemplateVersions',
      method: 'GET',
      path: '/get-workflow-template-versions',
      summary: "A template's versions, newest first (without their pages)",
      scope: 'templates:read',
      query: schemas.versionsQuery,
      responses: { 200: pageResponse('versions', WorkflowTemplateVersionSchema) },
      refusals: ['template_not_found'],
      async handle({ principal, query }, ctx) {
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeVersion) => service.listVersions(principal, query.id, limit, beforeVersion),
          (row) => row.view,
        );
      },
    }),
    archivalRoute(true),
    archivalRoute(false),
  ];
}
