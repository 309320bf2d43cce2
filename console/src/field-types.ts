// What the console knows of typed fields (the API's field-values.ts and rules.ts): the words for
// each type and each test a rule may make of it, which tests a type takes, and the string forms
// the browser's own inputs are turned into and read from. Values are always strings, in the
// API's one form per type: number "42.5", date "2026-03-29", datetime RFC 3339 with an offset,
// checkbox "true"/"false", multi_select a JSON array of options.
//
// Which tests a type takes is the service's own classification of the types (its pure
// definition-types.ts, which its save-time check of a rule reads), imported rather than copied.
import { ORDERED_TYPES, TEXT_TYPES } from '../../src/templates/definition/definition-types.js';
import type { ConditionOp, FieldType } from './vocabulary.js';

export const TYPE_WORDS: Record<FieldType, string> = {
  text: 'Text',
  long_text: 'Long text',
  number: 'Number',
  email: 'Email address',
  url: 'Web address',
  date: 'Date',
  datetime: 'Date and time',
  select: 'One of several options',
  multi_select: 'Several options',
  checkbox: 'Checkbox',
};

/** The tests a rule may make of a field of this type (what the API's save-time check takes). */
export function opsFor(type: FieldType): ConditionOp[] {
  if (ORDERED_TYPES.includes(type)) {
    return ['gt', 'gte', 'lt', 'lte', 'equals', 'not_equals', 'one_of', 'empty', 'not_empty'];
  }
  if (TEXT_TYPES.includes(type)) {
    return ['equals', 'not_equals', 'contains', 'one_of', 'empty', 'not_empty'];
  }
  if (type === 'multi_select') {
    return ['contains', 'one_of', 'equals', 'not_equals', 'empty', 'not_empty'];
  }
  if (type === 'checkbox') return ['equals', 'not_equals'];
  return ['equals', 'not_equals', 'one_of', 'empty', 'not_empty'];
}

/** A test in words, as it reads after the field's name ("Amount is greater than …"). */
export function opWords(op: ConditionOp, type: FieldType): string {
  const dated = type === 'date' || type === 'datetime';
  const multi = type === 'multi_select';
  switch (op) {
    case 'equals':
      return multi ? 'is exactly' : 'is';
    case 'not_equals':
      return multi ? 'is not exactly' : 'is not';
    case 'one_of':
      return multi ? 'includes any of' : 'is one of';
    case 'contains':
      return multi ? 'includes' : 'contains';
    case 'empty':
      return 'is empty';
    case 'not_empty':
      return 'is not empty';
    case 'gt':
      return dated ? 'is after' : 'is greater than';
    case 'gte':
      return dated ? 'is on or after' : 'is at least';
    case 'lt':
      return dated ? 'is before' : 'is less than';
    case 'lte':
      return dated ? 'is on or before' : 'is at most';
  }
}

/** Whether a test compares with one value (`value`), a list (`values`, one_of) or nothing. */
export function operandOf(op: ConditionOp): 'value' | 'values' | 'none' {
  if (op === 'empty' || op === 'not_empty') return 'none';
  return op === 'one_of' ? 'values' : 'value';
}

const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');

/** The browser's UTC offset at a local time, as RFC 3339 writes it ("+02:00", "-05:30"). */
export function offsetOf(date: Date): string {
  const minutes = -date.getTimezoneOffset();
  return `${minutes < 0 ? '-' : '+'}${pad(Math.trunc(minutes / 60))}:${pad(minutes % 60)}`;
}

/**
 * A datetime-local input's value ("2026-03-29T09:30", the browser's time zone) in the API's
 * datetime form, with seconds and the browser's offset at that time; '' for none. A value the
 * browser cannot read is passed on as typed, for the API to refuse.
 */
export function rfc3339OfLocal(local: string): string {
  if (!local) return '';
  const date = new Date(local);
  if (Number.isNaN(date.getTime())) return local;
  const withSeconds = local.length === 16 ? `${local}:00` : local.slice(0, 19);
  return `${withSeconds}${offsetOf(date)}`;
}

/** An RFC 3339 value as a datetime-local input's (in the browser's time zone); '' for none. */
export function localOfRfc3339(value: string): string {
  if (!value) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString();
  // To the minute when the seconds are zero: the input then shows no seconds.
  return local.slice(17, 19) === '00' ? local.slice(0, 16) : local.slice(0, 19);
}

/** A multi_select's value (a JSON array of strings) as a list; [] for none or another form. */
export function listOf(value: string | undefined): string[] {
  if (!value) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

const DATE = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});
const DATE_TIME = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZoneName: 'short',
});

/** A value in words for its type: a date as a date, a checkbox as yes or no, options listed. */
export function valueWords(type: FieldType | undefined, value: string): string {
  if (value === '') return value;
  switch (type) {
    case 'checkbox':
      return value === 'true' ? 'yes' : value === 'false' ? 'no' : value;
    case 'multi_select': {
      const list = listOf(value);
      return list.length ? list.join(', ') : value === '[]' ? 'none' : value;
    }
    case 'date': {
      const date = new Date(`${value}T00:00:00Z`);
      return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(date.getTime())
        ? DATE.format(date)
        : value;
    }
    case 'datetime': {
      const date = new Date(value);
      return Number.isNaN(date.getTime()) ? value : DATE_TIME.format(date);
    }
    default:
      return value;
  }
}
