// The one JSON Schema of a template definition: the API's bodies and the admin CLI's
// import-template check a definition against the same object, so both enforce the very same
// shape and limits. What a schema cannot say (a field's properties that its type does not take,
// rules naming pages that exist, values known when a rule is evaluated) is checked after it, by
// template-definition.ts. Property names are camelCase, as a template has always been.
import { ASSIGNEE_COLUMN } from '../../config.js';
import {
  CONDITION_OPS,
  DECISIONS,
  DEFAULT_MAX_REJECTIONS,
  FIELD_TYPES,
  PAGE_KINDS,
  TEMPLATE_LIMITS,
} from './definition-types.js';

const NAME = { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.nameLength } as const;
const INPUT_ID = { ...NAME, description: 'an inputId of the template' } as const;
const PAGE_NAME = { ...NAME, description: 'a page name of the template' } as const;
const VALUE = { type: 'string', maxLength: TEMPLATE_LIMITS.valueLength } as const;

/** A due time relative to an anchor (definition-types.ts DueSpec). */
const DUE_SPEC = {
  type: 'object',
  additionalProperties: false,
  required: ['anchor', 'amount', 'unit'],
  description:
    "a due time: `amount` `unit`s after the anchor (before it when negative). Days and business days (Monday to Friday) are counted in the organization's time zone, keeping the local time; a date field's value stands for the end of that day",
  properties: {
    anchor: {
      enum: ['step_start', 'run_start', 'field'],
      description: "the step's start, the run's start, or the value of `field`",
    },
    field: {
      ...INPUT_ID,
      description: 'with anchor `field`: a date or datetime field of an earlier page',
    },
    amount: {
      type: 'number',
      minimum: -TEMPLATE_LIMITS.dueInHours,
      maximum: TEMPLATE_LIMITS.dueInHours,
      description: 'whole for days and business days; at most 3650 days or 87600 hours either way',
    },
    unit: { enum: ['hours', 'days', 'business_days'] },
  },
} as const;

const FIELD = {
  type: 'object',
  additionalProperties: false,
  required: ['inputId', 'fieldName'],
  properties: {
    inputId: { ...NAME, description: 'unique within the template: a key of input_fields' },
    fieldName: { ...NAME, description: 'display name' },
    required: {
      type: 'boolean',
      description:
        'a step of this page cannot complete without a value for it (a checkbox: without "true")',
    },
    type: {
      enum: FIELD_TYPES,
      description:
        'how the value (always a string) is read and checked; `text` when left out. Forms: number "42.5", date "2026-03-29", datetime "2026-03-29T09:30:00+02:00", checkbox "true"/"false", multi_select a JSON array of options such as "[\\"Email\\",\\"Phone\\"]"',
    },
    min: { type: 'number', description: 'number: the smallest value taken' },
    max: { type: 'number', description: 'number: the largest value taken' },
    integer: { type: 'boolean', description: 'number: whole numbers only' },
    minLength: {
      type: 'integer',
      minimum: 0,
      maximum: 1_000_000,
      description: 'text types: the fewest characters',
    },
    maxLength: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      description: 'text types: the most characters',
    },
    pattern: {
      type: 'string',
      minLength: 1,
      maxLength: TEMPLATE_LIMITS.patternLength,
      description:
        'text types: a regular expression (RE2 syntax: no backreferences or lookaround) the whole value must match',
    },
    options: {
      type: 'array',
      minItems: 1,
      maxItems: TEMPLATE_LIMITS.options,
      items: { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.optionLength },
      description: 'select and multi_select: the choices, no two alike',
    },
    default: { ...VALUE, description: "a new run's value when it is not given one" },
    help: { type: 'string', maxLength: TEMPLATE_LIMITS.helpLength },
    placeholder: { type: 'string', maxLength: TEMPLATE_LIMITS.placeholderLength },
  },
} as const;

/** A user id or a group name: as long as an assignee may be. */
const PERSON = { type: 'string', minLength: 1, maxLength: ASSIGNEE_COLUMN } as const;
const PEOPLE = {
  type: 'array',
  maxItems: TEMPLATE_LIMITS.candidates,
  uniqueItems: true,
  items: PERSON,
} as const;
/** Hours as a page's due time takes them: fractions allowed, at most ten years. */
const HOURS = { type: 'number', maximum: TEMPLATE_LIMITS.dueInHours } as const;

/** One page of a template: its name, an optional due time, its input fields. */
export const PAGE = {
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
    due: {
      ...DUE_SPEC,
      description: `${DUE_SPEC.description}; a page has dueInHours or due, not both`,
    },
    inputFields: { type: 'array', maxItems: TEMPLATE_LIMITS.fieldsPerPage, items: FIELD },
    kind: {
      enum: PAGE_KINDS,
      description:
        '`approval`: completing its step takes a decision (approved or rejected) and an optional comment; `step` when left out',
    },
    onReject: {
      type: 'object',
      additionalProperties: false,
      required: ['action'],
      description:
        'approval: what a rejection does. `reopen` (with `page`, an earlier page): that page and every page after it are open again, in order, their values kept; `fail` (the default): the run fails, the comment its error; `continue`: the run goes on to the next page, and rules test the decision as the condition field `decision:<page name>`',
      properties: { action: { enum: ['reopen', 'fail', 'continue'] }, page: PAGE_NAME },
    },
    maxRejections: {
      type: 'integer',
      minimum: 1,
      maximum: TEMPLATE_LIMITS.maxRejections,
      description: `approval: the rejection that fails the run even when onReject reopens (${DEFAULT_MAX_REJECTIONS} when left out)`,
    },
    decisionTimeout: {
      type: 'object',
      additionalProperties: false,
      required: ['hours', 'decision'],
      description:
        'approval: when nobody decided this many hours after the step began, the service applies `decision` (recorded with the system as actor)',
      properties: {
        hours: { ...HOURS, exclusiveMinimum: 0 },
        decision: { enum: DECISIONS },
      },
    },
    candidateUsers: { ...PEOPLE, description: 'user ids who may claim the step' },
    candidateGroups: { ...PEOPLE, description: 'groups whose members may claim the step' },
    candidateUsersFromField: {
      ...INPUT_ID,
      description:
        'a field of this page (its value given when the run is created) or an earlier one, whose value names more candidate users (a multi_select: each of its options)',
    },
    candidateGroupsFromField: {
      ...INPUT_ID,
      description:
        'a field of this page or an earlier one, whose value names more candidate groups',
    },
    escalations: {
      type: 'array',
      maxItems: TEMPLATE_LIMITS.escalations,
      description:
        'in order of overdueByHours: once the step has been overdue that long, it is given to `assignTo` and/or `addCandidateGroups` join its candidates; each once per visit of the step',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['overdueByHours'],
        minProperties: 2,
        properties: {
          overdueByHours: { ...HOURS, minimum: 0 },
          assignTo: PERSON,
          addCandidateGroups: { ...PEOPLE, minItems: 1 },
        },
      },
    },
  },
} as const;

export const PAGES = {
  type: 'array',
  minItems: 1,
  maxItems: TEMPLATE_LIMITS.pages,
  items: PAGE,
  description: 'the steps of a run, in order; page names and inputIds are unique',
} as const;

const CONDITION = {
  type: 'object',
  additionalProperties: false,
  required: ['field', 'op'],
  properties: {
    field: INPUT_ID,
    op: {
      enum: CONDITION_OPS,
      description:
        'gt, gte, lt and lte compare numbers, dates and datetimes; contains looks into text or a multi_select',
    },
    value: {
      ...VALUE,
      description: "in the field's string form; for every op but one_of, empty and not_empty",
    },
    values: {
      type: 'array',
      minItems: 1,
      maxItems: TEMPLATE_LIMITS.oneOfValues,
      items: VALUE,
      description: 'one_of: the values',
    },
  },
} as const;

const CONDITIONS = {
  type: 'array',
  minItems: 1,
  maxItems: TEMPLATE_LIMITS.conditionsPerRule,
  items: CONDITION,
} as const;

const RULE = {
  type: 'object',
  additionalProperties: false,
  required: ['when', 'then'],
  properties: {
    name: { ...NAME, description: 'shown in the history of the runs it decides' },
    when: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      description: 'all of the conditions hold, or any one of them',
      properties: { all: CONDITIONS, any: CONDITIONS },
    },
    then: {
      type: 'array',
      minItems: 1,
      maxItems: TEMPLATE_LIMITS.actionsPerRule,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['action', 'page'],
        description:
          'show_page, hide_page (a page some show_page names is hidden unless a rule shows it), set_due (with `due`), assign (with `user` or `fromField`)',
        properties: {
          action: { enum: ['show_page', 'hide_page', 'set_due', 'assign'] },
          page: PAGE_NAME,
          due: DUE_SPEC,
          user: { type: 'string', minLength: 1, maxLength: ASSIGNEE_COLUMN },
          fromField: {
            ...INPUT_ID,
            description: "assign: the field whose value is the step's assignee",
          },
        },
      },
    },
  },
} as const;

export const RULES = {
  type: 'array',
  maxItems: TEMPLATE_LIMITS.rules,
  items: RULE,
  description:
    'evaluated in order when a run reaches a page, from the values known then; where two rules decide the same thing, the later one wins',
} as const;

/**
 * A template definition, as a file for the CLI or inside a body: unnamed (no $id), so the CLI
 * compiles it alone and each body embeds its properties.
 */
export const TemplateDefinitionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'pages'],
  properties: { name: NAME, pages: PAGES, rules: RULES },
} as const;
