// The rules of a template version: which pages a run shows, when their steps fall due and who is
// assigned, decided from the run's field values. Pure: no I/O, no clock.
//
// The contract:
// - A version may hold `rules`, evaluated in order. A rule is `when` ({all: [...]}: every
//   condition holds; {any: [...]}: at least one does) and `then`, its actions, each acting on
//   one page:
//   - show_page / hide_page: a page named by ANY show_page action of any rule is hidden unless a
//     firing rule shows it; a page no rule shows or hides is visible.
//   - set_due: a due spec for the page's step.
//   - assign: the page's step goes to a user id (`user`), or to the value of a field
//     (`fromField`).
//   When two firing rules decide the same thing for a page, the LATER one wins: for visibility a
//   later hide beats an earlier show and vice versa; the same for due and assign. Within one
//   rule the later action would win too, but the save-time check refuses a rule deciding the
//   same thing of a page twice.
// - A rule's decision about page P is made when a run reaches P (the step before it completes,
//   or the run starts), from the values known then. So at save time every condition's field
//   must be on a page strictly before every page the rule acts on, and an assign's `fromField`
//   or a set_due's anchor field strictly before the page of that action.
// - A condition tests one field's value, by the field's type:
//   - absent or empty (isEmptyValue): `empty` holds, `not_equals` holds, every other op fails.
//   - equals / not_equals: text, long_text, email, url, select: the exact string; number: the
//     same number; date: the same date; datetime: the same instant; checkbox: the same boolean;
//     multi_select: the same set of options, in any order.
//   - one_of (`values`): equals any of them; multi_select: the selection shares at least one
//     option with `values`.
//   - contains (`value`): text types: a case-sensitive substring; multi_select: the selection
//     includes that option. Refused at save for other types.
//   - gt / gte / lt / lte: number, date and datetime only; refused at save for other types.
//   - a stored value that does not parse (values are checked on entry, so it should not
//     happen) matches nothing: equals, one_of, contains and comparisons fail, not_equals
//     holds, empty fails, not_empty holds.
// - checkRules is the save-time check (after the schema, definition-schema.ts). compileRules
//   and decidePage trust it, yet never throw on a definition of the schema's shape that skipped
//   it: an unknown page is ignored, a condition on an unknown field sees no value, a literal
//   that does not parse matches nothing (as a stored value that does not parse).
// - Cost: a template without rules pays nothing (one shared decision, no allocation). Else
//   compileRules runs once per definition object; decidePage looks only at the rules acting on
//   the page and parses each field value they test at most once, on first use.
import { DomainError, pointer } from '../../errors.js';
import {
  ORDERED_TYPES,
  TEXT_TYPES,
  type Condition,
  type ConditionOp,
  type DueSpec,
  type FieldType,
  type Rule,
  type RuleAction,
  type TemplateDefinition,
  type TemplateInputField,
} from './definition-types.js';
import {
  fieldType,
  isEmptyValue,
  parseFieldValue,
  valueProblem,
  type FieldValue,
} from './field-values.js';

export const RULE_LIMITS = {
  rules: 200,
  conditionsPerRule: 20,
  actionsPerRule: 20,
  oneOfValues: 100,
} as const;

/** What the rules decide of one page for a run, given its values. */
export interface PageDecision {
  visible: boolean;
  /**
   * Absent when no rule names the page for visibility (visible by default). 'not_shown': hidden
   * because some show_page rule names it and none fired — `rule` is then the LAST show_page rule
   * naming the page.
   */
  visibility?: { rule: number; how: 'shown' | 'hidden' | 'not_shown' };
  /** The last firing set_due for the page. */
  due?: { spec: DueSpec; rule: number };
  /** The last firing assign for the page. */
  assign?: { rule: number; user: string } | { rule: number; fromField: string };
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/** A field value reduced to something `===` compares: each type maps to one JS type. */
type Key = string | number | boolean;

interface CompiledCondition {
  /** Where the field's value is cached during one decidePage call. */
  readonly slot: number;
  readonly op: ConditionOp;
  /** False when the literal did not parse: the condition then matches no value. */
  readonly ok: boolean;
  /** equals, not_equals and the comparisons on a single-valued type: the literal's key. */
  readonly key: Key | undefined;
  /** equals and not_equals on a multi_select: the literal's distinct options. */
  readonly options: readonly string[] | undefined;
  /** one_of: the literals' keys (a multi_select's: options). */
  readonly set: ReadonlySet<Key> | undefined;
  /** contains: the substring, or the option. */
  readonly text: string;
}

interface CompiledRule {
  readonly index: number;
  readonly all: boolean;
  readonly conditions: readonly CompiledCondition[];
}

/** One rule acting on one page: the rule, and its actions on that page, in order. */
interface PageEntry {
  readonly rule: CompiledRule;
  readonly actions: readonly RuleAction[];
}

interface PagePlan {
  readonly entries: readonly PageEntry[];
  /** The last rule with a show_page naming the page, or -1: then the page is visible by default. */
  readonly lastShowRule: number;
}

/** A field's value as a condition sees it. */
type Read = FieldValue | 'empty' | 'bad';

/**
 * The definition's rules prepared for evaluation. Opaque to callers; one per definition object
 * (compileRules caches it), and reused by every decidePage call on it.
 */
export interface CompiledRules {
  /** By page index; undefined for a page no rule acts on. */
  readonly pages: ReadonlyArray<PagePlan | undefined>;
  /** The fields conditions test, by slot. */
  readonly slotFields: readonly TemplateInputField[];
  // A per-call cache of parsed values, reused across calls so that a call allocates nothing but
  // the values it parses: a slot holds this call's value when its stamp equals `call`.
  // decidePage is synchronous, so calls never interleave.
  readonly slotStamps: Float64Array;
  readonly slotValues: Read[];
  call: number;
}

const NO_RULES: CompiledRules = Object.freeze({
  pages: [],
  slotFields: [],
  slotStamps: new Float64Array(0),
  slotValues: [],
  call: 0,
});

/** What a page no rule decides gets: shared, so plain pages cost no allocation. */
const VISIBLE: PageDecision = Object.freeze({ visible: true });

const compiledByDefinition = new WeakMap<TemplateDefinition, CompiledRules>();

/** Whether the template has any rules at all. */
export function hasRules(definition: TemplateDefinition): boolean {
  return definition.rules !== undefined && definition.rules.length > 0;
}

/**
 * The definition's rules prepared for evaluation (per page, only the rules acting on it; each
 * condition's literal parsed once). Cached per definition object: versions never change.
 */
export function compileRules(definition: TemplateDefinition): CompiledRules {
  if (!hasRules(definition)) return NO_RULES;
  let compiled = compiledByDefinition.get(definition);
  if (compiled === undefined) {
    compiled = compile(definition, definition.rules ?? []);
    compiledByDefinition.set(definition, compiled);
  }
  return compiled;
}

function compile(definition: TemplateDefinition, rules: readonly Rule[]): CompiledRules {
  const index = indexDefinition(definition);
  const slots = new Map<string, number>();
  const slotFields: TemplateInputField[] = [];
  const entries: PageEntry[][] = definition.pages.map(() => []);
  const lastShowRule: number[] = definition.pages.map(() => -1);

  rules.forEach((rule, i) => {
    const all = 'all' in rule.when;
    const conditions = (all ? whenAll(rule) : whenAny(rule)).map((condition) => {
      let slot = slots.get(condition.field);
      if (slot === undefined) {
        slot = slotFields.length;
        slots.set(condition.field, slot);
        // A field no page has (the save-time check refuses it) sees no value: as text, it is
        // empty unless the run's values somehow hold it.
        slotFields.push(
          index.fields.get(condition.field)?.field ?? {
            inputId: condition.field,
            fieldName: condition.field,
          },
        );
      }
      return compileCondition(condition, slotFields[slot]!, slot);
    });
    const compiledRule: CompiledRule = { index: i, all, conditions };
    const byPage = new Map<number, RuleAction[]>();
    for (const action of rule.then) {
      const page = index.pages.get(action.page);
      if (page === undefined) continue;
      let list = byPage.get(page);
      if (list === undefined) byPage.set(page, (list = []));
      list.push(action);
      if (action.action === 'show_page') lastShowRule[page] = i;
    }
    for (const [page, actions] of byPage) entries[page]!.push({ rule: compiledRule, actions });
  });

  return {
    pages: entries.map((list, page) =>
      list.length === 0 ? undefined : { entries: list, lastShowRule: lastShowRule[page]! },
    ),
    slotFields,
    slotStamps: new Float64Array(slotFields.length),
    slotValues: slotFields.map((): Read => 'empty'),
    call: 0,
  };
}

function whenAll(rule: Rule): readonly Condition[] {
  return ('all' in rule.when ? rule.when.all : undefined) ?? [];
}

function whenAny(rule: Rule): readonly Condition[] {
  return ('any' in rule.when ? rule.when.any : undefined) ?? [];
}

function compileCondition(
  condition: Condition,
  field: TemplateInputField,
  slot: number,
): CompiledCondition {
  const type = fieldType(field);
  let ok = true;
  let key: Key | undefined;
  let options: string[] | undefined;
  let set: Set<Key> | undefined;
  let text = '';
  switch (condition.op) {
    case 'empty':
    case 'not_empty':
      break;
    case 'contains':
      ok = typeof condition.value === 'string';
      text = condition.value ?? '';
      break;
    case 'one_of':
      set = new Set();
      for (const literal of condition.values ?? []) {
        if (type === 'multi_select') {
          set.add(literal);
        } else {
          // A literal that does not parse equals no value: leave it out.
          const parsed = parseLiteral(field, literal);
          const k = parsed === undefined ? undefined : keyOf(parsed);
          if (k !== undefined) set.add(k);
        }
      }
      ok = set.size > 0;
      break;
    default: {
      // equals, not_equals and the comparisons.
      const parsed =
        condition.value === undefined ? undefined : parseLiteral(field, condition.value);
      if (parsed === undefined) ok = false;
      else if (parsed.kind === 'options') options = [...new Set(parsed.options)];
      else key = keyOf(parsed);
    }
  }
  return { slot, op: condition.op, ok, key, options, set, text };
}

/** A literal as the field's type, or undefined when it is empty or does not parse. */
function parseLiteral(field: TemplateInputField, literal: string): FieldValue | undefined {
  return isEmptyValue(field, literal) ? undefined : parseFieldValue(field, literal);
}

function keyOf(value: FieldValue): Key | undefined {
  switch (value.kind) {
    case 'text':
      return value.text;
    case 'number':
      return value.number;
    case 'date':
      return value.date;
    case 'datetime':
      return value.ms;
    case 'checkbox':
      return value.checked;
    case 'options':
      return undefined;
  }
}

/** What the rules decide of page `page` (an index into the definition's pages). */
export function decidePage(
  compiled: CompiledRules,
  page: number,
  values: Readonly<Record<string, string>>,
): PageDecision {
  const plan = compiled.pages[page];
  if (plan === undefined) return VISIBLE;
  compiled.call++;

  let visRule = plan.lastShowRule;
  let how: 'shown' | 'hidden' | 'not_shown' | undefined = visRule >= 0 ? 'not_shown' : undefined;
  let due: DueSpec | undefined;
  let dueRule = -1;
  let assignRule = -1;
  let user: string | undefined;
  let fromField: string | undefined;

  const entries = plan.entries;
  for (let e = 0; e < entries.length; e++) {
    const entry = entries[e]!;
    if (!fires(compiled, entry.rule, values)) continue;
    const rule = entry.rule.index;
    const actions = entry.actions;
    for (let a = 0; a < actions.length; a++) {
      const action = actions[a]!;
      switch (action.action) {
        case 'show_page':
          how = 'shown';
          visRule = rule;
          break;
        case 'hide_page':
          how = 'hidden';
          visRule = rule;
          break;
        case 'set_due':
          due = action.due;
          dueRule = rule;
          break;
        case 'assign':
          assignRule = rule;
          if ('user' in action) {
            user = action.user;
            fromField = undefined;
          } else {
            user = undefined;
            fromField = action.fromField;
          }
          break;
      }
    }
  }

  if (how === undefined && due === undefined && assignRule < 0) return VISIBLE;
  const decision: PageDecision = { visible: how === undefined || how === 'shown' };
  if (how !== undefined) decision.visibility = { rule: visRule, how };
  if (due !== undefined) decision.due = { spec: due, rule: dueRule };
  if (user !== undefined) decision.assign = { rule: assignRule, user };
  else if (fromField !== undefined) decision.assign = { rule: assignRule, fromField };
  return decision;
}

function fires(
  compiled: CompiledRules,
  rule: CompiledRule,
  values: Readonly<Record<string, string>>,
): boolean {
  const conditions = rule.conditions;
  // all: the first failing condition decides; any: the first holding one does.
  for (let c = 0; c < conditions.length; c++) {
    const condition = conditions[c]!;
    if (holds(condition, read(compiled, condition.slot, values)) !== rule.all) return !rule.all;
  }
  return rule.all;
}

/** A field's value for this call, parsed on first use only. */
function read(
  compiled: CompiledRules,
  slot: number,
  values: Readonly<Record<string, string>>,
): Read {
  if (compiled.slotStamps[slot] === compiled.call) return compiled.slotValues[slot]!;
  const field = compiled.slotFields[slot]!;
  // hasOwn: an inputId may be "constructor" or "__proto__".
  const raw = Object.hasOwn(values, field.inputId) ? values[field.inputId] : undefined;
  const value: Read =
    raw === undefined || typeof raw !== 'string' || isEmptyValue(field, raw)
      ? 'empty'
      : (parseFieldValue(field, raw) ?? 'bad');
  compiled.slotStamps[slot] = compiled.call;
  compiled.slotValues[slot] = value;
  return value;
}

function holds(condition: CompiledCondition, value: Read): boolean {
  const op = condition.op;
  if (value === 'empty') return op === 'empty' || op === 'not_equals';
  if (op === 'empty') return false;
  if (op === 'not_empty') return true;
  if (value === 'bad' || !condition.ok) return op === 'not_equals';
  switch (op) {
    case 'equals':
      return equals(condition, value);
    case 'not_equals':
      return !equals(condition, value);
    case 'one_of': {
      const set = condition.set!;
      if (value.kind !== 'options') {
        const key = keyOf(value);
        return key !== undefined && set.has(key);
      }
      for (let i = 0; i < value.options.length; i++) if (set.has(value.options[i]!)) return true;
      return false;
    }
    case 'contains':
      if (value.kind === 'text') return value.text.includes(condition.text);
      if (value.kind === 'options') return value.options.includes(condition.text);
      return false;
    default:
      return compares(op, condition.key, value);
  }
}

function equals(condition: CompiledCondition, value: FieldValue): boolean {
  if (value.kind !== 'options') {
    return condition.key !== undefined && keyOf(value) === condition.key;
  }
  // The same set of options: every selected one is in the literal, and every one of the
  // literal's (distinct) options is selected.
  const literal = condition.options;
  if (literal === undefined) return false;
  const selected = value.options;
  for (let i = 0; i < selected.length; i++) if (!literal.includes(selected[i]!)) return false;
  for (let i = 0; i < literal.length; i++) if (!selected.includes(literal[i]!)) return false;
  return true;
}

function compares(op: ConditionOp, literal: Key | undefined, value: FieldValue): boolean {
  let a: number | string;
  switch (value.kind) {
    case 'number':
      a = value.number;
      break;
    case 'date':
      // YYYY-MM-DD orders as a string.
      a = value.date;
      break;
    case 'datetime':
      a = value.ms;
      break;
    default:
      return false;
  }
  if (typeof literal !== typeof a) return false;
  const b = literal as number | string;
  switch (op) {
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// The save-time check

interface FieldAt {
  readonly field: TemplateInputField;
  readonly page: number;
}

interface DefinitionIndex {
  readonly pages: ReadonlyMap<string, number>;
  readonly fields: ReadonlyMap<string, FieldAt>;
}

/** Pages by name and fields by inputId; the first wins (duplicates are refused elsewhere). */
function indexDefinition(definition: TemplateDefinition): DefinitionIndex {
  const pages = new Map<string, number>();
  const fields = new Map<string, FieldAt>();
  definition.pages.forEach((page, p) => {
    if (!pages.has(page.name)) pages.set(page.name, p);
    for (const field of page.inputFields) {
      if (!fields.has(field.inputId)) fields.set(field.inputId, { field, page: p });
    }
  });
  return { pages, fields };
}

/** The types whose value can name one user. */
const ASSIGNABLE_TYPES: readonly FieldType[] = [...TEXT_TYPES, 'select', 'number'];
const COMPARISONS: readonly ConditionOp[] = ['gt', 'gte', 'lt', 'lte'];

/**
 * The save-time check of the definition's rules: throws DomainError('invalid_rule') at the
 * first problem, pointing at its part of the rule (`/rules/3/when/all/0/value`).
 */
export function checkRules(definition: TemplateDefinition): void {
  const rules = definition.rules;
  if (rules === undefined) return;
  if (rules.length > RULE_LIMITS.rules) {
    throw new DomainError(
      'invalid_rule',
      `a template takes at most ${RULE_LIMITS.rules} rules; this one has ${rules.length}`,
      pointer('rules'),
    );
  }
  const index = indexDefinition(definition);
  rules.forEach((rule, i) => checkRule(definition, index, rule, i));
}

function ruleLabel(rule: Rule, i: number): string {
  return rule.name === undefined ? `rule ${i}` : `rule ${i} (${JSON.stringify(rule.name)})`;
}

/** A name or value quoted for a message, cut short: a literal may be 10,000 characters. */
function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

function fieldLabel(field: TemplateInputField): string {
  return `field ${quote(field.inputId)}`;
}

function pageLabel(definition: TemplateDefinition, page: number): string {
  return `page ${quote(definition.pages[page]?.name ?? String(page))}`;
}

function checkRule(
  definition: TemplateDefinition,
  index: DefinitionIndex,
  rule: Rule,
  i: number,
): void {
  const who = ruleLabel(rule, i);
  const refuse = (message: string, ...path: Array<string | number>): never => {
    throw new DomainError('invalid_rule', `${who} ${message}`, pointer('rules', i, ...path));
  };

  const when: unknown = rule.when;
  if (typeof when !== 'object' || when === null) {
    refuse('needs `when`: {all: [...]} or {any: [...]}', 'when');
  }
  const hasAll = 'all' in rule.when;
  const hasAny = 'any' in rule.when;
  if (hasAll === hasAny) {
    refuse(
      hasAll
        ? 'has both `all` and `any` in `when`: give one of them'
        : 'needs its conditions in `when`, under `all` or `any`',
      'when',
    );
  }
  const list = hasAll ? 'all' : 'any';
  const conditions: unknown = hasAll ? whenAll(rule) : whenAny(rule);
  if (!Array.isArray(conditions) || conditions.length === 0) {
    refuse('has no conditions', 'when', list);
  }
  const conditionList = conditions as Condition[];
  if (conditionList.length > RULE_LIMITS.conditionsPerRule) {
    refuse(
      `has ${conditionList.length} conditions; a rule takes at most ${RULE_LIMITS.conditionsPerRule}`,
      'when',
      list,
    );
  }
  const actions: unknown = rule.then;
  if (!Array.isArray(actions) || actions.length === 0) {
    refuse('does nothing: `then` has no actions', 'then');
  }
  const actionList = actions as RuleAction[];
  if (actionList.length > RULE_LIMITS.actionsPerRule) {
    refuse(
      `has ${actionList.length} actions; a rule takes at most ${RULE_LIMITS.actionsPerRule}`,
      'then',
    );
  }

  // The earliest page the rule acts on: its conditions must be known before a run reaches it.
  let firstActed = Infinity;
  for (const action of actionList) {
    const page = index.pages.get(action.page);
    if (page !== undefined && page < firstActed) firstActed = page;
  }

  conditionList.forEach((condition, j) => {
    const path = ['when', list, j];
    const at = index.fields.get(condition.field);
    if (at === undefined) {
      refuse(
        `tests field ${quote(condition.field)}, which no page of the template has`,
        ...path,
        'field',
      );
      return;
    }
    if (at.page >= firstActed) {
      refuse(
        `tests ${fieldLabel(at.field)} of ${pageLabel(definition, at.page)} but acts on ${pageLabel(definition, firstActed)}: ` +
          'a rule is evaluated when a run reaches a page it acts on, so it can only test fields of earlier pages',
        ...path,
        'field',
      );
    }
    checkCondition(condition, at.field, (message, ...rest) => refuse(message, ...path, ...rest));
  });

  const decided = new Set<string>();
  actionList.forEach((action, k) => {
    const path = ['then', k];
    const page = index.pages.get(action.page);
    if (page === undefined) {
      refuse(
        `acts on page ${quote(action.page)}, which the template does not have`,
        ...path,
        'page',
      );
      return;
    }
    const loose = action as { action: unknown; user?: unknown; fromField?: unknown; due?: unknown };
    let what: string;
    switch (loose.action) {
      case 'show_page':
      case 'hide_page':
        what = 'the visibility';
        break;
      case 'set_due':
        what = 'the due time';
        if (typeof loose.due !== 'object' || loose.due === null) {
          refuse(
            `sets the due time of ${pageLabel(definition, page)} without \`due\``,
            ...path,
            'due',
          );
        }
        checkDue(
          definition,
          index,
          loose.due as DueSpec,
          page,
          ['rules', i, ...path, 'due'],
          'invalid_rule',
          who,
        );
        break;
      case 'assign':
        what = 'the assignee';
        checkAssign(definition, index, loose, page, (message, ...rest) =>
          refuse(message, ...path, ...rest),
        );
        break;
      default:
        refuse(
          `has an unknown action ${quote(String(loose.action))}: show_page, hide_page, set_due or assign`,
          ...path,
          'action',
        );
        return;
    }
    // A rule deciding the same thing of a page twice contradicts or repeats itself.
    const decision = `${what}\u0000${page}`;
    if (decided.has(decision)) {
      refuse(`decides ${what} of ${pageLabel(definition, page)} twice: keep one action`, ...path);
    }
    decided.add(decision);
  });
}

type Refuse = (message: string, ...path: Array<string | number>) => never;

function checkCondition(condition: Condition, field: TemplateInputField, refuse: Refuse): void {
  const type = fieldType(field);
  const op = condition.op;
  const name = fieldLabel(field);
  const hasValue = condition.value !== undefined;
  const hasValues = condition.values !== undefined;
  switch (op) {
    case 'empty':
    case 'not_empty': {
      const test = `tests whether ${name} is ${op === 'empty' ? 'empty' : 'not empty'}`;
      if (hasValue) refuse(`${test}, which takes no \`value\``, 'value');
      if (hasValues) refuse(`${test}, which takes no \`values\``, 'values');
      return;
    }
    case 'one_of':
      if (hasValue) {
        refuse(`tests ${name} with one_of, which takes \`values\`, not \`value\``, 'value');
      }
      if (!hasValues) refuse(`tests ${name} with one_of but gives no \`values\``, 'values');
      checkOneOf(condition.values!, field, type, refuse);
      return;
    case 'equals':
    case 'not_equals':
    case 'contains':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      break;
    default:
      refuse(`has an unknown op ${quote(String(op))}`, 'op');
  }
  if (op === 'contains' && !TEXT_TYPES.includes(type) && type !== 'multi_select') {
    refuse(
      `tests whether ${name} contains a value, but it is a ${type} field: contains takes text and multi_select fields`,
      'op',
    );
  }
  if (COMPARISONS.includes(op) && !ORDERED_TYPES.includes(type)) {
    refuse(
      `compares ${name} with ${op}, but it is a ${type} field: comparing across types is refused; ${op} takes number, date and datetime fields`,
      'op',
    );
  }
  if (hasValues) {
    refuse(`tests ${name} with ${op}, which takes \`value\`, not \`values\``, 'values');
  }
  if (!hasValue) refuse(`tests ${name} with ${op} but gives no \`value\``, 'value');
  const literal: unknown = condition.value;
  if (typeof literal !== 'string') {
    return refuse(`gives ${name} a value that is not a string`, 'value');
  }

  if (op === 'contains') {
    if (type === 'multi_select') {
      if (!(field.options ?? []).includes(literal)) {
        refuse(
          `tests whether ${name} contains ${quote(literal)}, which is not one of its options`,
          'value',
        );
      }
    } else if (literal === '') {
      refuse(
        `tests whether ${name} contains the empty string, which every value does: test not_empty instead`,
        'value',
      );
    }
    return;
  }
  if (COMPARISONS.includes(op)) {
    // A bound outside the field's limits is still a meaningful threshold: parse only.
    if (isEmptyValue(field, literal)) refuse(`compares ${name} with an empty value`, 'value');
    if (parseFieldValue(field, literal) === undefined) {
      const problem = valueProblem(field, literal) ?? `is not a ${type}`;
      refuse(`compares ${name} with ${quote(literal)}, which ${problem}`, 'value');
    }
    return;
  }
  checkLiteral(literal, field, refuse, 'value');
}

function checkOneOf(
  values: unknown,
  field: TemplateInputField,
  type: FieldType,
  refuse: Refuse,
): void {
  const name = fieldLabel(field);
  if (!Array.isArray(values) || values.length === 0) {
    refuse(`tests ${name} with one_of but \`values\` is empty`, 'values');
    return;
  }
  if (values.length > RULE_LIMITS.oneOfValues) {
    refuse(
      `tests ${name} with ${values.length} values; one_of takes at most ${RULE_LIMITS.oneOfValues}`,
      'values',
    );
  }
  // Duplicates by meaning: "42" and "42.0" are the same number.
  const seen = new Set<Key>();
  (values as unknown[]).forEach((literal, k) => {
    if (typeof literal !== 'string') {
      return refuse(`gives ${name} a value that is not a string`, 'values', k);
    }
    let key: Key | undefined;
    if (type === 'multi_select') {
      // Each value is one option: the condition holds when any of them is selected.
      if (!(field.options ?? []).includes(literal)) {
        refuse(`tests ${name} for ${quote(literal)}, which is not one of its options`, 'values', k);
      }
      key = literal;
    } else {
      checkLiteral(literal, field, refuse, 'values', k);
      const parsed = parseFieldValue(field, literal);
      key = parsed === undefined ? literal : (keyOf(parsed) ?? literal);
    }
    if (seen.has(key)) {
      refuse(`lists ${quote(literal)} twice in the values of ${name}`, 'values', k);
    }
    seen.add(key);
  });
}

/** A literal equals and one_of compare with: a value the field could hold, not an empty one. */
function checkLiteral(
  literal: string,
  field: TemplateInputField,
  refuse: Refuse,
  ...path: Array<string | number>
): void {
  const name = fieldLabel(field);
  if (isEmptyValue(field, literal)) {
    refuse(`compares ${name} with an empty value: test for no value with empty`, ...path);
  }
  // A value the field would refuse (not a number, not one of a select's options, beyond its
  // limits) can never equal a run's value: surely a mistake.
  const problem = valueProblem(field, literal);
  if (problem !== undefined) {
    refuse(`compares ${name} with ${quote(literal)}, which ${problem}`, ...path);
  }
}

function checkAssign(
  definition: TemplateDefinition,
  index: DefinitionIndex,
  action: { user?: unknown; fromField?: unknown },
  page: number,
  refuse: Refuse,
): void {
  const target = pageLabel(definition, page);
  const hasUser = action.user !== undefined;
  const hasFrom = action.fromField !== undefined;
  if (hasUser && hasFrom) {
    refuse(`assigns ${target} to both a \`user\` and \`fromField\`: give one`);
  }
  if (!hasUser && !hasFrom) refuse(`assigns ${target} to no one: give \`user\` or \`fromField\``);
  if (hasUser) {
    if (typeof action.user !== 'string' || action.user.trim() === '') {
      refuse(`assigns ${target} to an empty user id`, 'user');
    }
    return;
  }
  const inputId = String(action.fromField);
  const at = index.fields.get(inputId);
  if (at === undefined) {
    refuse(
      `assigns ${target} from field ${quote(inputId)}, which no page of the template has`,
      'fromField',
    );
    return;
  }
  const type = fieldType(at.field);
  if (!ASSIGNABLE_TYPES.includes(type)) {
    refuse(
      `assigns ${target} from ${fieldLabel(at.field)}, a ${type} field, whose value cannot be a user id`,
      'fromField',
    );
  }
  if (at.page >= page) {
    refuse(
      `assigns ${target} from ${fieldLabel(at.field)} of ${pageLabel(definition, at.page)}, ` +
        'whose value is not known yet when a run reaches the page: the field must be on an earlier page',
      'fromField',
    );
  }
}

/**
 * The save-time check of one due spec for page `page` (a rule's set_due, or the page's own
 * `due`): throws DomainError(code) pointing at `path` + the property at fault.
 */
export function checkDueSpec(
  definition: TemplateDefinition,
  spec: DueSpec,
  page: number,
  path: ReadonlyArray<string | number>,
  code: 'invalid_rule' | 'invalid_template_field',
): void {
  // Name the rule when the spec is a rule's (path /rules/i/...); a page's own needs no more.
  const ruleIndex = path[0] === 'rules' ? path[1] : undefined;
  const rule = typeof ruleIndex === 'number' ? definition.rules?.[ruleIndex] : undefined;
  const who =
    rule !== undefined && typeof ruleIndex === 'number' ? ruleLabel(rule, ruleIndex) : undefined;
  checkDue(definition, indexDefinition(definition), spec, page, path, code, who);
}

const DUE_LIMITS = { hours: 87_600, days: 3650, business_days: 3650 } as const;

function checkDue(
  definition: TemplateDefinition,
  index: DefinitionIndex,
  spec: DueSpec,
  page: number,
  path: ReadonlyArray<string | number>,
  code: 'invalid_rule' | 'invalid_template_field',
  /** The rule whose set_due this is, for the message. */
  who: string | undefined,
): void {
  const target = `the due time of ${pageLabel(definition, page)}`;
  const refuse = (message: string, property: string): never => {
    const text = `${target} ${message}`;
    throw new DomainError(
      code,
      who === undefined ? text : `${who}: ${text}`,
      pointer(...path, property),
    );
  };
  const anchor: unknown = spec.anchor;
  if (anchor !== 'step_start' && anchor !== 'run_start' && anchor !== 'field') {
    refuse(
      `counts from ${quote(String(anchor))}: the anchor is step_start, run_start or field`,
      'anchor',
    );
  }
  const unit: unknown = spec.unit;
  if (unit !== 'hours' && unit !== 'days' && unit !== 'business_days') {
    refuse(
      `is counted in ${quote(String(unit))}: the unit is hours, days or business_days`,
      'unit',
    );
  }
  const amount: unknown = spec.amount;
  if (typeof amount !== 'number' || !Number.isFinite(amount)) {
    refuse('needs a number as its amount', 'amount');
  }
  if (spec.unit !== 'hours' && !Number.isInteger(spec.amount)) {
    refuse(`is ${spec.amount} ${spec.unit}: days and business days must be whole`, 'amount');
  }
  const limit = DUE_LIMITS[spec.unit];
  if (Math.abs(spec.amount) > limit) {
    refuse(`is ${spec.amount} ${spec.unit}: at most ${limit} ${spec.unit} either way`, 'amount');
  }
  if (spec.anchor !== 'field') {
    if (spec.field !== undefined) {
      refuse(
        `counts from ${spec.anchor}, which takes no \`field\`: use the anchor field to count from a field`,
        'field',
      );
    }
    return;
  }
  if (spec.field === undefined) refuse('counts from a field but names none in `field`', 'field');
  const inputId = String(spec.field);
  const at = index.fields.get(inputId);
  if (at === undefined) {
    return refuse(
      `counts from field ${quote(inputId)}, which no page of the template has`,
      'field',
    );
  }
  const type = fieldType(at.field);
  if (type !== 'date' && type !== 'datetime') {
    refuse(
      `counts from ${fieldLabel(at.field)}, a ${type} field: it must be a date or datetime field`,
      'field',
    );
  }
  if (at.page >= page) {
    refuse(
      `counts from ${fieldLabel(at.field)} of ${pageLabel(definition, at.page)}, ` +
        'whose value is not known yet when a run reaches the page: the field must be on an earlier page',
      'field',
    );
  }
}
