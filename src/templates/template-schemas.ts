// The template endpoints' schemas, around the one schema of a template definition
// (definition/definition-schema.ts). Responses are camelCase like the run in full; a field
// without a value is left out, never null.
import type { FromSchema } from 'json-schema-to-ts';
import { ActorSchema } from '../audit/actor.js';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';
import { PAGE, PAGES, RULES, TemplateDefinitionSchema } from './definition/definition-schema.js';
import { TEMPLATE_LIMITS } from './definition/definition-types.js';

const NAME = { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.nameLength } as const;
const ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
const VERSION = { type: 'integer', minimum: 1, maximum: 4294967295 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

/** The WorkflowTemplate of the spec (the list): its fields flattened, each naming its page. */
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

/** One version of a template in full, with the template's own state. */
export const WorkflowTemplateDetailSchema = {
  $id: 'WorkflowTemplateDetail',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'version',
    'latestVersion',
    'archived',
    'name',
    'pages',
    'createdAt',
    'updatedAt',
    'versionCreatedAt',
  ],
  properties: {
    id: { type: 'string' },
    version: { ...VERSION, description: 'the version shown' },
    latestVersion: { ...VERSION, description: 'the version new runs use' },
    archived: { type: 'boolean', description: 'an archived template takes no new runs' },
    name: { type: 'string' },
    pages: { type: 'array', items: PAGE },
    rules: { ...RULES, description: `${RULES.description}; absent when the version has none` },
    createdAt: { ...dateTime, description: 'when the template (its version 1) was created' },
    updatedAt: {
      ...dateTime,
      description: 'when the template last changed: a new version, archived or restored',
    },
    versionCreatedAt: { ...dateTime, description: 'when this version was saved' },
    versionCreatedBy: {
      ...ActorSchema,
      description: `who saved this version: ${ActorSchema.description}; absent for versions saved before actors were recorded`,
    },
  },
} as const;

export type WorkflowTemplateDetail = FromSchema<typeof WorkflowTemplateDetailSchema>;

/** One version in a template's list of versions: what it is, not its pages. */
export const WorkflowTemplateVersionSchema = {
  $id: 'WorkflowTemplateVersion',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'name', 'createdAt', 'pageCount', 'fieldCount'],
  properties: {
    version: VERSION,
    name: { type: 'string' },
    createdAt: { ...dateTime, description: 'when this version was saved' },
    createdBy: {
      ...ActorSchema,
      description: `who saved it: ${ActorSchema.description}; absent for versions saved before actors were recorded`,
    },
    pageCount: { type: 'integer', minimum: 1 },
    fieldCount: { type: 'integer', minimum: 0, description: 'input fields over every page' },
  },
} as const;

export type WorkflowTemplateVersionView = FromSchema<typeof WorkflowTemplateVersionSchema>;

export function templateSchemas(limits: Pick<Config, 'listDefaultLimit' | 'listMaxLimit'>) {
  return {
    listQuery: {
      $id: 'GetWorkflowTemplatesQuery',
      type: 'object',
      additionalProperties: false,
      properties: {
        archived: {
          type: 'boolean',
          description: 'true: the archived templates instead of those that take runs',
        },
        ...pageQueryProperties(limits),
      },
    },
    createBody: {
      $id: 'CreateWorkflowTemplateRequest',
      ...TemplateDefinitionSchema,
    },
    updateBody: {
      $id: 'UpdateWorkflowTemplateRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id', 'expected_version', 'pages'],
      properties: {
        id: ID,
        expected_version: {
          ...VERSION,
          description:
            'the latest version as the caller read it: the new version is this + 1, or 409 when another was saved meanwhile',
        },
        name: {
          ...NAME,
          description: "the new version's name; the previous version's if left out",
        },
        pages: PAGES,
        rules: RULES,
      },
    },
    idBody: {
      $id: 'WorkflowTemplateIdRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: ID },
    },
    getQuery: {
      $id: 'GetWorkflowTemplateQuery',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: ID,
        version: { ...VERSION, description: 'the version to show; the latest if left out' },
      },
    },
    versionsQuery: {
      $id: 'GetWorkflowTemplateVersionsQuery',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: ID, ...pageQueryProperties(limits) },
    },
  } as const;
}

type Schemas = ReturnType<typeof templateSchemas>;
export type CreateTemplateBody = FromSchema<Schemas['createBody']>;
export type UpdateTemplateBody = FromSchema<Schemas['updateBody']>;
