// The save-time check of a template's rules (after its schema, definition-schema.ts): what the
// rules evaluator (rules.ts, whose header is the contract) trusts. Every refusal is a
// DomainError('invalid_rule') pointing at the part at fault and saying, for a person, which rule
// and what is wrong.
import { DomainError, pointer } from '../../errors.js';
import {
  TEMPLATE_LIMITS,
  TEXT_TYPES,
  type Condition,
  type DueSpec,
  type FieldType,
  type Rule,
  type RuleAction,
  type TemplateDefinition,
} from './definition-types.js';
import { fieldType } from './field-values.js';
import { indexDefinition, whenAll, whenAny, type DefinitionIndex } from './rules.js';
import { checkCondition, fieldLabel, quote, type Refuse } from './condition-checks.js';

/** The types whose value can name one user. */
const ASSIGNABLE_TYPES: readonly FieldType[] = [...TEXT_TYPES, 'select', 'number'];

/**
 * The save-time check of the definition's rules: throws DomainError('invalid_rule') at the
 * first problem, pointing at its part of the rule (`/rules/3/when/all/0/value`).
 */
export function checkRules(definition: TemplateDefinition): void {
  const rules = definition.rules;
  if (rules === undefined) return;
  if (rules.length > TEMPLATE_LIMITS.rules) {
    throw new DomainError(
      'invalid_rule',
      `a template takes at most ${TEMPLATE_LIMITS.rules} rules; this one has ${rules.length}`,
      pointer('rules'),
    );
  }
  const index = indexDefinition(definition);
  rules.forEach((rule, i) => checkRule(definition, index, rule, i));
}

function ruleLabel(rule: Rule, i: number): string {
  // Named by its place in `rules` (as `field` points at it), and by its name when it has one.
  return rule.name === undefined ? `rules[${i}]` : `rules[${i}] (${JSON.stringify(rule.name)})`;
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
  if (conditionList.length > TEMPLATE_LIMITS.conditionsPerRule) {
    refuse(
      `has ${conditionList.length} conditions; a rule takes at most ${TEMPLATE_LIMITS.conditionsPerRule}`,
      'when',
      list,
    );
  }
  const actions: unknown = rule.then;
  if (!Array.isArray(actions) || actions.length === 0) {
    refuse('does nothing: `then` has no actions', 'then');
  }
  const actionList = actions as RuleAction[];
  if (actionList.length > TEMPLATE_LIMITS.actionsPerRule) {
    refuse(
      `has ${actionList.length} actions; a rule takes at most ${TEMPLATE_LIMITS.actionsPerRule}`,
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

const DUE_LIMITS = {
  hours: TEMPLATE_LIMITS.dueInHours,
  days: TEMPLATE_LIMITS.dueDays,
  business_days: TEMPLATE_LIMITS.dueDays,
} as const;

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
