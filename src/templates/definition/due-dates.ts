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
//   forward) is moved forward by the gap, as luxon does: 02:30 on 2026-03-29 in Europe/Berlin
//   is 03:30. A local time that happens twice (clocks going back) is luxon's pick of the two.
//   Only the day reached is adjusted: the local time kept is always the anchor's.
// - A zone that is not known, a malformed date, an amount that is not finite (or not whole for
//   days and business days) or a result out of range throws a RangeError: callers validate
//   their input first, so one here is a defect.
import { DateTime, IANAZone } from 'luxon';
import type { DueUnit } from './definition-types.js';

/**
 * Whether `name` is an IANA time zone that this runtime knows (luxon IANAZone.isValidZone),
 * e.g. 'Europe/Berlin', 'UTC'.
 */
export function isTimeZone(name: string): boolean {
  return IANAZone.isValidZone(name);
}

/**
 * What a due time counts from: an instant, or a calendar date ('YYYY-MM-DD', the value of a
 * date field).
 */
export type DueAnchorValue = { instant: Date } | { date: string };

const HOUR_MS = 3_600_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** luxon's weekday numbers. */
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
  if (!isTimeZone(timeZone)) throw new RangeError(`unknown time zone '${timeZone}'`);
  if (!Number.isFinite(amount)) throw new RangeError(`due amount ${amount} is not finite`);
  const start = anchorTime(anchor, timeZone);
  let due: DateTime;
  switch (unit) {
    case 'hours':
      due = start.plus({ milliseconds: Math.round(amount * HOUR_MS) });
      break;
    case 'days':
      due = start.plus({ days: whole(amount, unit) });
      break;
    case 'business_days':
      // One shift by the whole count of calendar days: stepping a day at a time would carry a
      // DST gap's forward shift into every later day.
      due = start.plus({ days: businessDayOffset(start.weekday, whole(amount, unit)) });
      break;
  }
  if (!due.isValid) throw new RangeError(`due time out of range (${due.invalidExplanation})`);
  return due.toJSDate();
}

function anchorTime(anchor: DueAnchorValue, timeZone: string): DateTime {
  if ('instant' in anchor) {
    const time = DateTime.fromJSDate(anchor.instant, { zone: timeZone });
    if (!time.isValid) throw new RangeError('due anchor is not a valid instant');
    return time;
  }
  // fromISO alone also takes weeks, ordinals and times: only the plain calendar date is a date.
  const day = DATE.test(anchor.date) ? DateTime.fromISO(anchor.date, { zone: timeZone }) : null;
  if (!day?.isValid) throw new RangeError(`due anchor '${anchor.date}' is not a date`);
  return day.endOf('day');
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
