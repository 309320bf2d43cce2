// Durations (milliseconds) as a DDSketch (@datadog/sketches-js): a mergeable summary whose
// quantiles are within RELATIVE_ACCURACY of the exact ones, whatever the number of values.
// Stored as the sketch's bins: the library's logarithmic mapping gives each value a key, and
// the bins count the values per key, densely from the smallest key ([zeros, offset, counts…] in
// JSON, as the library's own DenseStore keeps them). Adding or merging is adding counts per key,
// so rollups of any slots merge exactly; a quantile is the library's, over a sketch refilled
// from the bins. Dense arrays, not objects keyed by bin: an answer merges hundreds of rollup
// rows of hundreds of bins each, and parsing and adding arrays of numbers costs a fraction of
// objects with as many keys (`npm run bench -- --only=insights`).
//
// The guarantee (DDSketch's): for q in [0, 1], the value returned is within 1% of the exact
// q-quantile, the value of rank ⌊q·(n−1)⌋ in ascending order (0-based). Values at or below the
// mapping's smallest (well under 1 ms) count as 0, exactly.
import { DDSketch } from '@datadog/sketches-js';

export const RELATIVE_ACCURACY = 0.01;

export interface DurationBins {
  /** Values counted as 0. */
  zero: number;
  /** The key of counts[0]. */
  offset: number;
  counts: number[];
}

const mapping = new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY }).mapping;

export function emptyBins(): DurationBins {
  return { zero: 0, offset: 0, counts: [] };
}

/** Widens the bins to hold keys from `low` to `high` (inclusive). */
function cover(bins: DurationBins, low: number, high: number): void {
  if (bins.counts.length === 0) {
    bins.offset = low;
    bins.counts = new Array<number>(high - low + 1).fill(0);
    return;
  }
  if (low < bins.offset) {
    bins.counts = [...new Array<number>(bins.offset - low).fill(0), ...bins.counts];
    bins.offset = low;
  }
  const end = bins.offset + bins.counts.length - 1;
  if (high > end) for (let k = end; k < high; k++) bins.counts.push(0);
}

/** Counts one duration (ms, ≥ 0) into the bins. */
export function addDuration(bins: DurationBins, ms: number): void {
  if (!(ms > mapping.minPossible)) {
    bins.zero += 1;
    return;
  }
  const key = mapping.key(ms);
  cover(bins, key, key);
  bins.counts[key - bins.offset]! += 1;
}

/** Adds the counts of `from` into `into`. */
export function mergeBins(into: DurationBins, from: DurationBins): void {
  into.zero += from.zero;
  const n = from.counts.length;
  if (n === 0) return;
  cover(into, from.offset, from.offset + n - 1);
  const shift = from.offset - into.offset;
  const target = into.counts;
  const source = from.counts;
  for (let i = 0; i < n; i++) target[shift + i]! += source[i]!;
}

/** The quantiles asked for, each within RELATIVE_ACCURACY; null for no values. */
export function quantiles(bins: DurationBins, qs: readonly number[]): Array<number | null> {
  const sketch = new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY });
  if (bins.zero > 0) sketch.accept(0, bins.zero);
  bins.counts.forEach((count, i) => {
    // A bin's representative value maps back to its key: the sketch holds exactly these bins.
    if (count > 0) sketch.accept(mapping.value(bins.offset + i), count);
  });
  if (sketch.count === 0) return qs.map(() => null);
  return qs.map((q) => sketch.getValueAtQuantile(q));
}

export function binsText(bins: DurationBins): string {
  return JSON.stringify([bins.zero, bins.offset, ...bins.counts]);
}

export function parseBins(text: string | null | undefined): DurationBins {
  if (!text) return emptyBins();
  const values = JSON.parse(text) as number[];
  return { zero: values[0] ?? 0, offset: values[1] ?? 0, counts: values.slice(2) };
}
