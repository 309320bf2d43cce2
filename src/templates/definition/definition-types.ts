// What a template definition is, as TypeScript types: its pages, their typed input fields, when
// their steps fall due, and the rules that decide which pages a run shows, when their steps fall
// due and who is assigned. No I/O and no imports: the definition's schema
// (definition-schema.ts), its checks, the field values' parser and the rules evaluator all
// speak these types. Every property added since the first templates is optional, so a
// definition saved before them is still one, and means what it meant.

/**
 * The limits of a template definition (docs/templates.md): the schema states
 * them, and the checks that a schema cannot make name them.
 */
export const TEMPLATE_LIMITS = {
  nameLength: 255,
  pages: 200,
  fieldsPerPage: 1000,
  /** Ten years, either way for a relative due time. */
  dueInHours: 24 * 365 * 10,
  /** Ten years of days (or business days), either way. */
  dueDays: 3650,
  options: 500,
  optionLength: 255,
  helpLength: 1000,
  placeholderLength: 255,
  /** A field's default, and a literal a rule compares with. */
  valueLength: 10_000,
  /** A field's pattern, in characters (and field-values.ts caps its compiled size). */
  patternLength: 500,
  rules: 200,
  conditionsPerRule: 20,
  actionsPerRule: 20,
  oneOfValues: 100,
  /** A page's candidate users, and its candidate groups (each list). */
  candidates: 100,
  escalations: 10,
  /** The most rejections an approval page's maxRejections allows. */
  maxRejections: 1000,
  /** A decision's comment, in characters. */
  commentLength: 4000,
} as const;

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

/** The types whose values are text, which take minLength, maxLength and pattern. */
export const TEXT_TYPES: readonly FieldType[] = ['text', 'long_text', 'email', 'url'];
/** The types whose values are ordered: gt, gte, lt and lte compare them. */
export const ORDERED_TYPES: readonly FieldType[] = ['number', 'date', 'datetime'];

export interface TemplateInputField {
  inputId: string;
  fieldName: string;
  required?: boolean;
  /** 'text' when absent: what every field was before fields had types. */
  type?: FieldType;
  /** number: inclusive bounds, and whether only whole numbers are taken. */
  min?: number;
  max?: number;
  integer?: boolean;
  /** Text types: bounds on the length in characters (code points), and an RE2 pattern. */
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** select and multi_select: the choices, each a non-empty string, no two alike. */
  options?: string[];
  /** A value in the type's string form, given to a new run that was not given one. */
  default?: string;
  help?: string;
  placeholder?: string;
}

/** What a relative due time counts from. */
export type DueAnchor = 'step_start' | 'run_start' | 'field';
/** Hours; calendar days (the same local time, in the organization's time zone); weekdays. */
export type DueUnit = 'hours' | 'days' | 'business_days';

/**
 * A due time relative to an anchor: the step's start, the run's start, or the value of a date
 * or datetime field (`field`, an inputId), plus `amount` units (negative: before).
 */
export interface DueSpec {
  anchor: DueAnchor;
  field?: string;
  amount: number;
  unit: DueUnit;
}

/** What a page's step asks for: work (the default), or a decision, approved or rejected. */
export const PAGE_KINDS = ['step', 'approval'] as const;
export type PageKind = (typeof PAGE_KINDS)[number];

export const DECISIONS = ['approved', 'rejected'] as const;
export type Decision = (typeof DECISIONS)[number];

/** An approval page's maxRejections when it gives none: a send-back loop always ends. */
export const DEFAULT_MAX_REJECTIONS = 10;

/**
 * What a rejection of an approval page does: reopen an earlier page, fail the run, or go on to
 * the next page as an approval would (rules then tell the two apart by the page's decision).
 */
export type OnReject =
  { action: 'reopen'; page: string } | { action: 'fail' } | { action: 'continue' };

/** The decision an approval page's step takes by itself when nobody decides in time. */
export interface DecisionTimeout {
  hours: number;
  decision: Decision;
}

/**
 * When a step is overdue by `overdueByHours`: give it to `assignTo`, and/or add
 * `addCandidateGroups` to its candidate groups. Each applies once per visit of the step.
 */
export interface Escalation {
  overdueByHours: number;
  assignTo?: string;
  addCandidateGroups?: string[];
}

export interface TemplatePage {
  name: string;
  /** 'step' when absent: what every page was before approvals. */
  kind?: PageKind;
  /** approval: what a rejection does; failing the run when absent. */
  onReject?: OnReject;
  /** approval: the rejection that fails the run however onReject reads (10 when absent). */
  maxRejections?: number;
  /** approval: the decision applied when none was made this many hours after the step began. */
  decisionTimeout?: DecisionTimeout;
  /** Who may claim the step: user ids, group names, and fields whose values name more. */
  candidateUsers?: string[];
  candidateGroups?: string[];
  candidateUsersFromField?: string;
  candidateGroupsFromField?: string;
  /** In order of overdueByHours: what happens as the step stays overdue. */
  escalations?: Escalation[];
  /** A step of this page falls due this many hours after it starts (the first due times). */
  dueInHours?: number;
  /** A due time relative to an anchor; a page has dueInHours or due, not both. */
  due?: DueSpec;
  inputFields: TemplateInputField[];
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

/**
 * A test of one field's value. `value` (in the field's string form) for equals, not_equals,
 * contains and the comparisons; `values` for one_of; neither for empty and not_empty.
 */
export interface Condition {
  field: string;
  op: ConditionOp;
  value?: string;
  values?: string[];
}

/** A rule's conditions: all of them must hold, or any one of them. */
export type When = { all: Condition[] } | { any: Condition[] };

export type RuleAction =
  | { action: 'show_page'; page: string }
  | { action: 'hide_page'; page: string }
  | { action: 'set_due'; page: string; due: DueSpec }
  /** Assign a page's step to a user id, or to the value of a field (fromField, an inputId). */
  | { action: 'assign'; page: string; user: string }
  | { action: 'assign'; page: string; fromField: string };

export interface Rule {
  /** Shown in the history of the runs it decides; the rule's index names it otherwise. */
  name?: string;
  when: When;
  then: RuleAction[];
}

export interface TemplateDefinition {
  name: string;
  pages: TemplatePage[];
  /** Evaluated in order; where two rules decide the same thing, the later one wins. */
  rules?: Rule[];
}
