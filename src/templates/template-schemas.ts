// The template endpoints' schemas, and the one schema of a template definition: the API's
// bodies and the admin CLI's import-template check a definition against the same object, so
// both enforce the very same shape and limits. Responses are camelCase like the run in full;
// a field without a value is left out, never null.
import type { FromSchema } from 'json-schema-to-ts';
import { ActorSchema } from '../audit/actor.js';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';

/** The limits of a template definition (README, Templates). */
export const TEMPLATE_LIMITS = {
  nameLength: 255,
  pages: 200,
  fieldsPerPage: 1000,
  /** Ten years. */
  dueInHours: 24 * 365 * 10,
} as const;

const NAME = { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.nameLength } as const;
const ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
const VERSION = { type: 'integer', minimum: 1, maximum: 4294967295 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

/** One page of a template: its name, an optional due time, its input fields. */
const PAGE = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'inputFields'],
  properties: {
    name: { ...NAME, description: 'unique within the template; the step of a run' },
    dueInHours: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: TEMPLATE_LIMITS.dueInHours,
      description: 'a step of this page falls due this many hours after it starts',
    },
    inputFields: {
      type: 'array',
      maxItems: TEMPLATE_LIMITS.fieldsPerPage,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['inputId', 'fieldName'],
        properties: {
          inputId: { ...NAME, description: 'unique within the template: a key of input_fields' },
          fieldName: { ...NAME, description: 'display name' },
          required: {
            type: 'boolean',
            description: 'a step of this page cannot complete without a value for it',
          },
        },
      },
    },
  },
} as const;

const PAGES = {
  type: 'array',
  minItems: 1,
  maxItems: TEMPLATE_LIMITS.pages,
  items: PAGE,
  description: 'the steps of a run, in order; page names and inputIds are unique',
} as const;

/**
 * A template definition, as a file for the CLI or inside a body: unnamed (no $id), so the CLI
 * compiles it alone and each body below embeds its properties.
 */
export const TemplateDefinitionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'pages'],
  properties: { name: NAME, pages: PAGES },
} as const;

export type TemplateDefinitionInput = FromSchema<typeof TemplateDefinitionSchema>;

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
