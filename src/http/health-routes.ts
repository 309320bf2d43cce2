import type { Router } from '@koa/router';
import type { RedisClient } from '../queue.js';
import type { Db } from '../db.js';
import type { AppState } from './context.js';
import { answersWithin } from '../lib/with-timeout.js';
import { errorBody } from './errors.js';

export function healthRoutes(
  router: Router<AppState>,
  deps: { db: Db; redis: RedisClient; isShuttingDown: () => boolean },
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
    const ready = mysql && redis && !shuttingDown;
    ctx.status = ready ? 200 : 503;
    ctx.body = ready
      ? { status: 'ready', mysql, redis }
      : {
          ...errorBody(
            'not_ready',
            shuttingDown
              ? 'shutting down'
              : `not ready: ${[!mysql && 'MySQL', !redis && 'Redis'].filter(Boolean).join(' and ')} unreachable`,
          ),
          mysql,
          redis,
        };
  });
}
