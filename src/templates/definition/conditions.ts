// A rule's condition on one field's value: compiled once with its literal parsed as the
// field's type, then tested against a run's value. The semantics are rules.ts's contract.
import type { Condition, ConditionOp, TemplateInputField } from './definition-types.js';
import { fieldType, isEmptyValue, parseFieldValue, type FieldValue } from './field-values.js';

/** A field value reduced to something `===` compares: each type maps to one JS type. */
export type Key = string | number | boolean;

export interface CompiledCondition {
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

/** A field's value as a condition sees it. */
export type Read = FieldValue | 'empty' | 'bad';

export function compileCondition(
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

export function keyOf(value: FieldValue): Key | undefined {
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

export function holds(condition: CompiledCondition, value: Read): boolean {
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
