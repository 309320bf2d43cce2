// Phase "fairness": one organization's backlog must not hold up another's runs. Organization B
// creates runs through the API at a steady rate (open loop: a slow answer does not slow the
// schedule); organization A has a backlog of pending runs, stored and announced as the API
// stores and announces them. A run's create→active time is read from its events in MySQL
// (run.created to run.started), so that measuring costs the machine nothing while it runs (a
// client polling the list would take its share of the cores from the worker it measures).
// Measured, each with one worker:
//   - B alone: B's create→active p50 / p99;
//   - A alone: A's drain rate (runs started per second, from the events' times);
//   - shared: A's backlog draining while B creates; B's create→active p50 / p99 and A's rate.
// B's creates in the shared round last a little over half of A's drain alone, so that every one
// of them is made while A's backlog is still there.
import type { Db } from '../../src/db.js';
import { countPending, seedBacklog } from '../backlog.js';
import { clearQueue, clearRuns, type Tenant } from '../fixtures.js';
import { pacedCreates } from '../paced-creates.js';
import { sleep, startScript, type BenchProcess, waitForWorker } from '../processes.js';
import { PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { round, summarize, type LatencySummary } from '../stats.js';

/** B's creates in one round, and how long each took to become active. */
export interface PacedRuns {
  created: number;
  errors: number;
  createToActive: LatencySummary;
}

export interface FairnessResult {
  backlog: number;
  rate: number;
  bAlone: PacedRuns;
  bShared: PacedRuns;
  /** A's runs started per second, alone and while B creates. */
  aAlonePerSecond: number;
  aSharedPerSecond: number;
}

async function startWorker(name: string): Promise<BenchProcess> {
  const worker = startScript(name, 'workers/main.js', { env: serviceEnv(PREFIXES.api) });
  await waitForWorker(worker, 'workers/main.js');
  return worker;
}

/** Creates B's runs at `rate` for `seconds`, then waits for all of them to be active. */
async function paced(
  db: Db,
  apiUrl: string,
  b: Tenant,
  rate: number,
  seconds: number,
): Promise<PacedRuns> {
  const { ids, errors } = await pacedCreates(apiUrl, b, rate, () => false, seconds);
  const deadline = Date.now() + 120_000;
  while ((await countPending(db, b.orgId)) > 0) {
    if (Date.now() > deadline) throw new Error("fairness: B's runs still pending after 120 s");
    await sleep(100);
  }
  const rows: Array<{ run_id: string; type: string; at: Date }> = await db('run_events')
    .select('run_id', 'type', 'at')
    .whereIn('run_id', ids)
    .whereIn('type', ['run.created', 'run.started']);
  const created = new Map<string, number>();
  const started = new Map<string, number>();
  for (const row of rows) {
    (row.type === 'run.created' ? created : started).set(row.run_id, row.at.getTime());
  }
  return {
    created: ids.length,
    errors,
    createToActive: summarize(ids.map((id) => started.get(id)! - created.get(id)!)),
  };
}
/**
 * Waits until A owes nothing, then reads A's rate from its run.started events since `since`:
 * the worker's own clock, no polling in the measurement. Polls slowly: counting a backlog of
 * 100,000 is work for MariaDB that the drain would otherwise share the cores with.
 */
async function drained(db: Db, a: Tenant, since: Date, worker: BenchProcess): Promise<number> {
  const deadline = Date.now() + 600_000;
  while ((await countPending(db, a.orgId)) > 0) {
    if (Date.now() > deadline) throw new Error("fairness: A's backlog still pending after 600 s");
    if (!worker.running) throw new Error(`fairness: the worker exited:\n${worker.tail()}`);
    await sleep(1000);
  }
  const [rows] = (await db.raw(
    'SELECT COUNT(*) AS n, MIN(at) AS first, MAX(at) AS last FROM run_events ' +
      "WHERE organization_id = ? AND type = 'run.started' AND at >= ?",
    [a.orgId, since],
  )) as [Array<{ n: number; first: Date; last: Date }>];
  const { n, first, last } = rows[0]!;
  return round(Number(n) / Math.max(0.001, (last.getTime() - first.getTime()) / 1000), 0);
}

export async function measureFairness(deps: {
  settings: BenchSettings;
  db: Db;
  a: Tenant;
  b: Tenant;
  apiUrl: string;
  log: (line: string) => void;
}): Promise<FairnessResult> {
  const { settings, db, a, b, apiUrl, log } = deps;
  const backlog = settings.fairnessBacklog;
  const reset = async () => {
    await clearRuns(db);
    await clearQueue(PREFIXES.api);
  };

  // B alone (a second of warm-up first: connections, the worker's first turns).
  await reset();
  let worker = await startWorker('fairness-worker-b');
  let bAlone: PacedRuns;
  try {
    await paced(db, apiUrl, b, settings.fairnessRate, 1);
    bAlone = await paced(db, apiUrl, b, settings.fairnessRate, settings.fairnessSeconds);
  } finally {
    await worker.stop();
  }
  log(
    `  B alone: create→active p50 ${bAlone.createToActive.p50} ms p99 ${bAlone.createToActive.p99} ms`,
  );

  // A alone.
  await reset();
  await seedBacklog(db, a, PREFIXES.api, backlog, 'as-api');
  let since = new Date();
  const aloneStarted = Date.now();
  worker = await startWorker('fairness-worker-a');
  let aAlonePerSecond: number;
  try {
    aAlonePerSecond = await drained(db, a, since, worker);
  } finally {
    await worker.stop();
  }
  const aloneSeconds = (Date.now() - aloneStarted) / 1000;
  log(`  A alone: ${backlog} runs drained at ${aAlonePerSecond}/s`);

  // Shared: A's backlog again, B creating while it drains.
  await reset();
  await seedBacklog(db, a, PREFIXES.api, backlog, 'as-api');
  since = new Date();
  worker = await startWorker('fairness-worker-shared');
  let bShared: PacedRuns;
  let aSharedPerSecond: number;
  try {
    const seconds = Math.max(2, Math.floor(aloneSeconds * 0.55));
    const bRuns = paced(db, apiUrl, b, settings.fairnessRate, seconds);
    bRuns.catch(() => undefined); // awaited below, once A has drained
    aSharedPerSecond = await drained(db, a, since, worker);
    bShared = await bRuns;
  } finally {
    await worker.stop();
    await reset();
  }
  log(
    `  shared: B create→active p50 ${bShared.createToActive.p50} ms p99 ${bShared.createToActive.p99} ms;` +
      ` A drained at ${aSharedPerSecond}/s`,
  );
  return {
    backlog,
    rate: settings.fairnessRate,
    bAlone,
    bShared,
    aAlonePerSecond,
    aSharedPerSecond,
  };
}
