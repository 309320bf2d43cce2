// Timers kept per second in Redis: a delayed job per second in which something falls due (a
// step's wake time, a schedule's), its id the second, so asking again for a second already
// held adds nothing. A process remembers the seconds it has asked for that have not come yet:
// under a steady flow every batch falls due in the same few seconds, and asking Redis each time
// for a timer it already holds cost a BullMQ call per batch. A timer Redis loses is made up for
// by the reconciler, which sweeps MySQL for what came due.
import type { KindQueue } from './kind-queue.js';

/** Seconds remembered as scheduled, at most: past it the memory starts again. */
const REMEMBERED_MAX = 100_000;

/** The second a time falls in, as the time the job for it fires (its end). */
export function secondBucket(at: Date): number {
  return Math.ceil(at.getTime() / 1000) * 1000;
}

export class SecondTimers {
  private readonly scheduled = new Set<number>();
  private forgottenUntil = 0;

  constructor(private readonly queue: Pick<KindQueue<unknown, number>, 'enqueue'>) {}

  /**
   * Asks for a timer at each time's second. Best effort, after the change was committed, and
   * never throws: a timer Redis does not take is made up for by the reconciler.
   */
  async at(times: Iterable<Date>, now = Date.now()): Promise<void> {
    this.forgetPast(now);
    const buckets = new Set<number>();
    for (const time of times) {
      const dueAt = secondBucket(time);
      if (dueAt <= now || !this.scheduled.has(dueAt)) buckets.add(dueAt);
    }
    if (buckets.size === 0) return;
    if (!(await this.queue.enqueue([...buckets], { now }))) return; // logged; not remembered
    if (this.scheduled.size + buckets.size > REMEMBERED_MAX) this.scheduled.clear();
    for (const dueAt of buckets) if (dueAt > now) this.scheduled.add(dueAt);
  }

  /** Drops the remembered seconds that have come (at most once a second). */
  private forgetPast(now: number): void {
    if (now < this.forgottenUntil) return;
    this.forgottenUntil = now + 1000;
    for (const dueAt of this.scheduled) if (dueAt <= now) this.scheduled.delete(dueAt);
  }
}
