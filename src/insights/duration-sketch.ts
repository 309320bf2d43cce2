// Durations (milliseconds) as a DDSketch (@datadog/sketches-js): a mergeable summary whose
// quantiles are within RELATIVE_ACCURACY of the exact ones, whatever the number of values.
// Stored as the sketch's bins, key → count (JSON), where key is the library's logarithmic
// mapping of a value; adding or merging is adding counts per key, so rollups of any slots merge
// exactly, and a quantile is the library's, over a sketch refilled from the bins.
//
// The guarantee (DDSketch's): for q in [0, 1], the value returned is within 1% of the exact
// q-quantile, the value of rank ⌊q·(n−1)⌋ in ascending order (0-based). Values below the
// mapping's smallest (well under 1 ms) count as 0, exactly.
import { DDSketch } from '@datadog/sketches-js';

export const RELATIVE_ACCURACY = 0.01;

/** Bins: the mapping's key (as a string) → how many values fell in it; 'z' holds the zeros. */
export type DurationBins = Record<string, number>;

const ZERO = 'z';
const mapping = new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY }).mapping;

/** Counts one duration (ms, ≥ 0) into the bins. */
export function addDuration(bins: DurationBins, ms: number): void {
  const key = ms > mapping.minPossible ? String(mapping.key(ms)) : ZERO;
  bins[key] = (bins[key] ?? 0) + 1;
}

/** Adds the counts of `from` into `into`. */
export function mergeBins(into: DurationBins, from: DurationBins): void {
  for (const [key, count] of Object.entries(from)) into[key] = (into[key] ?? 0) + count;
}

/** The quantiles asked for, each within RELATIVE_ACCURACY; null for no values. */
export function quantiles(bins: DurationBins, qs: readonly number[]): Array<number | null> {
  const sketch = new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY });
  for (const [key, count] of Object.entries(bins)) {
    if (count <= 0) continue;
    // A bin's representative value maps back to its key: the sketch holds exactly these bins.
    sketch.accept(key === ZERO ? 0 : mapping.value(Number(key)), count);
  }
  if (sketch.count === 0) return qs.map(() => null);
  return qs.map((q) => sketch.getValueAtQuantile(q));
}

export function parseBins(text: string | null | undefined): DurationBins {
  return text ? (JSON.parse(text) as DurationBins) : {};
}
