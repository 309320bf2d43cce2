// The template endpoint, stating its contract (http/contract.ts).
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';
import { defineRoute, pageResponse, type Route } from '../http/contract.js';
import { listPage } from '../http/pagination.js';
import type { Template } from './template.js';
import type { TemplateStore } from './template-store.js';

export const WorkflowTemplateSchema = {
  $id: 'WorkflowTemplate',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'inputFields'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    inputFields: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['pageName', 'inputId', 'fieldName'],
        properties: {
          pageName: { type: 'string', description: 'the page the field belongs to' },
          inputId: { type: 'string', description: 'the key of input_fields for this field' },
          fieldName: { type: 'string', description: 'display name' },
        },
      },
    },
  },
} as const;

export function templateSchemas(limits: Pick<Config, 'listDefaultLimit' | 'listMaxLimit'>) {
  return {
    listQuery: {
      $id: 'GetWorkflowTemplatesQuery',
      type: 'object',
      additionalProperties: false,
      properties: pageQueryProperties(limits),
    },
  } as const;
}

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

export function templateRoutes(deps: {
  store: TemplateStore;
  schemas: ReturnType<typeof templateSchemas>;
  defaultLimit: number;
}): Route[] {
  return [
    defineRoute({
      operationId: 'getWorkflowTemplates',
      method: 'GET',
      path: '/get-workflow-templates',
      summary: "List the organization's templates, newest first",
      scope: 'templates:read',
      query: deps.schemas.listQuery,
      responses: {
        200: pageResponse('templates', WorkflowTemplateSchema),
      },
      async handle({ principal, query }, ctx) {
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeSeq) => deps.store.list(principal.organizationId, limit, beforeSeq),
          (template) => toResource(template),
        );
      },
    }),
  ];
}
