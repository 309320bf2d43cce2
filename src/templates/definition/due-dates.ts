// Due times in an organization's time zone: what "2 business days after the run starts" or
// "3 days before the date of field X" means as an instant. Pure: the clock and the zone are the
// caller's.
//
// The contract:
// - Time zones are IANA names this runtime knows (isTimeZone). Names match case-insensitively,
//   as the tz database matches them ('utc' and 'europe/berlin' are known); offsets ('+01:00',
//   'UTC+1') and abbreviations the database lacks are not zones.
// - An instant anchor is that instant. A date anchor ('YYYY-MM-DD', a date field's value) stands
//   for the END of that day in the time zone, 23:59:59.999 local: something due "0 days after"
//   a date is due by the end of it, and "2 business days after Friday 2026-03-27" is due by the
//   end of Tuesday 2026-03-31.
// - hours: exact elapsed time, whatever the clocks do; the amount may be fractional (rounded to
//   the millisecond).
// - days: calendar days in the time zone, keeping the local wall-clock time, so across a
//   daylight-saving change a day lasts 23 or 25 hours. The amount must be whole.
// - business_days: Monday to Friday in the time zone, keeping the local time; no holidays. The
//   amount must be whole. Counting forward, each weekday after the anchor's day counts one:
//   Friday + 1 = Monday, Saturday + 1 = Monday, Sunday + 1 = Monday, Monday + 1 = Tuesday.
//   Backward mirrors it: Monday - 1 = Friday, Sunday - 1 = Friday, Saturday - 1 = Friday.
//   0 leaves the anchor as it is, even on a weekend.
// - Negative amounts count backward (before the anchor).
// - A local time that does not exist on the day reached (the hour skipped when clocks go
//   forward) is moved forward by the gap: 02:30 on 2026-03-29 in Europe/Berlin is 03:30. A
//   local time that happens twice (clocks going back) is the first of the two whose offset
//   holds at it. Only the day reached is adjusted: the local time kept is always the anchor's.
//
// Written on the runtime's Intl (src/lib/zone-clock.ts), not a date library: the worker computes a
// due time for each step it starts, and luxon cost some 390 µs a call here (a new formatter
// per zone check, and offset lookups through formatToParts for each of fromISO, endOf and
// plus: `npm run bench -- --only=rules`, 2026-11-27). This costs one cached formatter per zone
// and two or three offset lookups. The unit tests hold it to luxon as a reference.
// - A zone that is not known, a malformed date, an amount that is not finite (or not whole for
//   days and business days) or a result out of range throws a RangeError: callers validate
//   their input first, so one here is a defect.
import type { DueUnit } from './definition-types.js';
import {
  DAY_MS,
  HOUR_MS,
  instantOf,
  offsetAt,
  wallMs,
  wallOf,
  zoneFormat,
  type Wall,
} from '../../lib/zone-clock.js';

export { isTimeZone } from '../../lib/zone-clock.js';

/** The time zone of an organization that has not set one. */
export const DEFAULT_TIME_ZONE = 'UTC';

/**
 * What a due time counts from: an instant, or a calendar date ('YYYY-MM-DD', the value of a
 * date field).
 */
export type DueAnchorValue = { instant: Date } | { date: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Weekday numbers, Monday 1 to Sunday 7 (ISO). */
const MONDAY = 1;
const FRIDAY = 5;
const SATURDAY = 6;

/**
 * The due time `amount` units after the anchor (before it when negative), counted in
 * `timeZone`.
 */
export function addDue(
  anchor: DueAnchorValue,
  amount: number,
  unit: DueUnit,
  timeZone: string,
): Date {
  const format = zoneFormat(timeZone);
  if (!format) throw new RangeError(`unknown time zone '${timeZone}'`);
  if (!Number.isFinite(amount)) throw new RangeError(`due amount ${amount} is not finite`);
  const start = anchorWall(anchor, format);
  let due: number;
  if (unit === 'hours') {
    due = start.instant + Math.round(amount * HOUR_MS);
  } else {
    const count = whole(amount, unit);
    // The day reached, by whole days on the wall calendar (no zone involved), then its
    // instant at the anchor's local time: stepping a day at a time would carry a DST gap's
    // forward shift into every later day.
    const days = unit === 'days' ? count : businessDayOffset(isoWeekday(start.wall), count);
    const day = wallOf(wallMs({ ...start.wall, time: 0 }) + days * DAY_MS);
    due = instantOf(format, { ...day, time: start.wall.time });
  }
  if (!Number.isFinite(due) || Math.abs(due) > 8.64e15)
    throw new RangeError('due time out of range');
  return new Date(due);
}

/** The anchor as an instant and as the zone's wall clock at it. */
function anchorWall(
  anchor: DueAnchorValue,
  format: Intl.DateTimeFormat,
): { instant: number; wall: Wall } {
  if ('instant' in anchor) {
    const instant = anchor.instant.getTime();
    if (!Number.isFinite(instant)) throw new RangeError('due anchor is not a valid instant');
    return { instant, wall: wallOf(instant + offsetAt(format, instant)) };
  }
  const match = DATE.exec(anchor.date);
  const wall = match && {
    year: Number(match[1]),
    month: Number(match[2]),
    day: Number(match[3]),
    time: DAY_MS - 1, // the end of the day
  };
  // Only a day of the calendar: 2026-02-30 would roll over into March.
  const check = wall && wallOf(wallMs(wall));
  if (!wall || check!.month !== wall.month || check!.day !== wall.day || wall.year < 1) {
    throw new RangeError(`due anchor '${anchor.date}' is not a date`);
  }
  return { instant: instantOf(format, wall), wall };
}

/** Monday 1 to Sunday 7. */
function isoWeekday(wall: Wall): number {
  const weekday = new Date(wallMs({ ...wall, time: 0 })).getUTCDay();
  return weekday === 0 ? 7 : weekday;
}

function whole(amount: number, unit: DueUnit): number {
  if (!Number.isInteger(amount)) throw new RangeError(`${unit} must be whole, not ${amount}`);
  return amount;
}

/**
 * The calendar days from a day of `weekday` (1 Monday .. 7 Sunday) to the day `count` business
 * days after it (before it when negative), in closed form so that any count costs the same.
 */
function businessDayOffset(weekday: number, count: number): number {
  if (count === 0) return 0;
  const forward = count > 0;
  const n = Math.abs(count);
  // A weekend counts as the weekday it leans on: forward from Friday (Saturday + 1 = Friday +
  // 1 = Monday), backward from Monday (Sunday - 1 = Monday - 1 = Friday).
  let shift = 0;
  let day = weekday;
  if (weekday >= SATURDAY) {
    shift = forward ? FRIDAY - weekday : 8 - weekday;
    day = forward ? FRIDAY : MONDAY;
  }
  const rest = n % 5;
  let days = Math.floor(n / 5) * 7 + rest;
  // The rest crosses a weekend when it runs past Friday (forward) or before Monday (backward).
  if (forward ? day + rest > FRIDAY : day - rest < MONDAY) days += 2;
  return shift + (forward ? days : -days);
}
