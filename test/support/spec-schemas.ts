// The response bodies of the spec (shared/spec/workflow-run-service.md), transcribed to JSON
// Schema as a strict client generated from it would read them: every field the spec lists has
// the spec's type (a string is never null, a date-time is an ISO 8601 date-time), and a body
// carries no field the spec does not list. Written apart from the service's own schemas on
// purpose: these check the service against the spec, not against itself.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

const ajv = new Ajv({ allErrors: true, strict: true });
// ajv-formats is CommonJS: under NodeNext its default import is module.exports, which carries
// the plugin again as .default (the one TypeScript knows about).
addFormats.default(ajv);

const string = { type: 'string' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

export const specSchemas = {
  WorkflowRun: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'organization_id', 'template_id', 'status', 'run_json', 'last_activity'],
    properties: {
      id: string,
      organization_id: string,
      template_id: string,
      status: string,
      run_json: { type: 'object' },
      last_activity: dateTime,
    },
  },
  WorkflowRunSummaryList: {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      // The spec leaves open which fields are always present; these are the run's identity.
      required: ['id', 'lastActivity', 'workflowName', 'status'],
      properties: {
        id: string,
        lastActivity: dateTime,
        workflowName: string,
        currentStepAssignee: string,
        currentStepDueDate: dateTime,
        currentStepName: string,
        status: string,
      },
    },
  },
  WorkflowTemplateList: {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'name', 'inputFields'],
      properties: {
        id: string,
        name: string,
        inputFields: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['pageName', 'inputId', 'fieldName'],
            properties: { pageName: string, inputId: string, fieldName: string },
          },
        },
      },
    },
  },
  // "A JSON object with one string field, message"; `code` (and `field`, the JSON Pointer of
  // the field at fault) are the service's documented machine-readable additions (the spec
  // leaves such codes open), strings too.
  Error: {
    type: 'object',
    additionalProperties: false,
    required: ['message'],
    properties: { message: string, code: string, field: string },
  },
} as const;

export type SpecSchema = keyof typeof specSchemas;

const compiled = new Map<SpecSchema, ValidateFunction>();

/** Throws, naming every problem, unless body is valid for the spec's schema. */
export function assertSpec(schema: SpecSchema, body: unknown, what: string = schema): void {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(specSchemas[schema]);
    compiled.set(schema, validate);
  }
  if (!validate(body)) {
    throw new Error(
      `${what} does not match the spec's ${schema}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}

const serviceCompiled = new WeakMap<object, ValidateFunction>();

/**
 * Throws unless body is valid for one of the service's own response schemas (for endpoints the
 * spec does not describe), compiled here, apart from the service's Ajv.
 */
export function assertServiceSchema(schema: object, body: unknown): void {
  let validate = serviceCompiled.get(schema);
  if (!validate) {
    // Without its $id: the service's Ajv owns that name, this one only checks the shape.
    const rest: Record<string, unknown> = { ...(schema as Record<string, unknown>) };
    delete rest.$id;
    validate = ajv.compile(rest);
    serviceCompiled.set(schema, validate);
  }
  if (!validate(body)) {
    throw new Error(
      `body does not match ${(schema as { $id?: string }).$id}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}
