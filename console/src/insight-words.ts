// The insights' figures in words, and the calendar arithmetic of their range. Durations as a
// person says them ("3.2 s", "12 min", "1 h 20 min", "2 d 5 h"), rates as percentages, a
// bucket's start as a short label in the organization's time zone (the zone the API cuts its
// buckets in), and a date picked in a date input as the instant its day starts in that zone.
// Pure: no DOM, no clock.
import type { RunInsights } from 'workflow-run-client';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A duration in words, to two units at most: "850 ms", "3.2 s", "1 min 20 s", "1 h 20 min". */
export function durationWords(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const abs = Math.abs(ms);
  if (abs < SECOND) return `${Math.round(ms)} ms`;
  if (abs < 10 * SECOND) return `${trim(ms / SECOND, 1)} s`;
  if (abs < MINUTE) return `${Math.round(ms / SECOND)} s`;
  const two = (big: number, bigUnit: string, small: number, smallUnit: string) => {
    // Rounded at the smaller unit, so 59.6 s shows as 1 min, never as "0 min 60 s".
    const total = Math.round(abs / small);
    const whole = Math.floor(total / (big / small));
    const rest = total - whole * (big / small);
    const sign = ms < 0 ? '−' : '';
    return rest === 0
      ? `${sign}${whole} ${bigUnit}`
      : `${sign}${whole} ${bigUnit} ${rest} ${smallUnit}`;
  };
  if (abs < 10 * MINUTE) return two(MINUTE, 'min', SECOND, 's');
  if (abs < HOUR) return `${Math.round(ms / MINUTE)} min`;
  if (abs < DAY) return two(HOUR, 'h', MINUTE, 'min');
  return two(DAY, 'd', HOUR, 'h');
}

function trim(value: number, digits: number): string {
  return String(Number(value.toFixed(digits)));
}

/** A share as a percentage ("25%", "0.5%"); "—" when there is nothing to share out. */
export function rateWords(part: number, whole: number): string {
  if (whole <= 0) return '—';
  const pct = (part / whole) * 100;
  if (pct === 0 || pct >= 10) return `${Math.round(pct)}%`;
  return `${trim(pct, 1)}%`;
}

/** A share, for sorting: -1 (before every real share) when there is nothing to share out. */
export function rateOf(part: number, whole: number): number {
  return whole > 0 ? part / whole : -1;
}

/** How far the figures trail, in words: "" when caught up, else "4 s behind". */
export function lagWords(lagMs: number): string {
  return lagMs > 0 ? `${durationWords(lagMs)} behind` : '';
}

/** The length of a bucket: the API's own values. */
export type Bucket = RunInsights['bucket'];
export const BUCKETS = ['hour', 'day', 'week'] as const satisfies readonly Bucket[];
export const BUCKET_WORDS: Record<Bucket, string> = {
  hour: 'by hour',
  day: 'by day',
  week: 'by week',
};
/** The API's default range for each bucket, in words. */
export const DEFAULT_RANGE_WORDS: Record<Bucket, string> = {
  hour: 'the last 2 days',
  day: 'the last 30 days',
  week: 'the last 26 weeks',
};

/** The wall clock of an instant in a zone: [year, month (1–12), day, hour, minute]. */
function wallClock(instant: number, zone: string): number[] {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(instant));
  const of = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return [of('year'), of('month'), of('day'), of('hour'), of('minute'), of('second')];
}

/** How far a zone's wall clock is ahead of UTC at an instant, in ms. */
function offsetAt(instant: number, zone: string): number {
  const [y, mo, d, h, mi, s] = wallClock(instant, zone) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return Date.UTC(y, mo - 1, d, h, mi, s) - Math.floor(instant / SECOND) * SECOND;
}

/** Whether a text is a date as a date input gives it (YYYY-MM-DD). */
export function isDate(text: string | null | undefined): text is string {
  return !!text && /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text));
}

/**
 * The instant a day starts in a zone (its local midnight), as an ISO time; `plusDays` moves to
 * a later day first (1: the instant the day ends).
 */
export function dayStart(date: string, zone: string, plusDays = 0): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d + plusDays);
  // The offset at the wall time read as UTC is right but for the hours around a change of
  // offset; reading it again at the instant found settles those.
  let instant = wall - offsetAt(wall, zone);
  instant = wall - offsetAt(instant, zone);
  return new Date(instant).toISOString();
}

const formats = new Map<string, Intl.DateTimeFormat>();
function format(zone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${zone} ${JSON.stringify(options)}`;
  let found = formats.get(key);
  if (!found) {
    found = new Intl.DateTimeFormat(undefined, { timeZone: zone, ...options });
    formats.set(key, found);
  }
  return found;
}

/** A day in words, in a zone: "3 Mar 2026". */
export function dayWords(iso: string, zone: string): string {
  return format(zone, { day: 'numeric', month: 'short', year: 'numeric' }).format(new Date(iso));
}

/** The wall clock's [weekday (0 Sunday), day of the month, hour] of an instant in a zone. */
function dayAndHour(iso: string, zone: string): [number, number, number] {
  const [y, m, d, h] = wallClock(Date.parse(iso), zone) as [number, number, number, number];
  return [new Date(Date.UTC(y, m - 1, d)).getUTCDay(), d, h];
}

/** How many of each bucket a label may stand for, in steps a reader counts in. */
const LABEL_STEPS: Record<Bucket, number[]> = {
  hour: [1, 2, 3, 6, 12, 24, 48, 72, 168, 336],
  day: [1, 2, 7, 14, 28, 56, 91, 182],
  week: [1, 2, 4, 8, 13, 26, 52],
};

/**
 * The labels under a time axis, at most one every `minEvery` buckets and on round times: whole
 * hours of the day (a day's name at midnight), Mondays, the first of a month; null where a
 * bucket has no label. Days and hours are those of the zone the buckets are cut in.
 */
export function axisLabels(
  starts: string[],
  bucket: Bucket,
  zone: string,
  minEvery: number,
): Array<string | null> {
  const step = LABEL_STEPS[bucket].find((s) => s >= minEvery) ?? Math.ceil(minEvery);
  const dayName = (iso: string) =>
    format(zone, { day: 'numeric', month: 'short' }).format(new Date(iso));
  const time = (iso: string) =>
    format(zone, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
  let kept = 0;
  return starts.map((iso, i) => {
    const [weekday, day, hour] = dayAndHour(iso, zone);
    let show: boolean;
    if (bucket === 'hour') {
      show = step < 24 ? hour % step === 0 : hour === 0 && kept++ % (step / 24) === 0;
    } else if (bucket === 'day') {
      show =
        step <= 2
          ? i % step === 0
          : step <= 14
            ? weekday === 1 && kept++ % (step / 7) === 0
            : day === 1;
    } else {
      show = i % step === 0;
    }
    if (!show) return null;
    if (bucket !== 'hour') return dayName(iso);
    return hour === 0 ? dayName(iso) : time(iso);
  });
}

/** A bucket in full words, for the tables: "3 Mar 2026, 14:00–15:00", "week of 2 Mar 2026". */
export function bucketWords(start: string, end: string, bucket: Bucket, zone: string): string {
  if (bucket === 'day') return dayWords(start, zone);
  if (bucket === 'week') return `week of ${dayWords(start, zone)}`;
  const time = format(zone, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return `${dayWords(start, zone)}, ${time.format(new Date(start))}–${time.format(new Date(end))}`;
}

/** A duration axis's ticks: round steps (1 s, 5 min, 1 h, …) from 0 past the largest value. */
const DURATION_STEPS = [
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  30 * DAY,
];

/** Ticks for an axis of durations, 0 to at least `max`, at most about `most` of them. */
export function durationTicks(max: number, most = 5): number[] {
  if (!(max > 0)) return [0, SECOND];
  const step =
    max < SECOND
      ? niceStep(max, most)
      : (DURATION_STEPS.find((s) => max / s <= most) ?? niceStep(max, most));
  return ticksOf(max, step);
}

/** Ticks for an axis of counts: whole numbers, 0 to at least `max`. */
export function countTicks(max: number, most = 5): number[] {
  if (!(max > 0)) return [0, 1];
  return ticksOf(max, Math.max(1, niceStep(max, most)));
}

function niceStep(max: number, most: number): number {
  const raw = max / most;
  const power = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].find((n) => n * power >= raw) ?? 10;
  return nice * power;
}

function ticksOf(max: number, step: number): number[] {
  const ticks = [0];
  while (ticks[ticks.length - 1]! < max) ticks.push(ticks.length * step);
  return ticks;
}
