// The bench's summaries of latencies: a long phase at a fixed rate collects hundreds of
// thousands of them, and its summary must still come out.
import { expect } from 'chai';
import { maximum, summarize } from '../../bench/stats.js';

describe('bench latency summaries', () => {
  it('summarizes half a million latencies (a long phase at 200/s), max included', () => {
    const values = Array.from({ length: 500_000 }, (_, i) => (i * 7919) % 1000);
    values[123_456] = 5000;
    const summary = summarize(values);
    expect(summary).to.include({ count: 500_000, max: 5000 });
    expect(summary.p50).to.be.within(499, 501);
  });

  it('takes the largest value, and NaN for none', () => {
    expect(maximum([3, -1, 7, 2])).to.equal(7);
    expect(maximum([-5, -2])).to.equal(-2);
    expect(Number.isNaN(maximum([]))).to.equal(true);
  });
});
