// The calendar forms of typed fields (field-values.ts): a date YYYY-MM-DD and an RFC 3339
// datetime with seconds and an offset, read digit by digit: no match arrays, no Date objects
// (a create checks up to 200 values), and Date.UTC's mapping of years 0–99 to the 1900s avoided.

/** The decimal number written by `count` ASCII digits at `from`, or -1. */
function digits(s: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (!(d >= 0 && d <= 9)) return -1; // NaN past the end fails too
    n = n * 10 + d;
  }
  return n;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Reads YYYY-MM-DD at the start of s into `ymd`; false when it is not a day of the calendar. */
function readYmd(s: string, ymd: { y: number; m: number; d: number }): boolean {
  if (s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d) return false;
  const y = digits(s, 0, 4);
  const m = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return false;
  ymd.y = y;
  ymd.m = m;
  ymd.d = d;
  return true;
}

// Reused by every read: the module is synchronous, so no two reads overlap.
const scratch = { y: 0, m: 0, d: 0 };

export function isDate(raw: string): boolean {
  return raw.length === 10 && readYmd(raw, scratch);
}

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;

/** The instant in epoch milliseconds, or NaN when the value is not in the datetime form. */
export function readDatetime(raw: string): number {
  // Shortest: YYYY-MM-DDTHH:MM:SSZ (20); longest: 9 fraction digits and ±HH:MM (35).
  const len = raw.length;
  if (len < 20 || len > 35 || !readYmd(raw, scratch)) return NaN;
  if (raw.charCodeAt(10) !== 0x54 || raw.charCodeAt(13) !== 0x3a || raw.charCodeAt(16) !== 0x3a) {
    return NaN;
  }
  const hh = digits(raw, 11, 2);
  const mi = digits(raw, 14, 2);
  const ss = digits(raw, 17, 2);
  if (hh < 0 || hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 59) return NaN;

  let i = 19;
  let fractionMs = 0;
  if (raw.charCodeAt(i) === 0x2e) {
    const start = ++i;
    while (i < len && i - start < 10) {
      const d = raw.charCodeAt(i) - 0x30;
      if (!(d >= 0 && d <= 9)) break;
      // Only the first three digits count: the value is in whole milliseconds.
      if (i - start < 3) fractionMs += d * (i - start === 0 ? 100 : i - start === 1 ? 10 : 1);
      i++;
    }
    const count = i - start;
    if (count < 1 || count > 9) return NaN;
  }

  let offsetMinutes = 0;
  const sign = raw.charCodeAt(i);
  if (sign === 0x5a) {
    i += 1;
  } else if (sign === 0x2b || sign === 0x2d) {
    if (raw.charCodeAt(i + 3) !== 0x3a) return NaN;
    const oh = digits(raw, i + 1, 2);
    const om = digits(raw, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return NaN;
    offsetMinutes = (sign === 0x2b ? 1 : -1) * (oh * 60 + om);
    i += 6;
  } else {
    return NaN;
  }
  if (i !== len) return NaN;

  return (
    daysFromCivil(scratch.y, scratch.m, scratch.d) * MS_PER_DAY +
    (hh * 60 + mi - offsetMinutes) * MS_PER_MINUTE +
    ss * 1000 +
    fractionMs
  );
}
