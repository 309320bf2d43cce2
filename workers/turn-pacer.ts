// Gathers an organization's changes into fewer, larger turns while they come in a steady flow.
// A turn writes its runs in one transaction, and MariaDB's cost per run falls steeply with the
// batch (a statement per run for one or two runs, a joined table of values for more): when
// creates arrive one by one at thousands a second, turns that begin the moment the last ended
// hold one or two runs each and pay the small-batch price on every run. So an organization's
// turns begin at least `gatherMs` apart: a turn that comes sooner waits out the rest, and takes
// everything that arrived meanwhile. An organization whose last turn began longer ago (idle, or
// a trickle) waits for nothing, so a lone create is started as fast as before. Pure but for the
// clock it is given; one per worker process (several workers pace on their own, which only
// makes their turns smaller).
export class TurnPacer {
  /** When each organization's latest turn began (ms since the epoch), in this process. */
  private readonly began = new Map<string, number>();

  constructor(
    private readonly gatherMs: number,
    /** Entries kept before the stale ones (that impose no wait) are dropped. */
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * How long the organization's turn, about to begin at `now`, waits first; records the turn as
   * beginning after that wait.
   */
  wait(organizationId: string, now: number): number {
    if (this.gatherMs <= 0) return 0;
    const last = this.began.get(organizationId);
    const wait = last === undefined ? 0 : Math.max(0, last + this.gatherMs - now);
    if (this.began.size >= this.maxEntries) this.prune(now);
    // Deleted first so that the map's order is the order of the latest turns (oldest first).
    this.began.delete(organizationId);
    this.began.set(organizationId, now + wait);
    return wait;
  }

  /** Drops the organizations whose latest turn began at least gatherMs ago: they wait for nothing. */
  private prune(now: number): void {
    for (const [id, at] of this.began) {
      if (at + this.gatherMs > now) break;
      this.began.delete(id);
    }
  }
}
