// The template endpoints' shapes as the templates screens read them (the API document's
// WorkflowTemplate, WorkflowTemplateDetail and WorkflowTemplateVersion), and a template's
// definition as the API's definition-types.ts has it: typed fields, due times and rules.

/** Who saved a version: an API key (its id, and its name when it has one), or the service. */
export type Actor =
  { type: 'api_key'; id: string; name?: string } | { type: 'system' } | { type: 'admin_cli' };

/** A field's type: how its value (always a string on the wire) is read and checked. */
export const FIELD_TYPES = [
  'text',
  'long_text',
  'number',
  'email',
  'url',
  'date',
  'datetime',
  'select',
  'multi_select',
  'checkbox',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** The types whose values are text: they take minLength, maxLength and pattern. */
export const TEXT_TYPES: readonly FieldType[] = ['text', 'long_text', 'email', 'url'];

export interface TemplateField {
  inputId: string;
  fieldName: string;
  required?: boolean;
  /** 'text' when absent. */
  type?: FieldType;
  /** number: inclusive bounds, and whether only whole numbers are taken. */
  min?: number;
  max?: number;
  integer?: boolean;
  /** Text types: bounds on the length in characters, and an RE2 pattern the whole value matches. */
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** select and multi_select: the choices. */
  options?: string[];
  /** A new run's value when it is given none, in the type's string form. */
  default?: string;
  help?: string;
  placeholder?: string;
}

export type DueAnchor = 'step_start' | 'run_start' | 'field';
export type DueUnit = 'hours' | 'days' | 'business_days';

/** A due time: `amount` `unit`s after the anchor (before it when negative). */
export interface DueSpec {
  anchor: DueAnchor;
  /** With anchor `field`: a date or datetime field of an earlier page (its inputId). */
  field?: string;
  amount: number;
  unit: DueUnit;
}

export interface TemplatePage {
  name: string;
  dueInHours?: number;
  /** A due time relative to an anchor; a page has dueInHours or due, not both. */
  due?: DueSpec;
  inputFields: TemplateField[];
}

export const CONDITION_OPS = [
  'equals',
  'not_equals',
  'one_of',
  'contains',
  'empty',
  'not_empty',
  'gt',
  'gte',
  'lt',
  'lte',
] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

/** A test of one field's value: `value` for most ops, `values` for one_of, neither for (not_)empty. */
export interface Condition {
  field: string;
  op: ConditionOp;
  value?: string;
  values?: string[];
}

export type When = { all: Condition[] } | { any: Condition[] };

export type RuleAction =
  | { action: 'show_page'; page: string }
  | { action: 'hide_page'; page: string }
  | { action: 'set_due'; page: string; due: DueSpec }
  | { action: 'assign'; page: string; user: string }
  | { action: 'assign'; page: string; fromField: string };

export interface Rule {
  name?: string;
  when: When;
  then: RuleAction[];
}

/** A list item of GET /get-workflow-templates: the latest version's fields, flattened. */
export interface TemplateListItem {
  id: string;
  name: string;
  inputFields: Array<{ pageName: string; inputId: string; fieldName: string }>;
}

/** GET /get-workflow-template (and the answer of every template write): one version in full. */
export interface TemplateDetail {
  id: string;
  version: number;
  latestVersion: number;
  archived: boolean;
  name: string;
  pages: TemplatePage[];
  /** Absent when the version has none. */
  rules?: Rule[];
  createdAt: string;
  updatedAt: string;
  versionCreatedAt: string;
  versionCreatedBy?: Actor;
}

/** A list item of GET /get-workflow-template-versions. */
export interface TemplateVersion {
  version: number;
  name: string;
  createdAt: string;
  createdBy?: Actor;
  pageCount: number;
  fieldCount: number;
}

/**
 * A number as the editor sends it: a number when the text typed is one; otherwise the text as
 * typed, which the API refuses naming the input.
 */
export type Typed = number | string;

/** A field as the editor sends it (its numbers as typed). */
export type DraftFieldBody = Omit<TemplateField, 'min' | 'max' | 'minLength' | 'maxLength'> & {
  min?: Typed;
  max?: Typed;
  minLength?: Typed;
  maxLength?: Typed;
};

/** A due time as the editor sends it; an unset anchor or unit is sent empty, for the API to name. */
export interface DueBody {
  anchor: DueAnchor | '';
  field?: string;
  amount: Typed;
  unit: DueUnit | '';
}

export interface ActionBody {
  action: RuleAction['action'];
  page: string;
  due?: DueBody;
  user?: string;
  fromField?: string;
}

export interface RuleBody {
  name?: string;
  when: When;
  then: ActionBody[];
}

/** A template definition, the body of create-workflow-template (pages and rules also of update). */
export interface TemplateDefinition {
  name: string;
  pages: Array<{
    name: string;
    dueInHours?: Typed;
    due?: DueBody;
    inputFields: DraftFieldBody[];
  }>;
  rules?: RuleBody[];
}

/** An actor in words. */
export function actorName(actor: Actor | undefined): string {
  if (!actor) return 'not recorded';
  if (actor.type === 'api_key') return actor.name ?? `key ${actor.id.slice(0, 8)}`;
  return actor.type === 'system' ? 'the service' : 'admin CLI';
}
