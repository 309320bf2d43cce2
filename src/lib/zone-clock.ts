// The runtime's time zones (its Intl tz database) as the service computes with them: the zone
// a name stands for, its offset from UTC at an instant, the instant a wall-clock time is. Pure
// and cached: due times (src/templates/definition/due-dates.ts) and the insights' buckets
// (src/insights/) count calendar days in an organization's zone with these.
//
// Written on Intl, not a date library: luxon cost some 390 µs a due time (a new formatter per
// zone check, offset lookups through formatToParts for each operation); this costs one cached
// formatter per zone and an offset lookup cached per quarter hour.

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

// One formatter per zone (null: not a zone), made once: making one costs far more than using it.
const formatters = new Map<string, Intl.DateTimeFormat | null>();
const FORMATTER_LIMIT = 1000;

export function zoneFormat(zone: string): Intl.DateTimeFormat | null {
  let format = formatters.get(zone);
  if (format === undefined) {
    format = null;
    // Offsets ('+01:00') are not zones, though newer runtimes take them as one.
    if (/^[A-Za-z]/.test(zone)) {
      try {
        format = new Intl.DateTimeFormat('en-US', {
          timeZone: zone,
          hourCycle: 'h23',
          year: 'numeric',
          month: 'numeric',
          day: 'numeric',
          hour: 'numeric',
          minute: 'numeric',
          second: 'numeric',
        });
      } catch {
        format = null;
      }
    }
    if (formatters.size >= FORMATTER_LIMIT) formatters.clear();
    formatters.set(zone, format);
  }
  return format;
}

/** Whether `name` is an IANA time zone that this runtime knows, e.g. 'Europe/Berlin', 'UTC'. */
export function isTimeZone(name: string): boolean {
  return zoneFormat(name) !== null;
}

/** A wall-clock time: a local date and time of day, without a zone. */
export interface Wall {
  year: number;
  month: number;
  day: number;
  /** Milliseconds since the local midnight. */
  time: number;
}

/** The wall clock as if it were UTC, in epoch milliseconds (years 0–99 are years, not 19xx). */
export function wallMs(wall: Wall): number {
  const date = new Date(0);
  date.setUTCFullYear(wall.year, wall.month - 1, wall.day);
  return date.getTime() + wall.time;
}

export function wallOf(ms: number): Wall {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    time: ms - Math.floor(ms / DAY_MS) * DAY_MS,
  };
}

// A zone's offsets by quarter hour of UTC: a quarter whose two ends have the same offset has it
// throughout (no zone changes its clocks twice within one), and formatToParts costs some 20 µs
// where a Map lookup costs nothing. Due times fall on few quarters (ends of days, the hours a
// workday starts), so the cache stays small; it is cleared past its limit.
const QUARTER_MS = 900_000;
const offsetCache = new WeakMap<Intl.DateTimeFormat, Map<number, number>>();
const OFFSET_CACHE_LIMIT = 100_000;

/** The zone's offset from UTC at an instant, in milliseconds (local = instant + offset). */
export function offsetAt(format: Intl.DateTimeFormat, ms: number): number {
  let quarters = offsetCache.get(format);
  if (!quarters) {
    quarters = new Map();
    offsetCache.set(format, quarters);
  }
  const quarter = Math.floor(ms / QUARTER_MS);
  const known = quarters.get(quarter);
  if (known !== undefined) return known;
  const offset = readOffset(format, ms);
  const start = quarter * QUARTER_MS;
  if (
    readOffset(format, start) === offset &&
    readOffset(format, start + QUARTER_MS - 1) === offset
  ) {
    if (quarters.size >= OFFSET_CACHE_LIMIT) quarters.clear();
    quarters.set(quarter, offset);
  }
  return offset;
}

/** The offset at an instant, as the runtime's time zone data gives it. */
function readOffset(format: Intl.DateTimeFormat, ms: number): number {
  const parts = format.formatToParts(ms);
  const get = (type: Intl.DateTimeFormatPartTypes) =>
    Number(parts.find((part) => part.type === type)!.value);
  const second = Math.floor(ms / 1000) * 1000;
  const local = wallMs({
    year: get('year'),
    month: get('month'),
    day: get('day'),
    time: ((get('hour') * 60 + get('minute')) * 60 + get('second')) * 1000,
  });
  return local - second;
}

/**
 * The instant a wall-clock time is in the zone. Where the clocks skip it, the time is moved
 * forward by the gap; where it happens twice, the first guess whose offset holds is taken.
 */
export function instantOf(format: Intl.DateTimeFormat, wall: Wall): number {
  const local = wallMs(wall);
  const o1 = offsetAt(format, local);
  const guess = local - o1;
  const o2 = offsetAt(format, guess);
  if (o1 === o2) return guess;
  const second = local - o2;
  const o3 = offsetAt(format, second);
  if (o2 === o3) return second;
  // In a gap: neither offset holds. The earlier offset moves the time forward by the gap.
  return local - Math.min(o2, o3);
}
