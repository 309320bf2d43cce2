// Places in a per-key request window, counted in Redis so that every API process shares one
// limit, but taken from Redis in blocks ("leases") rather than one call per request.
//
// A process asks Redis for n places with one INCRBY n and hands them out locally, in arrival
// order, without another Redis call. The block size adapts to the key's traffic: it doubles
// while blocks run out quickly and halves when they last long, and is capped at a hundredth of
// the limit, so a quiet key still costs one call per request. Never more than the limit is let
// through, because every place is numbered in Redis; a place leased but not used before the
// window ends is lost, so a busy key may be refused up to (API processes × cap) requests early,
// at most about 1% of the limit per process.
//
// Pure logic: the Redis call is passed in (see rate-limit.ts).

/** Adds n to the key's count in the window; resolves with the new total. */
export type CountFn = (key: string, windowMs: number, n: number) => Promise<number>;

/** The largest block, whatever the limit: bounds what a window end can waste. */
const LEASE_CAP = 256;
/** A block used up faster than this doubles the next one; one that lasts longer than SLOW halves it. */
const FAST_MS = 100;
const SLOW_MS = 1000;

interface Waiter {
  resolve: (place: number) => void;
  reject: (reason: unknown) => void;
}

interface Lease {
  window: number;
  /** Places next..end are this process's and not yet handed out. */
  next: number;
  end: number;
  size: number;
  grantedAt: number;
  /** Requests waiting for places; while there are any, a call to Redis is under way for them. */
  waiters: Waiter[];
}

export class WindowLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly maxLease: number;
  private currentWindow = -1;

  constructor(
    private readonly count: CountFn,
    private readonly options: { max: number; windowMs: number; prefix: string },
    private readonly now: () => number = Date.now,
  ) {
    this.maxLease = Math.max(1, Math.min(LEASE_CAP, Math.floor(options.max / 100)));
  }

  /**
   * This request's place in its key's current window (1 for the first request); a place above
   * the limit means "refuse". A number when the process holds a free place, else a promise.
   */
  take(keyId: string): number | Promise<number> {
    const window = Math.floor(this.now() / this.options.windowMs);
    if (window !== this.currentWindow) this.forgetBefore(window);
    let lease = this.leases.get(keyId);
    if (!lease || lease.window !== window) {
      lease = { window, next: 1, end: 0, size: 1, grantedAt: 0, waiters: [] };
      this.leases.set(keyId, lease);
    }
    if (lease.next <= lease.end && lease.waiters.length === 0) return lease.next++;
    if (this.full(lease)) return this.options.max + 1;
    const current = lease;
    return new Promise<number>((resolve, reject) => {
      // The first waiter asks Redis; the requests of this event-loop turn join its call.
      if (current.waiters.length === 0) setImmediate(() => this.fetch(keyId, current));
      current.waiters.push({ resolve, reject });
    });
  }

  /** Milliseconds until the current window ends (for Retry-After). */
  msLeftInWindow(): number {
    const { windowMs } = this.options;
    return windowMs - (this.now() % windowMs);
  }

  private fetch(keyId: string, lease: Lease): void {
    const n = Math.max(lease.size, lease.waiters.length);
    // One key per script call, so any slot of a Redis Cluster will do; the key id in braces (a
    // hash tag) keeps all of one API key's windows in one slot all the same.
    const key = `${this.options.prefix}:ratelimit:{${keyId}}:${lease.window}`;
    this.count(key, this.options.windowMs, n).then(
      (total) => this.granted(keyId, lease, n, total),
      (err: unknown) => {
        for (const waiter of lease.waiters.splice(0)) waiter.reject(err);
      },
    );
  }

  private granted(keyId: string, lease: Lease, n: number, total: number): void {
    const now = this.now();
    if (lease.end > 0) {
      const lasted = now - lease.grantedAt;
      if (lasted < FAST_MS) lease.size = Math.min(this.maxLease, lease.size * 2);
      else if (lasted > SLOW_MS) lease.size = Math.max(1, Math.floor(lease.size / 2));
    }
    lease.grantedAt = now;
    lease.next = total - n + 1;
    lease.end = total;
    for (const waiter of lease.waiters.splice(0, n)) waiter.resolve(lease.next++);
    if (lease.waiters.length === 0) return;
    if (this.full(lease)) {
      for (const waiter of lease.waiters.splice(0)) waiter.resolve(this.options.max + 1);
    } else {
      this.fetch(keyId, lease);
    }
  }

  /** Redis has counted up to the limit: every later request of the window is over it. */
  private full(lease: Lease): boolean {
    return lease.end >= this.options.max;
  }

  /** Drops the leases of past windows, so keys no longer used do not stay in memory. */
  private forgetBefore(window: number): void {
    this.currentWindow = window;
    for (const [keyId, lease] of this.leases) {
      if (lease.window < window && lease.waiters.length === 0) this.leases.delete(keyId);
    }
  }
}
