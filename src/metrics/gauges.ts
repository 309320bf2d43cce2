// Gauges a process registers for what it holds: its MySQL pools, whether MySQL and Redis
// answer, and (in workers) the jobs of each kind by state, read from BullMQ when scraped.
import type { Queue } from 'bullmq';
import type { Db } from '../db.js';
import { answersWithin, withTimeout } from '../lib/with-timeout.js';
import { gauge } from './metrics.js';

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

export function registerProcessGauges(deps: {
  /** The pool every statement uses unless told otherwise; MySQL's liveness is checked on it. */
  db: Db;
  /**
   * Every pool of the process by name, `db` among them (the API: "main" and "batch", its pool
   * for new runs' batches); each is a series of its own.
   */
  pools: Readonly<Record<string, Db>>;
  /** A Redis connection to ping; BullMQ's own when the process has no other. */
  redisPing: () => Promise<unknown>;
  /** The queue of every job kind, with the kind's name, for the job counts (workers). */
  queues?: ReadonlyArray<{ name: string; queue: Pick<Queue, 'getJobCounts'> }>;
}): void {
  gauge(
    'wrs_db_pool_connections',
    'MySQL pool connections by pool and state (used, free) and requests waiting for one (pending).',
    ['pool', 'state'],
    async (set) => {
      for (const [name, db] of Object.entries(deps.pools)) {
        const pool = db.client.pool as TarnPool | undefined;
        // A pool that has never been used has no tarn pool yet: nothing open, nothing waiting.
        set({ pool: name, state: 'used' }, pool?.numUsed() ?? 0);
        set({ pool: name, state: 'free' }, pool?.numFree() ?? 0);
        set({ pool: name, state: 'pending' }, pool?.numPendingAcquires() ?? 0);
      }
    },
  );
  gauge(
    'wrs_dependency_up',
    'Whether MySQL and Redis answer (1) or not (0).',
    ['dependency'],
    async (set) => {
      const [mysql, redis] = await Promise.all([
        answersWithin(() => deps.db.raw('SELECT 1')),
        answersWithin(deps.redisPing),
      ]);
      set({ dependency: 'mysql' }, Number(mysql));
      set({ dependency: 'redis' }, Number(redis));
    },
  );
  const queues = deps.queues;
  if (queues) {
    gauge(
      'wrs_jobs',
      'Jobs by kind and state, as BullMQ holds them.',
      ['kind', 'state'],
      async (set) => {
        await Promise.all(
          queues.map(async ({ name: kind, queue }) => {
            const counts = await withTimeout(
              queue.getJobCounts('waiting', 'active', 'delayed', 'failed'),
              1000,
              'job counts',
            ).catch(() => undefined);
            for (const [state, value] of Object.entries(counts ?? {})) set({ kind, state }, value);
          }),
        );
      },
    );
  }
}
