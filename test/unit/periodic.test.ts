import { expect } from 'chai';
import { Periodic, type Timers } from '../../src/lib/periodic.js';

/** Timers that fire only when the test moves the clock. */
class FakeClock implements Timers {
  time = 0;
  private next = 1;
  private readonly pending = new Map<number, { at: number; run: () => void }>();

  setTimeout(run: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { at: this.time + ms, run });
    return id;
  }

  now(): number {
    return this.time;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Moves the clock on, firing what falls due in order, and lets the passes' promises run. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      await settle();
      const due = [...this.pending].filter(([, t]) => t.at <= until);
      due.sort((a, b) => a[1].at - b[1].at || a[0] - b[0]);
      const first = due[0];
      if (!first) break;
      this.pending.delete(first[0]);
      this.time = first[1].at;
      first[1].run();
    }
    this.time = until;
    await settle();
  }

  get timers(): number {
    return this.pending.size;
  }
}

/** Lets every pending promise callback run (no I/O: a few turns of the microtask queue). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** A pass the test ends when it likes; it counts its starts. */
class Passes {
  started = 0;
  private ends: Array<() => void> = [];

  readonly pass = (): Promise<void> => {
    this.started++;
    return new Promise((resolve) => this.ends.push(resolve));
  };

  get running(): number {
    return this.ends.length;
  }

  endAll(): void {
    for (const end of this.ends.splice(0)) end();
  }
}

describe('Periodic', () => {
  const setup = (intervalMs = 100) => {
    const clock = new FakeClock();
    const passes = new Passes();
    const loop = new Periodic(passes.pass, {
      intervalMs,
      onError: (err) => expect.fail(`the pass failed: ${String(err)}`),
      timers: clock,
    });
    /** Moves the clock on by ms; resolves how many passes have started by then. */
    const startedAfter = async (ms: number) => {
      await clock.advance(ms);
      return passes.started;
    };
    return { clock, passes, loop, startedAfter };
  };

  it('runs a pass an interval after start, then an interval after each pass ends', async () => {
    const { passes, loop, startedAfter } = setup();
    loop.start();
    expect(await startedAfter(99)).to.equal(0);
    expect(await startedAfter(1)).to.equal(1);
    expect(await startedAfter(500)).to.equal(1); // a long pass: no second one while it runs
    passes.endAll();
    expect(await startedAfter(99)).to.equal(1);
    expect(await startedAfter(1)).to.equal(2);
  });

  it('starts with a pass at once when asked', async () => {
    const { loop, startedAfter } = setup();
    loop.start(0);
    expect(await startedAfter(0)).to.equal(1);
  });

  it('runs a pass at once on wake, and counts the next interval from its end', async () => {
    const { clock, passes, loop, startedAfter } = setup();
    loop.start();
    await clock.advance(30);
    loop.wake();
    expect(await startedAfter(0)).to.equal(1);
    passes.endAll();
    expect(await startedAfter(99)).to.equal(1);
    expect(await startedAfter(1)).to.equal(2);
  });

  it('follows a running pass with one more, however many wakes came during it', async () => {
    const { clock, passes, loop, startedAfter } = setup();
    loop.start(0);
    await clock.advance(0);
    loop.wake();
    loop.wake();
    loop.wake();
    expect(await startedAfter(10)).to.equal(1);
    passes.endAll();
    expect(await startedAfter(0)).to.equal(2);
    passes.endAll();
    expect(await startedAfter(99)).to.equal(2); // that wake is used up: back to the interval
    expect(await startedAfter(1)).to.equal(3);
  });

  it('runs a pass within the time a wake gives, one for every wake that comes before it', async () => {
    const { clock, passes, loop, startedAfter } = setup();
    loop.start();
    await clock.advance(30);
    loop.wake(10);
    await clock.advance(5);
    loop.wake(10); // a pass is due sooner: this one shares it
    loop.wake(10);
    expect(await startedAfter(4)).to.equal(0);
    expect(await startedAfter(1)).to.equal(1); // 10 ms after the first wake
    passes.endAll();
    expect(await startedAfter(99)).to.equal(1); // then the interval again
    expect(await startedAfter(1)).to.equal(2);
  });

  it('follows a running pass a wake’s time after it ends, or at once for a wake at once', async () => {
    const { clock, passes, loop, startedAfter } = setup();
    loop.start(0);
    await clock.advance(0);
    loop.wake(10);
    loop.wake(10);
    passes.endAll();
    expect(await startedAfter(9)).to.equal(1);
    expect(await startedAfter(1)).to.equal(2);
    loop.wake(10);
    loop.wake(); // at once wins over the wake within a time
    passes.endAll();
    expect(await startedAfter(0)).to.equal(3);
    passes.endAll();
    await clock.advance(0); // the next pass is due an interval on
    loop.wake(10);
    loop.wake(); // a pass due later is brought forward
    expect(await startedAfter(0)).to.equal(4);
  });

  it('treats a wake from the pass itself, before its first await, as a wake while it runs', async () => {
    // The insights' fold asks for its next pass so (a wait while runs are applied): taken for a
    // wake between passes, it set a second timer beside the one the pass's end sets, and the
    // passes doubled with every round, many at once.
    const clock = new FakeClock();
    let running = 0;
    let most = 0;
    let started = 0;
    const loop = new Periodic(
      async () => {
        started++;
        loop.wake(20);
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => clock.setTimeout(resolve, 30));
        running--;
      },
      { intervalMs: 100, onError: (err) => expect.fail(String(err)), timers: clock },
    );
    loop.start(0);
    await clock.advance(990);
    expect(most).to.equal(1);
    // A pass every 50 ms (30 ms long, then the 20 ms its wake asked for): at 0, 50, … 950.
    expect(started).to.equal(20);
    expect(clock.timers).to.equal(1);
    await loop.stop();
  });

  it('ignores wake before start and after stop', async () => {
    const { clock, loop, startedAfter } = setup();
    loop.wake();
    expect(await startedAfter(1000)).to.equal(0);
    loop.start();
    await loop.stop();
    loop.wake();
    expect(await startedAfter(1000)).to.equal(0);
    expect(clock.timers).to.equal(0);
  });

  it('stops: waits for the running pass, tells it, and runs no more', async () => {
    const { clock, passes, loop, startedAfter } = setup();
    loop.start(0);
    await clock.advance(0);
    loop.wake(); // would follow the pass, but the loop stops first
    expect(loop.stopping).to.equal(false);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    expect(loop.stopping).to.equal(true);
    await settle();
    expect(stopped).to.equal(false); // the pass still runs
    passes.endAll();
    await stopping;
    expect(await startedAfter(1000)).to.equal(1);
    expect(clock.timers).to.equal(0);
  });

  it('reports a failing pass and goes on at the next interval', async () => {
    const clock = new FakeClock();
    const errors: unknown[] = [];
    let calls = 0;
    const loop = new Periodic(
      async () => {
        calls++;
        throw new Error(`pass ${calls}`);
      },
      { intervalMs: 100, onError: (err) => errors.push(err), timers: clock },
    );
    loop.start();
    await clock.advance(200);
    expect(calls).to.equal(2);
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(['pass 1', 'pass 2']);
    await loop.stop();
  });
});
