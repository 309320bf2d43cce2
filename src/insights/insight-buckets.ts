// The buckets of an insights answer: hours, days or weeks (from Monday) of the organization's
// clock, as instants. Pure. A day is local midnight to midnight, so across a daylight-saving
// change it lasts 23 or 25 hours; an hour is an hour of the local clock. Every bucket boundary
// is the start of a local hour, so each hourly slot of the rollups falls in exactly one bucket,
// and every day or week bucket is whole local days, so each daily slot does too.
import {
  DAY_MS,
  HOUR_MS,
  instantOf,
  offsetAt,
  wallMs,
  wallOf,
  zoneFormat,
} from '../lib/zone-clock.js';

export const BUCKET_UNITS = ['hour', 'day', 'week'] as const;
export type BucketUnit = (typeof BUCKET_UNITS)[number];

/** A bucket's length, about (days and weeks may be an hour shorter or longer). */
export const UNIT_MS: Record<BucketUnit, number> = {
  hour: HOUR_MS,
  day: DAY_MS,
  week: 7 * DAY_MS,
};

/**
 * The start of the hour of the zone's clock that holds the instant (of UTC's for a zone this
 * runtime does not know: the fold must not stop on one).
 */
export function hourStart(ms: number, zone: string): number {
  const format = zoneFormat(zone);
  const offset = format ? offsetAt(format, ms) : 0;
  return Math.floor((ms + offset) / HOUR_MS) * HOUR_MS - offset;
}

/**
 * The start of the day of the zone's clock that holds the instant (of UTC's for a zone this
 * runtime does not know, as hourStart).
 */
export function dayStart(ms: number, zone: string): number {
  return zoneFormat(zone) ? bucketStart(ms, 'day', zone) : Math.floor(ms / DAY_MS) * DAY_MS;
}

/** The start of the bucket holding the instant. */
export function bucketStart(ms: number, unit: BucketUnit, zone: string): number {
  const format = zoneFormat(zone);
  if (!format) throw new RangeError(`unknown time zone '${zone}'`);
  if (unit === 'hour') return hourStart(ms, zone);
  const offset = offsetAt(format, ms);
  const wall = wallOf(ms + offset);
  let midnight = wallMs({ ...wall, time: 0 });
  if (unit === 'week') {
    const weekday = new Date(midnight).getUTCDay(); // 0 Sunday
    midnight -= ((weekday + 6) % 7) * DAY_MS;
  }
  return instantOf(format, { ...wallOf(midnight), time: 0 });
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucket(start: number, unit: BucketUnit, zone: string): number {
  if (unit === 'hour') return start + HOUR_MS;
  const format = zoneFormat(zone)!;
  const wall = wallOf(start + offsetAt(format, start));
  const days = unit === 'day' ? 1 : 7;
  return instantOf(format, { ...wallOf(wallMs({ ...wall, time: 0 }) + days * DAY_MS), time: 0 });
}

/**
 * The boundaries of the buckets covering [from, to): from's bucket start, each next start, and
 * the end of to's bucket (to itself when it is a boundary). Undefined when there would be more
 * than `max` buckets.
 */
export function bucketBounds(
  from: number,
  to: number,
  unit: BucketUnit,
  zone: string,
  max: number,
): number[] | undefined {
  // A first guess without walking: a day or week is at most an hour longer than its length.
  if ((to - from) / (UNIT_MS[unit] + HOUR_MS) > max + 1) return undefined;
  const bounds = [bucketStart(from, unit, zone)];
  while (bounds[bounds.length - 1]! < to) {
    if (bounds.length > max) return undefined;
    bounds.push(nextBucket(bounds[bounds.length - 1]!, unit, zone));
  }
  return bounds;
}
