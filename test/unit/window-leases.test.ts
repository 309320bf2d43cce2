// The rate limiter's counting logic, with an in-memory stand-in for the Redis INCRBY script
// (this unit does no I/O; the limiter against real Redis is tested in integration/http).
import { expect } from 'chai';
import { WindowLeases, type CountFn } from '../../src/http/window-leases.js';

/** One shared count store, as Redis is for every API process. */
function fakeRedis() {
  const counts = new Map<string, number>();
  const calls: Array<{ key: string; n: number }> = [];
  let failNext = false;
  const count: CountFn = async (key, _windowMs, n) => {
    calls.push({ key, n });
    if (failNext) {
      failNext = false;
      throw new Error('redis down');
    }
    const total = (counts.get(key) ?? 0) + n;
    counts.set(key, total);
    return total;
  };
  return { count, calls, counts, failOnce: () => (failNext = true) };
}

const WINDOW = 60_000;

function clock(start = 5 * WINDOW + 1000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** One API process's limiter, its Redis stand-in and its clock. */
function limiter(max: number) {
  const redis = fakeRedis();
  const time = clock();
  const leases = new WindowLeases(redis.count, { max, windowMs: WINDOW, prefix: 'p' }, time.now);
  return { redis, time, leases };
}

/** k requests arriving in the same event-loop turn. */
function burst(leases: WindowLeases, keyId: string, k: number): Promise<number[]> {
  return Promise.all(Array.from({ length: k }, () => leases.take(keyId)));
}

describe('WindowLeases (rate limit places)', () => {
  it('numbers a quiet key one request per call, in order', async () => {
    const { redis, time, leases } = limiter(6000);
    const places: number[] = [];
    for (let i = 0; i < 3; i++) {
      places.push(await leases.take('k'));
      time.advance(5000); // quiet: blocks never grow
    }
    expect(places).to.deep.equal([1, 2, 3]);
    expect(redis.calls.map((c) => c.n)).to.deep.equal([1, 1, 1]);
    expect(redis.calls[0]!.key).to.equal('p:ratelimit:{k}:5');
  });

  it('counts the requests of one turn with one call', async () => {
    const { redis, leases } = limiter(6000);
    expect(await burst(leases, 'k', 40)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(redis.calls).to.have.length(1);
  });

  it('leases larger blocks to a busy key, up to a hundredth of the limit', async () => {
    const { redis, leases } = limiter(6000);
    const places: number[] = [];
    for (let i = 0; i < 2000; i++) places.push(await leases.take('k'));
    expect(places).to.deep.equal(Array.from({ length: 2000 }, (_, i) => i + 1));
    expect(Math.max(...redis.calls.map((c) => c.n))).to.equal(60);
    expect(redis.calls.length).to.be.below(2000 / 20);
  });

  it('never lets more than the limit through across processes, and wastes at most a block each', async () => {
    const redis = fakeRedis();
    const time = clock();
    const options = { max: 1000, windowMs: WINDOW, prefix: 'p' };
    const processes = [1, 2, 3].map(() => new WindowLeases(redis.count, options, time.now));
    // Uneven bursts over three processes, `total` requests in all.
    const send = async (total: number) => {
      let sent = 0;
      let allowed = 0;
      for (let round = 0; sent < total; round++) {
        const takes = processes.flatMap((p, i) => {
          const k = Math.min(total - sent, 1 + ((round + i) % 5));
          sent += k;
          return Array.from({ length: k }, () => p.take('k'));
        });
        allowed += (await Promise.all(takes)).filter((place) => place <= options.max).length;
      }
      return allowed;
    };
    // Exactly the limit: only places leased but not yet used are lost, at most a block
    // (max / 100 = 10) per process.
    const first = await send(1000);
    expect(first).to.be.at.least(1000 - 3 * 10);
    // Then far more than the limit: nothing beyond it gets through.
    const second = await send(500);
    expect(first + second).to.be.at.most(1000);
  });

  it('refuses the rest of a full window without asking Redis again', async () => {
    const { redis, leases } = limiter(5);
    expect(await burst(leases, 'k', 7)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    const calls = redis.calls.length;
    expect(leases.take('k')).to.be.above(5);
    expect(leases.take('k')).to.be.above(5);
    expect(redis.calls.length).to.equal(calls);
  });

  it('starts over in the next window, under the next window key', async () => {
    const { redis, time, leases } = limiter(5);
    await burst(leases, 'k', 7);
    time.advance(WINDOW);
    expect(await leases.take('k')).to.equal(1);
    expect(redis.calls.at(-1)!.key).to.equal('p:ratelimit:{k}:6');
    expect(leases.msLeftInWindow()).to.equal(WINDOW - 1000);
  });

  it('rejects the waiting requests when Redis fails, and asks again for the next ones', async () => {
    const { redis, leases } = limiter(50);
    redis.failOnce();
    const failed = await Promise.allSettled([leases.take('k'), leases.take('k')]);
    expect(failed.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    expect(await leases.take('k')).to.equal(1);
  });

  it('keeps separate keys apart', async () => {
    const { leases } = limiter(50);
    const [a, b] = await Promise.all([burst(leases, 'a', 3), burst(leases, 'b', 2)]);
    expect(a).to.deep.equal([1, 2, 3]);
    expect(b).to.deep.equal([1, 2]);
  });
});
