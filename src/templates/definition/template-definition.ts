// The checks a template definition must pass beyond its schema (definition-schema.ts), and the
// questions asked of one (its names, whether it uses typed fields). No I/O: a definition is
// data, checked once when it is saved; versions never change after.
import type { JSONSchemaType } from 'ajv';
import { DomainError, pointer } from '../../errors.js';
import { compileValidator } from '../../lib/validation.js';
import { TemplateDefinitionSchema } from './definition-schema.js';
import type {
  Rule,
  TemplateDefinition,
  TemplateInputField,
  TemplatePage,
} from './definition-types.js';
import { checkFieldDefinition } from './field-checks.js';
import { checkPeople } from './people-checks.js';
import { checkDueSpec, checkRules } from './rule-checks.js';

// The schema admits a little more than the types say (a rule's `when` holds one of all / any;
// an action's properties depend on its kind): checkDefinition narrows it.
const checkShape = compileValidator<TemplateDefinition>(
  TemplateDefinitionSchema as unknown as JSONSchemaType<TemplateDefinition>,
);

/**
 * Page names are unique, and so are inputIds over the whole template (input_fields is keyed by
 * them). The refusal points at the second of a pair.
 */
function checkUniqueNames(pages: readonly TemplatePage[]): void {
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
 * What a definition's schema cannot say, checked in order of the definition so that the first
 * refusal is the first problem a reader meets: unique names; each field's type, limits, pattern
 * and default; each page's due time; what pages say about people (people-checks.ts); then the
 * rules. A refusal is a DomainError whose `field`
 * points into the definition (`/pages/2/inputFields/0/pattern`, `/rules/3/then/0/page`).
 */
export function checkDefinition(definition: TemplateDefinition): void {
  checkUniqueNames(definition.pages);
  definition.pages.forEach((page, p) => {
    page.inputFields.forEach((field, f) =>
      checkFieldDefinition(field, ['pages', p, 'inputFields', f]),
    );
    if (page.due !== undefined) {
      if (page.dueInHours !== undefined) {
        throw new DomainError(
          'invalid_template_field',
          `page '${page.name}' has both dueInHours and due: give one`,
          pointer('pages', p, 'due'),
        );
      }
      checkDueSpec(definition, page.due, p, ['pages', p, 'due'], 'invalid_template_field');
    }
  });
  checkPeople(definition);
  checkRules(definition);
}

/**
 * Checks a template definition from outside (a file for the CLI): its shape and limits (the
 * same schema as the API's bodies), then checkDefinition. A refusal is a DomainError naming the
 * field.
 */
export function parseTemplateDefinition(value: unknown): TemplateDefinition {
  const definition = checkShape(value);
  checkDefinition(definition);
  return definition;
}

interface Names {
  inputIds: Set<string>;
  pages: Set<string>;
  /** Each field by its inputId. */
  fields: Map<string, TemplateInputField>;
  /** Whether any field declares a type: a run of such a template shows its fields' types. */
  typed: boolean;
  /** Whether any value must be checked beyond being a string: a type, a limit or a pattern. */
  checked: boolean;
  /** The fields with a default, which a new run that was not given them takes. */
  defaults: TemplateInputField[];
  /** Whether a page's own due time is relative to an anchor (needsTimeZone). */
  relativeDue: boolean;
}

// Keyed by the pages array, which is the template version's own (from its cache) in every
// copy of the version that a run's document holds: versions never change once saved.
const namesCache = new WeakMap<readonly TemplatePage[], Names>();

/**
 * The template's inputIds, page names and fields, for validating input_fields and
 * user_assignments and reading values. Each cached version computes them once.
 */
export function templateNames(template: Pick<TemplateDefinition, 'pages'>): Names {
  let names = namesCache.get(template.pages);
  if (!names) {
    const fields = template.pages.flatMap((page) => page.inputFields);
    names = {
      inputIds: new Set(fields.map((f) => f.inputId)),
      pages: new Set(template.pages.map((page) => page.name)),
      fields: new Map(fields.map((f) => [f.inputId, f])),
      typed: fields.some((f) => f.type !== undefined),
      checked: fields.some(
        (f) =>
          f.type !== undefined ||
          f.minLength !== undefined ||
          f.maxLength !== undefined ||
          f.pattern !== undefined,
      ),
      defaults: fields.filter((f) => f.default !== undefined && f.default !== ''),
      relativeDue: template.pages.some((page) => page.due !== undefined),
    };
    namesCache.set(template.pages, names);
  }
  return names;
}

/**
 * Whether a run of the template counts due times relative to an anchor (a page's `due`, a
 * set_due rule): such a run keeps its organization's time zone, in which days are counted.
 */
export function needsTimeZone(template: TemplateDefinition): boolean {
  if (templateNames(template).relativeDue) return true;
  const { rules } = template;
  if (!rules || rules.length === 0) return false;
  let setsDue = rulesSettingDue.get(rules);
  if (setsDue === undefined) {
    setsDue = rules.some((rule) => rule.then.some((action) => action.action === 'set_due'));
    rulesSettingDue.set(rules, setsDue);
  }
  return setsDue;
}

/** Whether a version's rules set due times: keyed by the version's own rules array. */
const rulesSettingDue = new WeakMap<readonly Rule[], boolean>();
