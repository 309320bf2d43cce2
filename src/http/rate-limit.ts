// A per-key request limit kept in Redis (a fixed window per key), so every API process shares
// it. Redis is only an aid here: when it is unreachable the limiter lets requests through
// rather than refusing work that MySQL can accept.
import type { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import { tooManyRequests } from '../errors.js';
import type { Logger } from '../logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import type { AppState } from './context.js';

// Adds ARGV[2] requests to the window's count at once (see WindowCounter).
const SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

type CountFn = (key: string, windowMs: number, n: number) => Promise<[number, number]>;

interface Waiter {
  resolve: (result: [number, number]) => void;
  reject: (reason: unknown) => void;
}

/**
 * Counts requests per key in one Redis call per key per event-loop turn instead of one per
 * request: the requests of a turn are added with one INCRBY, and each gets its own place in
 * the window (total - n + 1 ... total), so the limit is as exact as counting one by one.
 */
class WindowCounter {
  private pending = new Map<string, Waiter[]>();
  private scheduled = false;

  constructor(
    private readonly count: CountFn,
    private readonly windowMs: number,
  ) {}

  /** This request's place in the window, and the window's remaining time in ms. */
  take(key: string): Promise<[number, number]> {
    return new Promise((resolve, reject) => {
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = new Map();
    for (const [key, waiters] of batch) {
      const n = waiters.length;
      withTimeout(this.count(key, this.windowMs, n), 250, 'rate limit').then(
        ([total, ttl]) => waiters.forEach((w, i) => w.resolve([total - n + 1 + i, ttl])),
        (err: unknown) => waiters.forEach((w) => w.reject(err)),
      );
    }
  }
}

export function rateLimit(
  redis: Redis,
  options: { max: number; windowMs: number; prefix: string },
  log: Logger,
): Middleware<AppState> {
  if (options.max <= 0) return (_ctx, next) => next();
  redis.defineCommand('wrsRateLimit', { numberOfKeys: 1, lua: SCRIPT });
  const call = redis as unknown as { wrsRateLimit: CountFn };
  const counter = new WindowCounter(
    (key, windowMs, n) => call.wrsRateLimit(key, windowMs, n),
    options.windowMs,
  );
  let warnedAt = 0;
  return async (ctx, next) => {
    const principal = ctx.state.principal;
    if (principal && redis.status === 'ready') {
      const window = Math.floor(Date.now() / options.windowMs);
      try {
        const [count, ttl] = await counter.take(
          `${options.prefix}:ratelimit:${principal.keyId}:${window}`,
        );
        if (count > options.max) throw tooManyRequests(Math.max(1, Math.ceil(ttl / 1000)));
        ctx.set('RateLimit-Limit', String(options.max));
        ctx.set('RateLimit-Remaining', String(Math.max(0, options.max - count)));
      } catch (err) {
        if ((err as { status?: number }).status === 429) throw err;
        if (Date.now() - warnedAt > 10_000) {
          warnedAt = Date.now();
          log.warn('rate limiter unavailable; letting requests through', { err });
        }
      }
    }
    await next();
  };
}
