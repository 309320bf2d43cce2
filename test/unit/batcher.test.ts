import { expect } from 'chai';
import { BatchDropped, Batcher } from '../../src/lib/batcher.js';
import { Deadline } from '../../src/lib/deadline.js';

describe('Batcher', () => {
  it('groups items submitted together and gives each caller its own result', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push(items);
        return items.map((i) => i * 2);
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const results = await Promise.all([1, 2, 3].map((i) => batcher.submit(i)));
    expect(results).to.deep.equal([2, 4, 6]);
    expect(batches).to.deep.equal([[1, 2, 3]]);
  });

  it('respects maxBatch and maxInFlight, and collects arrivals during a flush into the next batch', async () => {
    let inFlight = 0;
    let most = 0;
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        inFlight++;
        most = Math.max(most, inFlight);
        batches.push(items);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return items;
      },
      { maxBatch: 3, maxInFlight: 2 },
    );
    await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.submit(i)));
    expect(most).to.equal(2);
    expect(batches.every((b) => b.length <= 3)).to.equal(true);
    expect(batches.flat().sort((a, b) => a - b)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('rejects only the item whose result is an Error, and every item when the flush throws', async () => {
    const batcher = new Batcher<number, number>(
      async (items) => items.map((i) => (i === 2 ? new Error('bad 2') : i)),
      { maxBatch: 10, maxInFlight: 1 },
    );
    const settled = await Promise.allSettled([1, 2, 3].map((i) => batcher.submit(i)));
    expect(settled.map((s) => s.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    const failing = new Batcher<number, number>(
      async () => {
        throw new Error('down');
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const all = await Promise.allSettled([1, 2].map((i) => failing.submit(i)));
    expect(all.every((s) => s.status === 'rejected')).to.equal(true);
  });

  it('reports idle once every submitted item is flushed', async () => {
    let flushed = 0;
    const batcher = new Batcher<number, number>(
      async (items) => {
        await new Promise((r) => setTimeout(r, 10));
        flushed += items.length;
        return items;
      },
      { maxBatch: 2, maxInFlight: 1 },
    );
    for (let i = 0; i < 5; i++) void batcher.submit(i);
    await batcher.idle();
    expect(flushed).to.equal(5);
  });

  it('never flushes an item whose deadline expired while it waited; its neighbours go on', async () => {
    const flushed: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const batcher = new Batcher<number, number>(
      async (items) => {
        flushed.push(items);
        await gate;
        return items;
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const first = batcher.submit(0);
    await new Promise((r) => setImmediate(r)); // 0 is being flushed; the rest wait
    const deadlines = [1, 2, 3].map(() => new Deadline());
    const waiting = [1, 2, 3].map((i) => batcher.submit(i, () => deadlines[i - 1]!.beginWrite()));
    expect(deadlines[1]!.expire()).to.equal(true); // 2 is answered 503 while it waits
    release();
    const results = await Promise.allSettled([first, ...waiting]);
    expect(results.map((r) => r.status)).to.deep.equal([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((results[2] as PromiseRejectedResult).reason).to.be.instanceOf(BatchDropped);
    expect(flushed).to.deep.equal([[0], [1, 3]]);
    // Once its write is on its way, a request's time running out no longer fails it.
    expect(deadlines[0]!.expire()).to.equal(false);
    await batcher.idle();
  });
});
