// What a workflow template is, and the checks a definition must pass (its schema is
// template-schemas.ts, the API's and the CLI's alike).
import type { JSONSchemaType } from 'ajv';
import type { Actor } from '../audit/actor.js';
import { DomainError, pointer } from '../errors.js';
import { compileValidator } from '../lib/validation.js';
import { TemplateDefinitionSchema, type TemplateDefinitionInput } from './template-schemas.js';

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

/** A version as stored: the template version, when it was saved and by whom. */
export interface TemplateVersion extends Template {
  createdAt: Date;
  /** Undefined for versions saved before actors were recorded. */
  createdBy: Actor | undefined;
}

/** A template's head: its latest version and whether it takes new runs. */
export interface TemplateHead {
  id: string;
  organizationId: string;
  latestVersion: number;
  archived: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** Each is the other: the interfaces above are what the one schema admits. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const sameShape: Same<TemplateDefinition, TemplateDefinitionInput> = true;
void sameShape;

const checkDefinition = compileValidator<TemplateDefinition>(
  TemplateDefinitionSchema as unknown as JSONSchemaType<TemplateDefinition>,
);

/**
 * What a body's schema cannot say: page names are unique, and so are inputIds over the whole
 * template (input_fields is keyed by them). The refusal points at the second of a pair.
 */
export function checkUniqueNames(pages: readonly TemplatePage[]): void {
  const names = new Set<string>();
  const inputs = new Set<string>();
  pages.forEach((page, p) => {
    if (names.has(page.name)) {
      throw new DomainError(
        'duplicate_page_name',
        `duplicate page name '${page.name}'`,
        pointer('pages', p, 'name'),
      );
    }
    names.add(page.name);
    page.inputFields.forEach((field, f) => {
      if (inputs.has(field.inputId)) {
        throw new DomainError(
          'duplicate_input_id',
          `duplicate inputId '${field.inputId}'`,
          pointer('pages', p, 'inputFields', f, 'inputId'),
        );
      }
      inputs.add(field.inputId);
    });
  });
}

/**
 * Checks a template definition from outside (a file for the CLI): its shape and limits (the
 * same schema as the API's bodies), then that page names and inputIds are unique. A refusal
 * is a DomainError naming the field.
 */
export function parseTemplateDefinition(value: unknown): TemplateDefinition {
  const definition = checkDefinition(value);
  checkUniqueNames(definition.pages);
  return definition;
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
