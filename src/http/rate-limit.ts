// A per-key request limit kept in Redis (a fixed window per key), so every API process shares
// it. Redis is only an aid here: when it is unreachable the limiter lets requests through
// rather than refusing work that MySQL can accept.
import type { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import { tooManyRequests } from '../errors.js';
import type { Logger } from '../logger.js';
import { withTimeout } from '../queue.js';
import type { AppState } from './context.js';

const SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

export function rateLimit(
  redis: Redis,
  options: { max: number; windowMs: number; prefix: string },
  log: Logger,
): Middleware<AppState> {
  if (options.max <= 0) return (_ctx, next) => next();
  redis.defineCommand('wrsRateLimit', { numberOfKeys: 1, lua: SCRIPT });
  const call = redis as unknown as {
    wrsRateLimit(key: string, windowMs: number): Promise<[number, number]>;
  };
  let warnedAt = 0;
  return async (ctx, next) => {
    const principal = ctx.state.principal;
    if (principal && redis.status === 'ready') {
      const window = Math.floor(Date.now() / options.windowMs);
      try {
        const [count, ttl] = await withTimeout(
          call.wrsRateLimit(
            `${options.prefix}:ratelimit:${principal.keyId}:${window}`,
            options.windowMs,
          ),
          250,
          'rate limit',
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
