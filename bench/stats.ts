// Percentiles and small number helpers shared by the probes and the report.

/** The p-th percentile (0-100) of the values, nearest-rank; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarize(values: readonly number[]): LatencySummary {
  return {
    count: values.length,
    p50: round(percentile(values, 50)),
    p90: round(percentile(values, 90)),
    p99: round(percentile(values, 99)),
    max: round(maximum(values)),
  };
}

/**
 * The largest value; NaN for none. Not Math.max(...values): spread into arguments, a long
 * phase's latencies (some 125,000 and more) overflow the call stack.
 */
export function maximum(values: readonly number[]): number {
  let max = values.length > 0 ? values[0]! : Number.NaN;
  for (const value of values) if (value > max) max = value;
  return max;
}

/** The median: the middle value, or the mean of the two middle ones; NaN for no values. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function ratio(a: number, b: number): number {
  return b > 0 ? round(a / b, 3) : Number.NaN;
}
