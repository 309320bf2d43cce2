// The save-time check of one condition of a rule (rule-checks.ts checks the rule around it): an
// op its field's type takes, and the literal it compares with, in that type's form.
import {
  ORDERED_TYPES,
  TEMPLATE_LIMITS,
  TEXT_TYPES,
  type Condition,
  type ConditionOp,
  type FieldType,
  type TemplateInputField,
} from './definition-types.js';
import { fieldType, isEmptyValue, parseFieldValue, valueProblem } from './field-values.js';
import { keyOf, type Key } from './conditions.js';

const COMPARISONS: readonly ConditionOp[] = ['gt', 'gte', 'lt', 'lte'];

/** A name or value quoted for a message, cut short: a literal may be 10,000 characters. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

export function fieldLabel(field: TemplateInputField): string {
  return `field ${quote(field.inputId)}`;
}

export type Refuse = (message: string, ...path: Array<string | number>) => never;

export function checkCondition(
  condition: Condition,
  field: TemplateInputField,
  refuse: Refuse,
): void {
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
  if (values.length > TEMPLATE_LIMITS.oneOfValues) {
    refuse(
      `tests ${name} with ${values.length} values; one_of takes at most ${TEMPLATE_LIMITS.oneOfValues}`,
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
