// A typed input field's value: read from its one string form and checked against the field's
// limits (a field's own definition is checked when a template is saved, by field-checks.ts).
// Pure: no I/O.
//
// Values are always strings on the wire (input_fields maps inputId → string). Each type has
// exactly one documented string form; these forms are the contract:
//
// | type         | string form                                                                 |
// |--------------|-----------------------------------------------------------------------------|
// | text         | any string. minLength/maxLength count code points (not UTF-16 units);       |
// | long_text    | pattern (RE2 syntax) must match the WHOLE value, as HTML's pattern does.    |
// | number       | -?(0|[1-9][0-9]*)(\.[0-9]+)? e.g. "42", "-3.5", "0.25": no exponent, no     |
// |              | "+", no leading zeros, no spaces, at most 40 characters, finite. integer:   |
// |              | true takes only whole values ("42.0" is whole). min/max are inclusive.      |
// | email        | one "@", a non-empty local part, a domain of non-empty dot-separated labels |
// |              | (at least one dot), no whitespace, at most 254 characters. A pragmatic      |
// |              | check, NOT RFC 5322: quoted local parts, comments, IP literals are refused. |
// | url          | an absolute URL written "http://…" or "https://…" with a host, as the       |
// |              | WHATWG URL parser reads it; no whitespace or control characters; at most    |
// |              | 2048 characters.                                                            |
// | date         | YYYY-MM-DD, a day of the (proleptic Gregorian) calendar, years 0001–9999.   |
// | datetime     | RFC 3339 with seconds and an offset:                                        |
// |              | YYYY-MM-DDTHH:MM:SS(.f{1,9})?(Z|±HH:MM), uppercase T and Z, every part in   |
// |              | range (no leap second 60; -00:00 is Z). Read as the instant in epoch        |
// |              | milliseconds; digits below the millisecond are dropped.                     |
// | select       | exactly one of options (case-sensitive).                                    |
// | multi_select | a JSON array of strings, e.g. ["Email","Phone"] (unambiguous even when an   |
// |              | option holds a comma): each one of options, no duplicates. [] is empty.     |
// | checkbox     | exactly "true" or "false".                                                  |
//
// minLength, maxLength and pattern apply to every TEXT_TYPES type (email and url too).
// parseFieldValue reads the form only; valueProblem also checks the field's limits (integer,
// min, max, minLength, maxLength, pattern, options, no duplicate options).

import { RE2JS } from 're2js';
import { isDate, readDatetime } from './calendar-forms.js';
import { TEMPLATE_LIMITS, type FieldType, type TemplateInputField } from './definition-types.js';

/** A field's value read from its string form. */
export type FieldValue =
  | { kind: 'text'; text: string } // text, long_text, email, url, select
  | { kind: 'number'; number: number }
  | { kind: 'date'; date: string } // 'YYYY-MM-DD': compares as a string
  | { kind: 'datetime'; ms: number } // epoch milliseconds of the instant
  | { kind: 'options'; options: string[] } // multi_select, in the order given
  | { kind: 'checkbox'; checked: boolean };

/**
 * The largest compiled pattern (RE2 instructions) a template may hold. RE2 matches in time
 * linear in the value, but the factor is the program's size: `(?:\pL{1,1000})+` is 16
 * characters yet about 2000 instructions, and takes seconds on a value of 100k characters.
 * Realistic patterns (codes, identifiers, phone numbers) stay far below this bound.
 */
export const PATTERN_MAX_PROGRAM_SIZE = 1000;

const NUMBER_MAX_LENGTH = 40;
const EMAIL_MAX_LENGTH = 254;
const URL_MAX_LENGTH = 2048;

// Fixed expressions, compiled once with the module. Each is linear on V8's backtracker: no
// two quantified parts can match the same characters.
const BLANK = /^\s*$/;
// JSON's own whitespace only: JSON.parse refuses any other around or inside the brackets.
const EMPTY_LIST = /^[ \t\n\r]*\[[ \t\n\r]*\][ \t\n\r]*$/;
const NUMBER_FORM = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;
const EMAIL_FORM = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
// The WHATWG parser forgives "http:host", "http:\\host" and strips tabs, newlines and edge
// spaces; the documented form is the URL as written, so those are refused before parsing.
const URL_START = /^https?:\/\//i;
const URL_BAD_CHAR = /[\s\p{Cc}]/u;

const NOT_NUMBER = 'is not a number: write it as 42 or -3.5';
const NOT_WHOLE = 'is not a whole number';
const NOT_EMAIL = 'is not an email address: write it as name@example.com';
const EMAIL_TOO_LONG = `is not an email address: it is longer than ${EMAIL_MAX_LENGTH} characters`;
const NOT_URL =
  'is not a web address: write it as an absolute http:// or https:// URL, e.g. https://example.com/page';
const URL_TOO_LONG = `is not a web address: it is longer than ${URL_MAX_LENGTH} characters`;
const NOT_DATE = 'is not a date: write it as YYYY-MM-DD, a day of the calendar, e.g. 2026-03-31';
const NOT_DATETIME =
  'is not a date and time: write it as RFC 3339 with seconds and an offset, e.g. 2026-03-31T14:30:00Z or 2026-03-31T14:30:00+02:00';
const NOT_OPTION = 'is not one of the options';
const NOT_LIST =
  'is not a list of options: write it as a JSON array of strings, e.g. ["Email","Phone"]';
const NOT_CHECKBOX = 'is not a checkbox value: write it as "true" or "false"';
const NO_MATCH = 'does not match the pattern';
const BAD_PATTERN = "cannot be checked: the field's pattern does not compile";

export function fieldType(field: TemplateInputField): FieldType {
  return field.type ?? 'text';
}

/** No value: absent (undefined), only whitespace, or "[]" for multi_select. */
export function isEmptyValue(field: TemplateInputField, raw: string | undefined): boolean {
  if (raw === undefined || BLANK.test(raw)) return true;
  // "[ ]" is as empty as "[]": were it not, a required multi_select would take it.
  return fieldType(field) === 'multi_select' && EMPTY_LIST.test(raw);
}

/**
 * A required field lacks a value: empty, or for a checkbox anything but "true" (a required
 * checkbox must be ticked, as HTML's). False for a field that is not required.
 */
export function missingRequired(field: TemplateInputField, raw: string | undefined): boolean {
  if (field.required !== true) return false;
  if (fieldType(field) === 'checkbox') return raw !== 'true';
  return isEmptyValue(field, raw);
}

/**
 * The value in its type's string form, limits NOT checked (integer, min, max, lengths,
 * pattern, membership in options, duplicates); undefined when it does not parse. Never throws.
 */
export function parseFieldValue(field: TemplateInputField, raw: string): FieldValue | undefined {
  const type = fieldType(field);
  switch (type) {
    case 'text':
    case 'long_text':
    case 'select':
      return { kind: 'text', text: raw };
    case 'email':
      return emailProblem(raw) === undefined ? { kind: 'text', text: raw } : undefined;
    case 'url':
      return urlProblem(raw) === undefined ? { kind: 'text', text: raw } : undefined;
    case 'number': {
      const n = readNumber(raw);
      return Number.isNaN(n) ? undefined : { kind: 'number', number: n };
    }
    case 'date':
      return isDate(raw) ? { kind: 'date', date: raw } : undefined;
    case 'datetime': {
      const ms = readDatetime(raw);
      return Number.isNaN(ms) ? undefined : { kind: 'datetime', ms };
    }
    case 'multi_select': {
      const options = readList(raw);
      return options === undefined ? undefined : { kind: 'options', options };
    }
    case 'checkbox':
      return raw === 'true' || raw === 'false'
        ? { kind: 'checkbox', checked: raw === 'true' }
        : undefined;
    default:
      return undefined;
  }
}

/**
 * Why a NON-EMPTY value is refused, as a short English reason for a message ("is more than the
 * maximum 100"), or undefined when it is accepted: its form and every limit of the field.
 * Never throws. Allocates nothing on the way to an accepted value, but for multi_select's
 * JSON and url's parser.
 */
export function valueProblem(field: TemplateInputField, raw: string): string | undefined {
  const type = fieldType(field);
  switch (type) {
    case 'text':
    case 'long_text':
      return textProblem(field, raw);
    case 'email':
      return emailProblem(raw) ?? textProblem(field, raw);
    case 'url':
      return urlProblem(raw) ?? textProblem(field, raw);
    case 'number': {
      const n = readNumber(raw);
      if (Number.isNaN(n)) return NOT_NUMBER;
      if (field.integer === true && !isWholeForm(raw)) return NOT_WHOLE;
      if (field.min !== undefined && n < field.min) return `is less than the minimum ${field.min}`;
      if (field.max !== undefined && n > field.max) return `is more than the maximum ${field.max}`;
      return undefined;
    }
    case 'date':
      return isDate(raw) ? undefined : NOT_DATE;
    case 'datetime':
      return Number.isNaN(readDatetime(raw)) ? NOT_DATETIME : undefined;
    case 'select':
      return optionSet(field)?.has(raw) === true ? undefined : NOT_OPTION;
    case 'multi_select':
      return listProblem(field, raw);
    case 'checkbox':
      return raw === 'true' || raw === 'false' ? undefined : NOT_CHECKBOX;
    default:
      // Only a definition that bypassed the schema gets here.
      return `has an unknown type ${JSON.stringify(String(type as unknown))}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Text types

/** A text value's lengths, then its pattern: the cheap checks bound what the pattern reads. */
function textProblem(field: TemplateInputField, raw: string): string | undefined {
  const { minLength, maxLength, pattern } = field;
  if (minLength !== undefined || maxLength !== undefined) {
    // A string has at most as many code points as UTF-16 units and at least half as many:
    // count them only when the units alone cannot decide.
    const units = raw.length;
    const decided =
      (minLength === undefined || Math.ceil(units / 2) >= minLength) &&
      (maxLength === undefined || units <= maxLength);
    const length = decided ? -1 : codePointLength(raw);
    if (length >= 0 && minLength !== undefined && length < minLength) {
      return `is shorter than the minimum of ${minLength} characters`;
    }
    if (length >= 0 && maxLength !== undefined && length > maxLength) {
      return `is longer than the maximum of ${maxLength} characters`;
    }
  }
  if (pattern !== undefined) {
    const re = fieldPattern(field, pattern);
    if (re === undefined) return BAD_PATTERN;
    try {
      // testExact: a whole-string match that skips capture groups (RE2's fast path).
      return re.testExact(raw) ? undefined : NO_MATCH;
    } catch {
      return BAD_PATTERN;
    }
  }
  return undefined;
}

/** Code points, a lone surrogate counting as one (as for…of and JSON Schema do). */
export function codePointLength(s: string): number {
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

function emailProblem(raw: string): string | undefined {
  if (raw.length > EMAIL_MAX_LENGTH) return EMAIL_TOO_LONG;
  return EMAIL_FORM.test(raw) ? undefined : NOT_EMAIL;
}

function urlProblem(raw: string): string | undefined {
  if (raw.length > URL_MAX_LENGTH) return URL_TOO_LONG;
  if (!URL_START.test(raw) || URL_BAD_CHAR.test(raw)) return NOT_URL;
  // With an http(s) scheme and "//", a URL that parses has a non-empty host (WHATWG's special
  // schemes require one); canParse spares building the URL object.
  return URL.canParse(raw) ? undefined : NOT_URL;
}

// ---------------------------------------------------------------------------------------------
// Patterns: compiled once per field object (a template's fields are not mutated once loaded;
// the source is kept so a changed pattern is still recompiled).

interface CompiledPattern {
  source: string;
  /** undefined: it does not compile (only for a definition that bypassed checkFieldDefinition). */
  re: RE2JS | undefined;
}
const compiledPatterns = new WeakMap<TemplateInputField, CompiledPattern>();

function fieldPattern(field: TemplateInputField, source: string): RE2JS | undefined {
  let compiled = compiledPatterns.get(field);
  if (compiled === undefined || compiled.source !== source) {
    let re: RE2JS | undefined;
    try {
      re = RE2JS.compile(source);
    } catch {
      re = undefined;
    }
    compiled = { source, re };
    compiledPatterns.set(field, compiled);
  }
  return compiled.re;
}

/** Why a pattern cannot be saved, or undefined; a sound one is kept for the field's values. */
export function patternProblem(field: TemplateInputField, source: string): string | undefined {
  if (source.length > TEMPLATE_LIMITS.patternLength) {
    return `the pattern has ${source.length} characters, more than the ${TEMPLATE_LIMITS.patternLength} allowed`;
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (err) {
    // RE2 has no backreferences nor lookaround: that is what keeps matching linear.
    const why =
      err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err);
    return `the pattern is not a valid RE2 expression (no backreferences or lookaround): ${why}`;
  }
  if (re.programSize() > PATTERN_MAX_PROGRAM_SIZE) {
    return `the pattern is too complex: it compiles to ${re.programSize()} instructions, more than the ${PATTERN_MAX_PROGRAM_SIZE} allowed (lower its repeat counts)`;
  }
  compiledPatterns.set(field, { source, re });
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Numbers

/** The number, or NaN when the value is not in the number form. -0 reads as 0. */
function readNumber(raw: string): number {
  if (raw.length > NUMBER_MAX_LENGTH || !NUMBER_FORM.test(raw)) return NaN;
  const n = Number(raw);
  if (!Number.isFinite(n)) return NaN;
  return n === 0 ? 0 : n;
}

/**
 * Whole when the fraction is absent or only zeros, read from the text: Number() rounds
 * "1.0000000000000000001" to 1, which is not whole.
 */
function isWholeForm(raw: string): boolean {
  const dot = raw.indexOf('.');
  if (dot < 0) return true;
  for (let i = dot + 1; i < raw.length; i++) if (raw.charCodeAt(i) !== 0x30) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Options

// A Set per options array, built once: a select is checked on every create of a run.
const optionSets = new WeakMap<readonly string[], ReadonlySet<string>>();

function optionSet(field: TemplateInputField): ReadonlySet<string> | undefined {
  const options = field.options;
  if (options === undefined) return undefined;
  let set = optionSets.get(options);
  if (set === undefined) {
    set = new Set(options);
    optionSets.set(options, set);
  }
  return set;
}

/** A JSON array of strings, or undefined. */
function readList(raw: string): string[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const list: unknown[] = parsed;
  for (const item of list) if (typeof item !== 'string') return undefined;
  return list as string[];
}

function listProblem(field: TemplateInputField, raw: string): string | undefined {
  const list = readList(raw);
  if (list === undefined) return NOT_LIST;
  const options = optionSet(field);
  for (let i = 0; i < list.length; i++) {
    const item = list[i] as string;
    if (options?.has(item) !== true) return `holds ${quote(item)}, which is not one of the options`;
    // Quadratic, but bounded: every item before this one is a distinct option (at most 500).
    if (list.indexOf(item) < i) return `holds ${quote(item)} twice`;
  }
  return undefined;
}

/** A value quoted for a message, cut short: it may be as long as a whole input. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}
