// Request bodies of the run endpoints. The limits come from the configuration, so the schemas
// are built once per process from it.
import type { JSONSchemaType } from 'ajv';
import type { Config } from '../config.js';
import { compileValidator } from '../lib/validation.js';

export interface CreateRunBody {
  workflow_template_id: string;
  input_fields: Record<string, string>;
  user_assignments?: Record<string, string>;
}

export interface CompleteStepBody {
  workflow_run_id: string;
  input_fields?: Record<string, string>;
  /** The step the caller means to complete; a retry or double submit then gets a 409. */
  step_name?: string;
}

type Limits = Pick<Config, 'maxInputFields' | 'maxFieldLength' | 'maxAssigneeLength'>;

function stringMap(limits: Limits, minValueLength: number, maxValueLength = limits.maxFieldLength) {
  return {
    type: 'object',
    maxProperties: limits.maxInputFields,
    propertyNames: { type: 'string', minLength: 1, maxLength: 255 },
    additionalProperties: {
      type: 'string',
      minLength: minValueLength,
      maxLength: maxValueLength,
    },
    required: [],
  } as const;
}

export function runValidators(limits: Limits) {
  const createSchema: JSONSchemaType<CreateRunBody> = {
    type: 'object',
    additionalProperties: false,
    required: ['workflow_template_id', 'input_fields'],
    properties: {
      workflow_template_id: { type: 'string', minLength: 1, maxLength: 64 },
      input_fields: stringMap(limits, 0),
      // An assignee becomes current_step_assignee, whose width bounds MAX_ASSIGNEE_LENGTH
      // (config.ts): a longer one would be accepted here and then never applied by a worker.
      user_assignments: {
        ...stringMap(limits, 1, limits.maxAssigneeLength),
        nullable: true,
      },
    },
  };
  const completeSchema: JSONSchemaType<CompleteStepBody> = {
    type: 'object',
    additionalProperties: false,
    required: ['workflow_run_id'],
    properties: {
      workflow_run_id: { type: 'string', minLength: 1, maxLength: 64 },
      input_fields: { ...stringMap(limits, 0), nullable: true },
      step_name: { type: 'string', minLength: 1, maxLength: 255, nullable: true },
    },
  };
  return {
    createRun: compileValidator(createSchema),
    completeStep: compileValidator(completeSchema),
  };
}
