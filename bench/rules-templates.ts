// The rules phase's templates and values. Three templates of the same 10 pages and 200 fields:
// - A: typed fields (numbers with bounds, dates, datetimes, selects, multi-selects, checkboxes,
//   emails, text with RE2 patterns, long text, URLs) and 50 rules: pages hidden, or not shown,
//   by earlier pages' values; due times set in business days from a date field; steps assigned
//   from an email field; and rules that test many values without firing;
// - B: the same typed fields and pages, no rules;
// - C: the same pages with untyped (text) fields, as every template was before fields had types.
// Every page falls due 72 hours after it starts (its own dueInHours), so every step of every
// template has a due time and a timer: what A's rules change is which time, not whether.
// VALUES fill in every field validly; with them A's runs pass over pages 3, 5 and 8 (hidden,
// not shown, hidden) and every other page after the first gets its due time and its assignee
// from A's rules.
import type {
  Condition,
  Rule,
  TemplateDefinition,
  TemplateInputField,
  TemplatePage,
} from '../src/templates/definition/definition-types.js';

export type RulesTemplateKey = 'A' | 'B' | 'C';
export const RULES_TEMPLATE_KEYS: readonly RulesTemplateKey[] = ['A', 'B', 'C'];
export const RULES_TEMPLATE_LABELS: Record<RulesTemplateKey, string> = {
  A: 'typed fields and rules',
  B: 'typed fields, no rules',
  C: 'untyped fields, no rules',
};

export const RULES_PAGES = 10;
export const FIELDS_PER_PAGE = 20;
/** The pages A's rules pass over, given VALUES: hidden, not shown, hidden. */
export const SKIPPED_PAGES: readonly number[] = [3, 5, 8];
/** A's pages that become steps, given VALUES. */
export const VISIBLE_PAGES: readonly number[] = [0, 1, 2, 4, 6, 7, 9];
/** The organization's time zone, in which A's business days are counted. */
export const RULES_TIME_ZONE = 'Europe/Berlin';
const DUE_IN_HOURS = 72;

const KINDS = ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon'];
const LEVELS = ['Low', 'Medium', 'High', 'Critical'];
const REGIONS = Array.from({ length: 12 }, (_, i) => `Region ${i + 1}`);
const CHANNELS = ['Email', 'Phone', 'Post', 'Chat', 'Fax'];
const TAGS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

type FieldShape = Omit<TemplateInputField, 'inputId' | 'fieldName'>;

/** One field of every page: its id suffix, its typed definition, its value on page p. */
interface FieldSpec {
  id: string;
  name: string;
  typed: FieldShape;
  value: (page: number) => string;
}

const two = (n: number) => String(n).padStart(2, '0');

const FIELDS: readonly FieldSpec[] = [
  {
    id: 'count',
    name: 'Count',
    typed: { type: 'number', integer: true, min: 0, max: 1000, required: true },
    value: (p) => String(40 + p),
  },
  {
    id: 'amount',
    name: 'Amount',
    typed: { type: 'number', min: -1_000_000, max: 1_000_000 },
    value: (p) => `${1234 + p}.56`,
  },
  {
    id: 'score',
    name: 'Score',
    typed: { type: 'number', integer: true, min: 1, max: 10 },
    value: () => '7',
  },
  {
    id: 'start',
    name: 'Start date',
    typed: { type: 'date', required: true },
    value: (p) => `2031-03-${two(10 + p)}`,
  },
  { id: 'end', name: 'End date', typed: { type: 'date' }, value: (p) => `2031-04-${two(1 + p)}` },
  {
    id: 'at',
    name: 'Appointment',
    typed: { type: 'datetime' },
    value: (p) => `2031-03-14T09:${two(10 + p)}:00+01:00`,
  },
  {
    id: 'seen',
    name: 'Last seen',
    typed: { type: 'datetime' },
    value: () => '2026-01-02T03:04:05.678Z',
  },
  {
    id: 'kind',
    name: 'Kind',
    typed: { type: 'select', options: KINDS, required: true },
    value: (p) => KINDS[p % 2]!,
  },
  { id: 'level', name: 'Level', typed: { type: 'select', options: LEVELS }, value: () => 'Medium' },
  {
    id: 'region',
    name: 'Region',
    typed: { type: 'select', options: REGIONS },
    value: (p) => REGIONS[p]!,
  },
  {
    id: 'channels',
    name: 'Channels',
    typed: { type: 'multi_select', options: CHANNELS },
    value: () => '["Email","Chat"]',
  },
  {
    id: 'tags',
    name: 'Tags',
    typed: { type: 'multi_select', options: TAGS },
    value: () => '["a","b"]',
  },
  {
    id: 'agreed',
    name: 'Agreed',
    typed: { type: 'checkbox', required: true },
    value: () => 'true',
  },
  { id: 'urgent', name: 'Urgent', typed: { type: 'checkbox' }, value: () => 'false' },
  {
    id: 'owner',
    name: 'Owner',
    typed: { type: 'email', required: true },
    value: (p) => `owner.${p}@example.com`,
  },
  {
    id: 'contact',
    name: 'Contact',
    typed: { type: 'email' },
    value: (p) => `contact+${p}@mail.example.org`,
  },
  {
    id: 'code',
    name: 'Case code',
    typed: { type: 'text', pattern: '[A-Z]{3}-[0-9]{4}' },
    value: (p) => `ABC-${1000 + p}`,
  },
  {
    id: 'ref',
    name: 'Reference',
    typed: { type: 'text', pattern: '[a-z0-9]+(?:-[a-z0-9]+)*', maxLength: 64 },
    value: (p) => `order-2031-${p}`,
  },
  {
    id: 'note',
    name: 'Notes',
    typed: { type: 'long_text', maxLength: 2000 },
    value: (p) =>
      `Notes for section ${p}: the customer called twice, the documents are complete and the ` +
      'next review is planned.',
  },
  {
    id: 'site',
    name: 'Web page',
    typed: { type: 'url' },
    value: (p) => `https://example.com/cases/${p}?tab=details`,
  },
];

if (FIELDS.length !== FIELDS_PER_PAGE) throw new Error('rules templates: 20 fields a page');

/** A field's inputId: its page and its kind (`s4_owner`). */
export const inputId = (page: number, id: string) => `s${page}_${id}`;
export const pageName = (page: number) => `Section ${page}`;

function pages(typed: boolean): TemplatePage[] {
  return Array.from({ length: RULES_PAGES }, (_, p) => ({
    name: pageName(p),
    dueInHours: DUE_IN_HOURS,
    inputFields: FIELDS.map((f) => ({
      inputId: inputId(p, f.id),
      fieldName: `${f.name} (${p})`,
      // Required fields were there before types: the untyped template keeps them.
      ...(typed ? f.typed : f.typed.required ? { required: true } : {}),
    })),
  }));
}

/** Every field's value: what every create sends, and what every completion sends again. */
export const VALUES: Readonly<Record<string, string>> = Object.fromEntries(
  Array.from({ length: RULES_PAGES }, (_, p) =>
    FIELDS.map((f) => [inputId(p, f.id), f.value(p)] as const),
  ).flat(),
);

/** The values of one page's fields (what a completion of its step sends). */
export function pageValues(page: number): Record<string, string> {
  return Object.fromEntries(FIELDS.map((f) => [inputId(page, f.id), VALUES[inputId(page, f.id)]!]));
}

const on = (page: number, id: string) => inputId(page, id);

/** Conditions that hold with VALUES, cycling over kinds of test, on page q. */
const HOLDING: ReadonlyArray<(q: number) => Condition> = [
  (q) => ({ field: on(q, 'count'), op: 'gte', value: '10' }),
  (q) => ({ field: on(q, 'kind'), op: 'one_of', values: ['Alpha', 'Beta'] }),
  (q) => ({ field: on(q, 'code'), op: 'contains', value: 'ABC' }),
  (q) => ({ field: on(q, 'site'), op: 'not_empty' }),
  (q) => ({ field: on(q, 'at'), op: 'gt', value: '2030-01-01T00:00:00Z' }),
  (q) => ({ field: on(q, 'agreed'), op: 'equals', value: 'true' }),
  (q) => ({ field: on(q, 'end'), op: 'lte', value: '2031-12-31' }),
  (q) => ({ field: on(q, 'tags'), op: 'contains', value: 'a' }),
];

/** The rules acting on page p (1..9), each testing the page before it (and one before that). */
function pageRules(p: number): Rule[] {
  const page = pageName(p);
  const prev = p - 1;
  const rules: Rule[] = [
    {
      name: `due of ${page}`,
      when: {
        all: [
          { field: on(prev, 'agreed'), op: 'equals', value: 'true' },
          { field: on(prev, 'count'), op: 'gte', value: '10' },
        ],
      },
      then: [
        {
          action: 'set_due',
          page,
          due: { anchor: 'field', field: on(prev, 'start'), amount: 3, unit: 'business_days' },
        },
      ],
    },
    {
      name: `owner of ${page}`,
      when: {
        any: [
          { field: on(prev, 'kind'), op: 'one_of', values: ['Alpha', 'Beta'] },
          { field: on(prev, 'channels'), op: 'contains', value: 'Email' },
        ],
      },
      then: [{ action: 'assign', page, fromField: on(prev, 'owner') }],
    },
    // Two that do not fire (a later rule would win): their conditions are read all the same.
    {
      name: `large amounts of ${page}`,
      when: { all: [{ field: on(prev, 'amount'), op: 'gt', value: '999999' }] },
      then: [{ action: 'assign', page, user: 'nobody' }],
    },
    {
      name: `stale or urgent ${page}`,
      when: {
        any: [
          { field: on(prev, 'seen'), op: 'lt', value: '2000-01-01T00:00:00Z' },
          { field: on(prev, 'note'), op: 'contains', value: 'zzz' },
          { field: on(prev, 'urgent'), op: 'equals', value: 'true' },
        ],
      },
      then: [{ action: 'set_due', page, due: { anchor: 'step_start', amount: 1, unit: 'hours' } }],
    },
  ];
  if (p === 3 || p === 8) {
    // Hidden: every condition holds.
    rules.push({
      name: `skip ${page}`,
      when: {
        all: [
          { field: on(prev, 'level'), op: 'equals', value: 'Medium' },
          { field: on(p - 2, 'score'), op: 'lte', value: '7' },
          { field: on(prev, 'end'), op: 'gt', value: '2031-01-01' },
        ],
      },
      then: [{ action: 'hide_page', page }],
    });
  } else if (p === 5) {
    // Shown only when urgent, which it is not: not shown.
    rules.push({
      name: `urgent ${page}`,
      when: { all: [{ field: on(prev, 'urgent'), op: 'equals', value: 'true' }] },
      then: [{ action: 'show_page', page }],
    });
  } else if (p === 7) {
    // Shown: the tags are the same set in another order.
    rules.push({
      name: `tagged ${page}`,
      when: {
        any: [
          { field: on(prev, 'tags'), op: 'equals', value: '["b","a"]' },
          { field: on(prev, 'urgent'), op: 'equals', value: 'true' },
        ],
      },
      then: [{ action: 'show_page', page }],
    });
  } else {
    rules.push({
      name: `paper only ${page}`,
      when: { all: [{ field: on(prev, 'channels'), op: 'equals', value: '["Phone","Post"]' }] },
      then: [{ action: 'hide_page', page }],
    });
  }
  return rules;
}

/** Rules that test nine values of earlier pages each; the last one fails, so none fires. */
function wideRules(): Rule[] {
  return [2, 4, 6, 7, 9].map((target) => ({
    name: `wide check of ${pageName(target)}`,
    when: {
      all: [
        ...HOLDING.map((condition, i) => condition(i % target)),
        { field: on(target - 1, 'urgent'), op: 'equals', value: 'true' },
      ],
    },
    then: [{ action: 'hide_page', page: pageName(target) }],
  }));
}

/** A's 50 rules. */
export function rulesOfA(): Rule[] {
  const rules = [
    ...Array.from({ length: RULES_PAGES - 1 }, (_, i) => pageRules(i + 1)).flat(),
    ...wideRules(),
  ];
  if (rules.length !== 50) throw new Error(`rules templates: A has ${rules.length} rules, not 50`);
  return rules;
}

/** The definition of template A, B or C. */
export function rulesDefinition(key: RulesTemplateKey): TemplateDefinition {
  switch (key) {
    case 'A':
      return { name: 'Bench rules A (typed, rules)', pages: pages(true), rules: rulesOfA() };
    case 'B':
      return { name: 'Bench rules B (typed)', pages: pages(true) };
    case 'C':
      return { name: 'Bench rules C (untyped)', pages: pages(false) };
  }
}

/** The body of every create of the template: every field filled in, no assignments. */
export function rulesCreateBody(templateId: string): string {
  return JSON.stringify({ workflow_template_id: templateId, input_fields: VALUES });
}
