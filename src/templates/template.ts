// What a workflow template is, and the checks an imported template file must pass.
import type { JSONSchemaType } from 'ajv';
import { compileChecker } from '../lib/validation.js';

export interface TemplateInputField {
  inputId: string;
  fieldName: string;
  required?: boolean;
}

export interface TemplatePage {
  name: string;
  dueInHours?: number;
  inputFields: TemplateInputField[];
}

export interface TemplateDefinition {
  name: string;
  pages: TemplatePage[];
}

/**
 * One version of a template: what runs are made from. A version never changes once saved; a
 * change to a template is a new version under the same id.
 */
export interface Template extends TemplateDefinition {
  id: string;
  organizationId: string;
  version: number;
}

const name = { type: 'string', minLength: 1, maxLength: 255 } as const;

const templateFileSchema: JSONSchemaType<TemplateDefinition> = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'pages'],
  properties: {
    name,
    pages: {
      type: 'array',
      minItems: 1,
      maxItems: 200,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'inputFields'],
        properties: {
          name,
          dueInHours: {
            type: 'number',
            exclusiveMinimum: 0,
            maximum: 24 * 365 * 10,
            nullable: true,
          },
          inputFields: {
            type: 'array',
            maxItems: 1000,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['inputId', 'fieldName'],
              properties: {
                inputId: name,
                fieldName: name,
                required: { type: 'boolean', nullable: true },
              },
            },
          },
        },
      },
    },
  },
};

const checkTemplateFile = compileChecker(templateFileSchema, 'template');

/** Checks a template file: its shape, then that page names and inputIds are unique. */
export function parseTemplateDefinition(
  value: unknown,
): { ok: true; value: TemplateDefinition } | { ok: false; message: string } {
  const checked = checkTemplateFile(value);
  if (!checked.ok) return checked;
  const pages = new Set<string>();
  const inputs = new Set<string>();
  for (const page of checked.value.pages) {
    if (pages.has(page.name)) return { ok: false, message: `duplicate page name '${page.name}'` };
    pages.add(page.name);
    for (const field of page.inputFields) {
      if (inputs.has(field.inputId)) {
        return { ok: false, message: `duplicate inputId '${field.inputId}'` };
      }
      inputs.add(field.inputId);
    }
  }
  return checked;
}

const namesCache = new WeakMap<TemplateDefinition, { inputIds: Set<string>; pages: Set<string> }>();

/**
 * The template's inputIds and page names, for validating input_fields and user_assignments.
 * Template versions never change once saved, so each cached version computes them once.
 */
export function templateNames(template: TemplateDefinition): {
  inputIds: Set<string>;
  pages: Set<string>;
} {
  let names = namesCache.get(template);
  if (!names) {
    names = {
      inputIds: new Set(template.pages.flatMap((page) => page.inputFields.map((f) => f.inputId))),
      pages: new Set(template.pages.map((page) => page.name)),
    };
    namesCache.set(template, names);
  }
  return names;
}
