// The insights' pure parts: the DDSketch bins (quantiles within 1% of the exact ones, merging
// exact, the stored text read back the same) and the buckets of the organization's clock (days
// of 23 and 25 hours, weeks from Monday, a zone half an hour off UTC).
import { expect } from 'chai';
import fc from 'fast-check';
import {
  addDuration,
  binsText,
  emptyBins,
  mergeBins,
  parseBins,
  quantiles,
} from '../../src/insights/duration-sketch.js';
import { bucketBounds, bucketStart } from '../../src/insights/insight-buckets.js';
import { slotOf } from '../../src/insights/insight-fold.js';

const exact = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))]!;
const iso = (ms: number) => new Date(ms).toISOString();

describe('insights: duration sketch', () => {
  it('gives each quantile within 1% of the exact one, and merges split bins into the same bins', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 400 * 86_400_000 }), { minLength: 1, maxLength: 400 }),
        fc.nat(),
        (values, cut) => {
          const all = emptyBins();
          for (const v of values) addDuration(all, v);
          const [p50, p90, p0, p100] = quantiles(all, [0.5, 0.9, 0, 1]);
          for (const [q, got] of [
            [0.5, p50],
            [0.9, p90],
            [0, p0],
            [1, p100],
          ] as const) {
            const want = exact(values, q);
            expect(Math.abs(got! - want), `q${q}: ${got} vs ${want}`).to.be.at.most(want * 0.01);
          }
          // Two halves merged (through their stored text) are the whole, bin for bin.
          const at = cut % (values.length + 1);
          const left = emptyBins();
          const right = emptyBins();
          values.slice(0, at).forEach((v) => addDuration(left, v));
          values.slice(at).forEach((v) => addDuration(right, v));
          const merged = parseBins(binsText(left));
          mergeBins(merged, parseBins(binsText(right)));
          expect(quantiles(merged, [0.5, 0.9])).to.deep.equal([p50, p90]);
          expect(merged.zero).to.equal(all.zero);
          // The counts from the first bin in use to the last, with its key.
          const trimmed = (b: typeof all) => {
            const used = b.counts.map((c, k) => (c > 0 ? k : -1)).filter((k) => k >= 0);
            if (used.length === 0) return [];
            const [first, last] = [used[0]!, used[used.length - 1]!];
            return [b.offset + first, ...b.counts.slice(first, last + 1)];
          };
          expect(trimmed(merged)).to.deep.equal(trimmed(all));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('answers null for no values', () => {
    expect(quantiles(emptyBins(), [0.5])).to.deep.equal([null]);
  });
});

describe('insights: buckets of the organization’s clock', () => {
  it('makes the day summer time ends 25 hours and the day it starts 23, in Europe/Berlin', () => {
    const days = bucketBounds(
      Date.parse('2026-10-24T12:00:00Z'),
      Date.parse('2026-10-26T12:00:00Z'),
      'day',
      'Europe/Berlin',
      10,
    )!.map(iso);
    expect(days).to.deep.equal([
      '2026-10-23T22:00:00.000Z',
      '2026-10-24T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
      '2026-10-26T23:00:00.000Z',
    ]);
    const spring = bucketBounds(
      Date.parse('2026-03-29T00:30:00Z'),
      Date.parse('2026-03-29T21:00:00Z'),
      'hour',
      'Europe/Berlin',
      100,
    )!;
    expect(bucketStart(Date.parse('2026-03-29T12:00:00Z'), 'day', 'Europe/Berlin')).to.equal(
      Date.parse('2026-03-28T23:00:00Z'),
    );
    expect(
      bucketBounds(
        Date.parse('2026-03-29T00:00:00Z'),
        Date.parse('2026-03-29T21:00:00Z'),
        'day',
        'Europe/Berlin',
        10,
      )!.map(iso),
    ).to.deep.equal(['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    // 00:00 to 21:00 UTC: 21 hours, though the clock reads 01:00 to 23:00 (02:00 never came).
    expect(spring.length - 1).to.equal(21);
  });

  it('starts weeks on Monday, local midnight', () => {
    // Wednesday 2026-11-25 in New York: the week began Monday the 23rd, 05:00 UTC.
    expect(
      iso(bucketStart(Date.parse('2026-11-25T15:00:00Z'), 'week', 'America/New_York')),
    ).to.equal('2026-11-23T05:00:00.000Z');
  });

  it('keeps hours of a zone half an hour off UTC on its own clock, slots included', () => {
    const at = Date.parse('2026-11-27T10:10:00Z'); // 15:40 in Kolkata
    expect(iso(bucketStart(at, 'hour', 'Asia/Kolkata'))).to.equal('2026-11-27T09:30:00.000Z');
    expect(iso(slotOf(at, 'Asia/Kolkata'))).to.equal('2026-11-27T09:30:00.000Z');
    expect(iso(bucketStart(at, 'day', 'Asia/Kolkata'))).to.equal('2026-11-26T18:30:00.000Z');
  });

  it('refuses more buckets than allowed', () => {
    expect(bucketBounds(0, 1000 * 3_600_000, 'hour', 'UTC', 500)).to.equal(undefined);
    expect(bucketBounds(0, 500 * 3_600_000, 'hour', 'UTC', 500)).to.have.length(501);
  });
});
