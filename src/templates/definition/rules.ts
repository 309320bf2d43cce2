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
// - A condition tests one field's value, by the field's type. `decision:<page>` names an
//   approval page's decision, a select of approved and rejected (decisionField), empty until
//   the step is decided; it is known after that page, as a field of it would be.
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
// - checkRules (rule-checks.ts) is the save-time check (after the schema, definition-schema.ts). compileRules
//   and decidePage trust it, yet never throw on a definition of the schema's shape that skipped
//   it: an unknown page is ignored, a condition on an unknown field sees no value, a literal
//   that does not parse matches nothing (as a stored value that does not parse).
// - Cost: a template without rules pays nothing (one shared decision, no allocation). Else
//   compileRules runs once per version (its rules array); decidePage looks only at the rules acting on
//   the page and parses each field value they test at most once, on first use.
import {
  type Condition,
  type DueSpec,
  type Rule,
  type RuleAction,
  type TemplateDefinition,
  type TemplateInputField,
} from './definition-types.js';
import { isEmptyValue, parseFieldValue } from './field-values.js';
import { compileCondition, holds, type CompiledCondition, type Read } from './conditions.js';

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

/**
 * The definition's rules prepared for evaluation. Opaque to callers; one per rules array
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

// Keyed by the rules array, which is the template version's own: every copy of the version a
// run's document holds (read from the version cache) shares it, where the definition object
// around it is made anew for each run read. A rules array belongs to one version, and so to
// one set of pages.
const compiledByRules = new WeakMap<readonly Rule[], CompiledRules>();

/** Whether the template has any rules at all. */
export function hasRules(definition: TemplateDefinition): boolean {
  return definition.rules !== undefined && definition.rules.length > 0;
}

/**
 * The definition's rules prepared for evaluation (per page, only the rules acting on it; each
 * condition's literal parsed once). Cached per rules array: versions never change.
 */
export function compileRules(definition: TemplateDefinition): CompiledRules {
  const rules = definition.rules;
  if (rules === undefined || rules.length === 0) return NO_RULES;
  let compiled = compiledByRules.get(rules);
  if (compiled === undefined) {
    compiled = compile(definition, rules);
    compiledByRules.set(rules, compiled);
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

export function whenAll(rule: Rule): readonly Condition[] {
  return ('all' in rule.when ? rule.when.all : undefined) ?? [];
}

export function whenAny(rule: Rule): readonly Condition[] {
  return ('any' in rule.when ? rule.when.any : undefined) ?? [];
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

interface FieldAt {
  readonly field: TemplateInputField;
  readonly page: number;
}

/** The name a condition tests an approval page's decision by: `decision:<page name>`. */
export const decisionKey = (page: string) => `decision:${page}`;

/**
 * An approval page's decision, as a rule's condition sees it: a select of approved and
 * rejected, empty until the step is decided (and again once a rejection reopens it).
 */
export function decisionField(page: string): TemplateInputField {
  return {
    inputId: decisionKey(page),
    fieldName: `the decision of '${page}'`,
    type: 'select',
    options: ['approved', 'rejected'],
  };
}

export interface DefinitionIndex {
  readonly pages: ReadonlyMap<string, number>;
  readonly fields: ReadonlyMap<string, FieldAt>;
}

/** Pages by name and fields by inputId; the first wins (duplicates are refused elsewhere). */
export function indexDefinition(definition: TemplateDefinition): DefinitionIndex {
  const pages = new Map<string, number>();
  const fields = new Map<string, FieldAt>();
  definition.pages.forEach((page, p) => {
    if (!pages.has(page.name)) pages.set(page.name, p);
    for (const field of page.inputFields) {
      if (!fields.has(field.inputId)) fields.set(field.inputId, { field, page: p });
    }
    // An approval page's decision reads as a select field of its page (decisionField).
    if (page.kind === 'approval') {
      const field = decisionField(page.name);
      if (!fields.has(field.inputId)) fields.set(field.inputId, { field, page: p });
    }
  });
  return { pages, fields };
}
