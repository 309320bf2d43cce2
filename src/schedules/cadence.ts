// When a schedule fires: its cadence (a 5-field cron expression read in an IANA time zone, or an
// interval of whole seconds from its start), bounded by start_at and end_at. Cron expressions
// are read by croner (a well-kept library with time zones; nothing here parses cron), and two
// rules are added on top for daylight saving time, as the docs state them:
//   - a local time that occurs twice (the clocks go back) fires once, at its first occurrence:
//     a time whose local wall clock the zone already showed shortly before is passed over;
//   - a local time that does not exist (the clocks go forward) fires at the next local time that
//     does: croner's own answer (Europe/Berlin, 2026-03-29 02:30 → 03:00 local, 01:00 UTC).
// No I/O: the clock is always an argument.
import { Cron } from 'croner';

export type Cadence = { cron: string } | { intervalSeconds: number };

/** What the times of a schedule follow. */
export interface CadenceSpec {
  cadence: Cadence;
  timeZone: string;
  /** Intervals count from here (start_at, or the schedule's creation); no time before start_at. */
  anchor: Date;
  startAt?: Date | null;
  endAt?: Date | null;
}

/** The shortest interval a schedule takes. */
export const MIN_INTERVAL_SECONDS = 60;

const crons = new Map<string, Cron>();

/** A cron expression's problem, in words, or undefined: 5 fields, as croner reads them. */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) {
    return `a cron expression has 5 fields (minute hour day-of-month month day-of-week), not ${fields.length}`;
  }
  try {
    new Cron(expression, { paused: true });
    return undefined;
  } catch (err) {
    return (err as Error).message.replace(/^CronPattern: /, '');
  }
}

/** Whether the IANA time zone is one this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function cronOf(expression: string, timeZone: string): Cron {
  const key = `${timeZone}\n${expression}`;
  let cron = crons.get(key);
  if (!cron) {
    if (crons.size >= 10_000) crons.clear();
    cron = new Cron(expression, { timezone: timeZone, paused: true });
    crons.set(key, cron);
  }
  return cron;
}

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/** The local wall-clock minute of an instant in a zone ("2026-10-25 02:30"). */
export function wallClock(at: Date, timeZone: string): string {
  let format = wallClocks.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('sv-SE', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    wallClocks.set(timeZone, format);
  }
  return format.format(at);
}

/** The cadence's first time strictly after `after`, before the bounds are applied. */
function nextRaw(spec: CadenceSpec, after: Date): Date | undefined {
  if ('intervalSeconds' in spec.cadence) {
    const step = spec.cadence.intervalSeconds * 1000;
    const anchor = spec.anchor.getTime();
    const k = Math.max(0, Math.floor((after.getTime() - anchor) / step) + 1);
    return new Date(anchor + k * step);
  }
  const cron = cronOf(spec.cadence.cron, spec.timeZone);
  let next = cron.nextRun(after) ?? undefined;
  // A local time that occurs twice fires once: its second occurrence is passed over.
  while (next && isRepeat(next, spec.timeZone)) next = cron.nextRun(next) ?? undefined;
  return next;
}

/** Shifts of the clocks: 30 minutes (Lord Howe), an hour, two hours. */
const SHIFTS_MS = [30, 60, 120].map((minutes) => minutes * 60_000);

/** Whether the zone showed the instant's wall-clock minute already, before the clocks went back. */
function isRepeat(at: Date, timeZone: string): boolean {
  const wall = wallClock(at, timeZone);
  return SHIFTS_MS.some((shift) => wallClock(new Date(at.getTime() - shift), timeZone) === wall);
}

/** The schedule's first time strictly after `after` within its bounds; undefined when none is left. */
export function nextTime(spec: CadenceSpec, after: Date): Date | undefined {
  let from = after;
  if (spec.startAt && spec.startAt.getTime() > from.getTime()) {
    from = new Date(spec.startAt.getTime() - 1);
  }
  const next = nextRaw(spec, from);
  if (!next) return undefined;
  if (spec.endAt && next.getTime() > spec.endAt.getTime()) return undefined;
  return next;
}

/** Up to `count` times strictly after `after`, in order. */
export function nextTimes(spec: CadenceSpec, after: Date, count: number): Date[] {
  const times: Date[] = [];
  let at = after;
  while (times.length < count) {
    const next = nextTime(spec, at);
    if (!next) break;
    times.push(next);
    at = next;
  }
  return times;
}

/**
 * The times in [from, to], in order, at most `limit` + 1 of them (so a caller can tell that
 * there were more than `limit`).
 */
export function timesBetween(spec: CadenceSpec, from: Date, to: Date, limit: number): Date[] {
  const times: Date[] = [];
  let at = new Date(from.getTime() - 1);
  while (times.length <= limit) {
    const next = nextTime(spec, at);
    if (!next || next.getTime() > to.getTime()) break;
    times.push(next);
    at = next;
  }
  return times;
}
