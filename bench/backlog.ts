// The worker benchmark's backlog: pending runs stored exactly as the API stores them (newRun,
// the same statements), their jobs enqueued as the API enqueues them (RunNotifier: its
// organization's turn, after each committed batch) for the real worker, or one job per run for
// the bare baseline worker.
import type { Queue } from 'bullmq';
import { SYSTEM } from '../src/audit/actor.js';
import type { OneRunJob } from './baselines/bare-worker.js';
import type { Db } from '../src/db.js';
import { newId } from '../src/lib/ids.js';
import { createLogger } from '../src/logger.js';
import { applyRunsJob } from '../src/jobs/apply-runs.js';
import { KindQueue } from '../src/jobs/kind-queue.js';
import { RedisConnections } from '../src/queue.js';
import { RunNotifier } from '../src/runs/run-notifier.js';
import { newRun } from '../src/runs/run-state.js';
import { insertRuns } from './insert-runs.js';
import { benchConfig, INPUT_FIELDS, USER_ASSIGNMENTS, type Tenant } from './fixtures.js';

const CHUNK = 1000;

export async function seedBacklog(
  db: Db,
  tenant: Tenant,
  prefix: string,
  count: number,
  jobs: 'as-api' | 'one-per-run' | 'none',
): Promise<string[]> {
  const config = benchConfig(prefix);
  const queue = new RedisConnections(config).queue(applyRunsJob, config, 'wrs-bench-backlog');
  // Its enqueues run several at once against a busy Redis: the API's 1 s could drop jobs the
  // benchmark counts on.
  const notifier = new RunNotifier(
    new KindQueue('applyRuns', applyRunsJob, queue, createLogger('warn'), 30_000),
  );
  // The bare worker's jobs name one run each: the same queue, its own job shape.
  const bare = queue as unknown as Queue<OneRunJob>;
  try {
    await queue.waitUntilReady();
    // No worker runs yet, so rows and jobs may be written in any order: chunks go in parallel.
    const ids: string[] = [];
    const chunks: Array<Promise<unknown>> = [];
    for (let done = 0; done < count; done += CHUNK) {
      const now = new Date();
      const runs = Array.from({ length: Math.min(CHUNK, count - done) }, () =>
        newRun(newId(), tenant.orgId, tenant.template, INPUT_FIELDS, USER_ASSIGNMENTS, now, SYSTEM),
      );
      ids.push(...runs.map((run) => run.id));
      chunks.push(insertRuns(db, runs));
      // The API commits and notifies in batches of at most 200 runs (its insert batcher).
      for (let i = 0; i < runs.length; i += 200) {
        const batch = runs.slice(i, i + 200);
        if (jobs === 'none') continue;
        chunks.push(
          jobs === 'as-api'
            ? notifier.notify(tenant.orgId)
            : bare.addBulk(batch.map((run) => ({ name: 'apply', data: { runIds: [run.id] } }))),
        );
      }
      if (chunks.length >= 8) await Promise.all(chunks.splice(0));
    }
    await Promise.all(chunks);
    return ids;
  } finally {
    await queue.close();
  }
}

/**
 * A prefix's turns, given as the API gives them (RunNotifier: an organization's turn), for
 * runs stored by the bench: open once, notify as often as needed, close at the end.
 */
export async function openTurns(prefix: string): Promise<{
  notify: (organizationId: string) => Promise<boolean>;
  close: () => Promise<void>;
}> {
  const config = benchConfig(prefix);
  const queue = new RedisConnections(config).queue(applyRunsJob, config, 'wrs-bench-turns');
  const notifier = new RunNotifier(
    new KindQueue('applyRuns', applyRunsJob, queue, createLogger('warn'), 30_000),
  );
  await queue.waitUntilReady();
  return {
    notify: (organizationId) => notifier.notify(organizationId),
    close: () => queue.close(),
  };
}

/** The organization's runs still waiting for a worker (a range of its pending index). */
export async function countPending(db: Db, organizationId: string): Promise<number> {
  const [rows] = (await db.raw(
    'SELECT COUNT(*) AS n FROM workflow_runs WHERE organization_id = ? AND pending_since IS NOT NULL',
    [organizationId],
  )) as [Array<{ n: number | string }>];
  return Number(rows[0]?.n ?? 0);
}

/**
 * How many of the given runs still wait for a worker: a unique-key lookup each, so a drain can
 * be watched without counting the backlog (a COUNT over the pending index reads every owed
 * run's entry: 12–35 ms of MariaDB's time per poll early in a 20,000-run drain).
 */
export async function pendingAmong(db: Db, ids: readonly string[]): Promise<number> {
  const [rows] = (await db.raw(
    `SELECT COUNT(*) AS n FROM workflow_runs WHERE id IN (${ids.map(() => '?').join(', ')}) ` +
      'AND pending_since IS NOT NULL',
    [...ids],
  )) as [Array<{ n: number | string }>];
  return Number(rows[0]?.n ?? 0);
}

/** When a drain's runs were started: the first and last last-activity time, in ms. */
export interface StartedSpan {
  firstMs: number;
  lastMs: number;
  /** Runs started after the first instant: what the span's time was spent on. */
  afterFirst: number;
}

/** The organization's runs' started times, read once the drain is over. */
export async function startedSpan(db: Db, organizationId: string): Promise<StartedSpan> {
  const [[span]] = (await db.raw(
    'SELECT MIN(last_activity) AS first, MAX(last_activity) AS last FROM workflow_runs ' +
      'WHERE organization_id = ?',
    [organizationId],
  )) as [Array<{ first: Date; last: Date }>];
  const [[after]] = (await db.raw(
    'SELECT COUNT(*) AS n FROM workflow_runs WHERE organization_id = ? AND last_activity > ?',
    [organizationId, span!.first],
  )) as [Array<{ n: number | string }>];
  return {
    firstMs: span!.first.getTime(),
    lastMs: span!.last.getTime(),
    afterFirst: Number(after!.n),
  };
}

export async function countByStatus(db: Db, status: string): Promise<number> {
  const [rows] = (await db.raw('SELECT COUNT(*) AS n FROM workflow_runs WHERE status = ?', [
    status,
  ])) as [Array<{ n: number | string }>];
  return Number(rows[0]?.n ?? 0);
}
