// Gauges a process registers for what it holds: its MySQL pool, whether MySQL and Redis
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
  db: Db;
  /** A Redis connection to ping; BullMQ's own when the process has no other. */
  redisPing: () => Promise<unknown>;
  /** The queue of every job kind, with the kind's name, for the job counts (workers). */
  queues?: ReadonlyArray<{ name: string; queue: Pick<Queue, 'getJobCounts'> }>;
}): void {
  gauge(
    'wrs_db_pool_connections',
    'MySQL pool connections by state (used, free) and requests waiting for one (pending).',
    ['state'],
    async (set) => {
      const pool = deps.db.client.pool as TarnPool | undefined;
      if (!pool) return;
      set({ state: 'used' }, pool.numUsed());
      set({ state: 'free' }, pool.numFree());
      set({ state: 'pending' }, pool.numPendingAcquires());
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
