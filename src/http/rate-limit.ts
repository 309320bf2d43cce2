// A per-key request limit kept in Redis (a fixed window per key), so every API process shares
// it. Places in the window are leased from Redis in blocks (see window-leases.ts), so a busy
// key costs a Redis call per block of requests, not per request. Redis is only an aid here:
// when it is unreachable the limiter lets requests through rather than refusing work that
// MySQL can accept.
import type { RedisClient } from '../queue.js';
import type { Middleware } from 'koa';
import { tooManyRequests } from './errors.js';
import type { Logger } from '../logger.js';
import { throttledWarn } from '../lib/process.js';
import { withTimeout } from '../lib/with-timeout.js';
import type { AppState } from './context.js';
import { WindowLeases, type CountFn } from './window-leases.js';

// Adds ARGV[2] places to the window's count at once; the key lives as long as its window.
export const RATE_LIMIT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return count`;

export function rateLimit(
  redis: RedisClient,
  options: { max: number; windowMs: number; prefix: string },
  log: Logger,
): Middleware<AppState> {
  if (options.max <= 0) return (_ctx, next) => next();
  redis.defineCommand('wrsRateLimit', { numberOfKeys: 1, lua: RATE_LIMIT_SCRIPT });
  const call = redis as unknown as { wrsRateLimit: CountFn };
  const leases = new WindowLeases(
    (key, windowMs, n) => withTimeout(call.wrsRateLimit(key, windowMs, n), 250, 'rate limit'),
    options,
  );
  const warnUnavailable = throttledWarn(log, 'rate limiter unavailable; letting requests through');
  const limit = String(options.max);
  return async (ctx, next) => {
    const principal = ctx.state.principal;
    if (principal && redis.status === 'ready') {
      let place: number | undefined;
      try {
        const taken = leases.take(principal.keyId);
        place = typeof taken === 'number' ? taken : await taken;
      } catch (err) {
        warnUnavailable(err);
      }
      if (place !== undefined) {
        if (place > options.max) {
          throw tooManyRequests(Math.max(1, Math.ceil(leases.msLeftInWindow() / 1000)));
        }
        ctx.set('RateLimit-Limit', limit);
        ctx.set('RateLimit-Remaining', String(options.max - place));
      }
    }
    await next();
  };
}
