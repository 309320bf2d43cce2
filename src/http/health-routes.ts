import type { Router } from '@koa/router';
import type { RedisClient } from '../queue.js';
import type { Db } from '../db.js';
import type { AppState } from './context.js';
import { answersWithin } from '../lib/with-timeout.js';
import { errorBody } from './errors.js';

export function healthRoutes(
  router: Router<AppState>,
  deps: {
    db: Db;
    redis: RedisClient;
    isShuttingDown: () => boolean;
    /** False until the process has warmed up (warm-up.ts): it would not serve at full speed. */
    isWarm: () => boolean;
  },
): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx) => {
    const [mysql, redis] = await Promise.all([
      answersWithin(() => deps.db.raw('SELECT 1')),
      answersWithin(() => deps.redis.ping()),
    ]);
    const shuttingDown = deps.isShuttingDown();
    const warm = deps.isWarm();
    const ready = mysql && redis && warm && !shuttingDown;
    ctx.status = ready ? 200 : 503;
    ctx.body = ready
      ? { status: 'ready', mysql, redis, warm }
      : {
          ...errorBody('not_ready', notReadyMessage({ mysql, redis, warm, shuttingDown })),
          mysql,
          redis,
          warm,
        };
  });
}

function notReadyMessage(s: {
  mysql: boolean;
  redis: boolean;
  warm: boolean;
  shuttingDown: boolean;
}): string {
  if (s.shuttingDown) return 'shutting down';
  if (!s.mysql || !s.redis) {
    return `not ready: ${[!s.mysql && 'MySQL', !s.redis && 'Redis'].filter(Boolean).join(' and ')} unreachable`;
  }
  return 'not ready: warming up (opening connections, loading scripts)';
}
