// A schedule's cadence in words: the common shapes of a 5-field cron expression (minute hour
// day-of-month month day-of-week) read as a person would say them — "every weekday at 09:00",
// "every 15 minutes from 09:00 to 17:45, on weekdays", "on the 1st of every month at 06:30" —
// and an interval ("every 15 minutes"). Any other shape (a day of the month and a day of the
// week both given, L, W, #, steps that do not divide the hour or the day) is shown as the
// expression itself: nothing is guessed. The service reads the expression (croner); this only
// names it. Pure: no DOM, no clock. Also the words for a schedule's overlap rule and records.
import type { FireKind, Overlap, SkipReason } from './vocabulary.js';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

interface Range {
  min: number;
  max: number;
  /** Names a value may be written by (SUN, JAN), from `min`. */
  names?: string[];
}

const MINUTE: Range = { min: 0, max: 59 };
const HOUR: Range = { min: 0, max: 23 };
const DAY_OF_MONTH: Range = { min: 1, max: 31 };
const MONTH: Range = { min: 1, max: 12, names: MONTHS.map((m) => m.slice(0, 3).toUpperCase()) };
// 7 is Sunday too.
const DAY_OF_WEEK: Range = { min: 0, max: 7, names: DAYS.map((d) => d.slice(0, 3).toUpperCase()) };

/** A field read: any value, every n-th value from the first (`*\/n`), or the values listed. */
type Field = { kind: 'any' } | { kind: 'step'; step: number } | { kind: 'list'; values: number[] };

function numberOf(text: string, range: Range): number | undefined {
  if (/^\d{1,2}$/.test(text)) {
    const n = Number(text);
    return n >= range.min && n <= range.max ? n : undefined;
  }
  const at = range.names?.indexOf(text.toUpperCase()) ?? -1;
  return at >= 0 ? range.min + at : undefined;
}

function parseField(text: string, range: Range): Field | undefined {
  if (text === '*' || text === '?') return { kind: 'any' };
  const stepped = /^\*\/(\d{1,2})$/.exec(text);
  if (stepped) {
    const step = Number(stepped[1]);
    if (step < 1) return undefined;
    return step === 1 ? { kind: 'any' } : { kind: 'step', step };
  }
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^(\*|[A-Za-z0-9]+)(?:-([A-Za-z0-9]+))?(?:\/(\d{1,2}))?$/.exec(part);
    if (!match) return undefined;
    const [, first, last, stepText] = match;
    const from = first === '*' ? range.min : numberOf(first!, range);
    let to = last !== undefined ? numberOf(last, range) : from;
    if (first === '*' || (stepText !== undefined && last === undefined)) to = range.max;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (from === undefined || to === undefined || from > to || step < 1) return undefined;
    for (let n = from; n <= to; n += step) values.add(n);
  }
  if (range === DAY_OF_WEEK && values.delete(7)) values.add(0);
  const sorted = [...values].sort((a, b) => a - b);
  const size = range === DAY_OF_WEEK ? 7 : range.max - range.min + 1;
  if (sorted.length === size) return { kind: 'any' };
  // 0,15,30,45 of the minutes is every 15 minutes (of the hours, 0,6,12,18 every 6 hours).
  const step = (sorted[1] ?? 0) - sorted[0]!;
  if (
    (range === MINUTE || range === HOUR) &&
    sorted.length > 1 &&
    size % step === 0 &&
    sorted.length === size / step &&
    sorted.every((v, i) => v === range.min + i * step)
  ) {
    return { kind: 'step', step };
  }
  return { kind: 'list', values: sorted };
}

/** "a, b and c". */
function joined(items: string[]): string {
  return items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

const pad = (n: number) => String(n).padStart(2, '0');
const clock = (hour: number, minute: number) => `${pad(hour)}:${pad(minute)}`;

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

/** Whether the values follow each other with no gap. */
const contiguous = (values: number[]) =>
  values.every((v, i) => i === 0 || v === values[i - 1]! + 1);

/** Days of the week, Monday first (Sunday last, as a week is read). */
function weekDays(values: number[]): number[] {
  return [...values].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7));
}

/** How the days are said: before a time ("every weekday" … "at 09:00") or after a period. */
interface DaysPhrase {
  /** "every weekday", "on the 1st of every month" — followed by " at 09:00". */
  before: string;
  /** ", on weekdays", "" — after "every 15 minutes". */
  after: string;
}

function dayNames(values: number[]): { singular: string; plural: string } | undefined {
  const days = weekDays(values);
  if (days.length === 5 && days.every((d) => d >= 1 && d <= 5)) {
    return { singular: 'weekday', plural: 'weekdays' };
  }
  const ordered = days.map((d) => (d + 6) % 7);
  if (days.length >= 3 && contiguous(ordered)) {
    const range = `${DAYS[days[0]!]} to ${DAYS[days[days.length - 1]!]}`;
    return { singular: range, plural: range };
  }
  return {
    singular: joined(days.map((d) => DAYS[d]!)),
    plural: joined(days.map((d) => `${DAYS[d]!}s`)),
  };
}

function daysPhrase(dom: Field, month: Field, dow: Field): DaysPhrase | undefined {
  if (dom.kind === 'step' || month.kind === 'step' || dow.kind === 'step') return undefined;
  const months = month.kind === 'list' ? joined(month.values.map((m) => MONTHS[m - 1]!)) : '';
  if (dom.kind === 'list' && dow.kind === 'list') return undefined; // either one: cron's OR
  if (dow.kind === 'list') {
    const names = dayNames(dow.values)!;
    const inMonths = months ? ` in ${months}` : '';
    return {
      before: `every ${names.singular}${inMonths}`,
      after: `, on ${names.plural}${inMonths}`,
    };
  }
  if (dom.kind === 'list') {
    if (dom.values.length > 5) return undefined;
    if (month.kind === 'list' && dom.values.length === 1 && month.values.length === 1) {
      const date = `${dom.values[0]} ${MONTHS[month.values[0]! - 1]}`;
      return { before: `every year on ${date}`, after: `, on ${date} every year` };
    }
    const which = `the ${joined(dom.values.map(ordinal))} of ${months || 'every month'}`;
    return { before: `on ${which}`, after: `, on ${which}` };
  }
  if (months) return { before: `every day in ${months}`, after: `, in ${months}` };
  return { before: 'every day', after: '' };
}

/** How the times of a day are said: at given times, or a period. */
type TimesPhrase = { at: string } | { every: string };

function timesPhrase(minute: Field, hour: Field): TimesPhrase | undefined {
  if (minute.kind === 'any' && hour.kind === 'any') return { every: 'every minute' };
  if (minute.kind === 'step' && 60 % minute.step !== 0) return undefined;
  if (hour.kind === 'step' && 24 % hour.step !== 0) return undefined;
  if (minute.kind === 'step' && hour.kind === 'any') {
    return { every: `every ${minute.step} minutes` };
  }
  if (minute.kind === 'list' && hour.kind === 'any') {
    if (minute.values.length === 1 && minute.values[0] === 0) return { every: 'every hour' };
    if (minute.values.length > 4) return undefined;
    return { every: `every hour at ${joined(minute.values.map((m) => `:${pad(m)}`))}` };
  }
  if (minute.kind === 'list' && hour.kind === 'step') {
    if (minute.values.length !== 1) return undefined;
    const m = minute.values[0]!;
    return { every: `every ${hour.step} hours${m === 0 ? '' : ` at :${pad(m)}`}` };
  }
  if (hour.kind !== 'list') return undefined;
  const hours = hour.values;
  if (minute.kind === 'list') {
    if (minute.values.length * hours.length <= 4) {
      const times = hours.flatMap((h) => minute.values.map((m) => clock(h, m)));
      return { at: joined(times) };
    }
    if (minute.values.length === 1 && hours.length >= 3 && contiguous(hours)) {
      const m = minute.values[0]!;
      return { every: `every hour from ${clock(hours[0]!, m)} to ${clock(hours.at(-1)!, m)}` };
    }
    return undefined;
  }
  if (!contiguous(hours)) return undefined;
  const step = minute.kind === 'step' ? minute.step : 1;
  const first = clock(hours[0]!, 0);
  const last = clock(hours.at(-1)!, 60 - step);
  return { every: `every ${step === 1 ? 'minute' : `${step} minutes`} from ${first} to ${last}` };
}

/** A cron expression in words when its shape is a common one, else the expression itself. */
export function cronWords(expression: string): string {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) return expression;
  const [minute, hour, dom, month, dow] = [
    parseField(parts[0]!, MINUTE),
    parseField(parts[1]!, HOUR),
    parseField(parts[2]!, DAY_OF_MONTH),
    parseField(parts[3]!, MONTH),
    parseField(parts[4]!, DAY_OF_WEEK),
  ];
  if (!minute || !hour || !dom || !month || !dow) return expression;
  const days = daysPhrase(dom, month, dow);
  const times = timesPhrase(minute, hour);
  if (!days || !times) return expression;
  return 'at' in times ? `${days.before} at ${times.at}` : `${times.every}${days.after}`;
}

const UNITS = [
  ['week', 7 * 86_400],
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
  ['second', 1],
] as const;

/** A number of seconds in the largest unit that counts it exactly: "90 minutes", "1 day". */
export function durationWords(seconds: number): string {
  if (seconds === 0) return 'none';
  const [unit, size] = UNITS.find(([, s]) => seconds % s === 0)!;
  const n = seconds / size;
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** An interval in words: "every 15 minutes", "every hour", "every 2 days". */
export function intervalWords(seconds: number): string {
  const [unit, size] = UNITS.find(([, s]) => seconds % s === 0)!;
  const n = seconds / size;
  return n === 1 ? `every ${unit}` : `every ${n} ${unit}s`;
}

/** A schedule's cadence in words: "every weekday at 09:00, Europe/Berlin", "every 15 minutes". */
export function cadenceWords(schedule: {
  cron?: string;
  intervalSeconds?: number;
  timeZone: string;
}): string {
  if (schedule.cron !== undefined) return `${cronWords(schedule.cron)}, ${schedule.timeZone}`;
  if (schedule.intervalSeconds !== undefined) return intervalWords(schedule.intervalSeconds);
  return 'no cadence';
}

/** Whether cronWords could say the expression in words (else it shows the expression). */
export function cronHasWords(expression: string): boolean {
  return cronWords(expression) !== expression;
}

/** Each overlap rule, in words (what happens when a time comes while the last run is open). */
export const OVERLAP_WORDS: Record<Overlap, string> = {
  skip: 'skip that time',
  buffer_one: 'hold one time until the previous run ends',
  allow_all: 'start a run anyway',
};

/** Why a time was skipped, in words. */
export const SKIP_WORDS: Record<SkipReason, string> = {
  overlap: 'the previous run was still open',
  catchup_window: 'it was missed longer ago than the catch-up window',
  paused: 'the schedule was paused',
  template_unavailable: 'the template was archived, or its pinned version is gone',
};

/** What asked for a record, in words. */
export const KIND_WORDS: Record<FireKind, string> = {
  cadence: 'on schedule',
  trigger: 'triggered by hand',
  backfill: 'backfilled',
};
