// Phase "retention": deleting an organization's expired runs, and what it costs the creates of
// another organization meanwhile. Organization A holds N completed runs that finished two days
// ago, each with the history a completed run has (six run_events rows), seeded straight into
// MySQL as the service stores them (seed-runs.ts). One worker runs, asking for a retention pass
// every RETENTION_INTERVAL_MS. Organization B creates runs through the API at a steady rate
// (open loop: a slow answer does not slow the schedule):
//   - baseline: no organization has a retention, so the passes find nothing to delete;
//   - during deletion: A's retention is set to one day through the API
//     (POST /update-organization-settings), the next pass deletes A's runs in batches
//     (RUN_RETENTION_BATCH, RUN_RETENTION_PAUSE_MS: the service's defaults unless the bench's
//     environment sets them), and B creates until none of A's runs is left.
// Measured: B's create latency p50 / p99 (client side, each answer's time from its send) in
// both rounds, and runs deleted per second from the count of A's runs, read once a second
// (counting a million rows is work for MariaDB that the deletion and the creates would
// otherwise share the cores with). At the end A must have no runs and no events left.
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db.js';
import {
  clearQueue,
  clearRuns,
  type Tenant,
  clearHistory,
  skipInsightsBacklog,
} from '../fixtures.js';
import { sleep, startScript, type BenchProcess, waitForWorker } from '../processes.js';
import { seedFinishedRuns } from '../seed-runs.js';
import { pacedCreates, type CreateRound } from '../paced-creates.js';
import { PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { round } from '../stats.js';

const DAY_MS = 86_400_000;
/** How often the worker asks for a retention pass: a pass starts soon after the setting. */
const RETENTION_INTERVAL_MS = 500;
const POLL_MS = 1000;
const DELETE_DEADLINE_MS = 900_000;

/** B's creates in one round: how many were answered 200, and how long each answer took. */
export interface RetentionPhaseResult {
  /** A's seeded runs, and their events. */
  runs: number;
  events: number;
  seedSeconds: number;
  /** The worker's RUN_RETENTION_BATCH and RUN_RETENTION_PAUSE_MS. */
  batch: number;
  pauseMs: number;
  /** B's creates per second. */
  rate: number;
  /** Seconds from the first count that saw runs gone to the first that saw none left. */
  deleteSeconds: number;
  /** Runs deleted per second over deleteSeconds. */
  deletedPerSecond: number;
  /** The most deleted between two counts a second apart. */
  peakPerSecond: number;
  /** A's runs and events left once the pass was done (0 and 0). */
  runsLeft: number;
  eventsLeft: number;
  baseline: CreateRound;
  during: CreateRound;
}

async function count(db: Db, table: 'workflow_runs' | 'run_events', orgId: string) {
  const [rows] = (await db.raw(`SELECT COUNT(*) AS n FROM ${table} WHERE organization_id = ?`, [
    orgId,
  ])) as [Array<{ n: number | string }>];
  return Number(rows[0]?.n ?? 0);
}

export async function measureRetention(deps: {
  settings: BenchSettings;
  db: Db;
  /** A: the organization whose expired runs are deleted. */
  a: Tenant;
  /** B: the organization creating runs meanwhile. */
  b: Tenant;
  apiUrl: string;
  log: (line: string) => void;
}): Promise<RetentionPhaseResult> {
  const { settings, db, a, b, apiUrl, log } = deps;
  const n = settings.retentionRuns;
  const rate = settings.retentionCreateRate;
  const reset = async () => {
    await clearRuns(db);
    await clearHistory(db);
    await clearQueue(PREFIXES.api);
  };

  await reset();
  const seedSeconds = await seedFinishedRuns(db, a, n, new Date(Date.now() - 2 * DAY_MS));
  await skipInsightsBacklog(db);
  const events = await count(db, 'run_events', a.orgId);
  log(
    `  seeded ${n} completed runs (${events} events) finished 2 days ago in ${round(seedSeconds, 1)} s`,
  );

  const env = {
    ...serviceEnv(PREFIXES.api),
    RUN_RETENTION_INTERVAL_MS: String(RETENTION_INTERVAL_MS),
  };
  const { batch, pauseMs } = loadConfig({ ...process.env, ...env }).retention;
  const worker: BenchProcess = startScript('retention-worker', 'workers/main.js', { env });
  await waitForWorker(worker, 'workers/main.js');
  try {
    // Baseline: B alone, retention passes finding nothing (a second of warm-up first).
    await pacedCreates(apiUrl, b, rate, () => false, 1);
    const baseline = await pacedCreates(
      apiUrl,
      b,
      rate,
      () => false,
      settings.retentionBaselineSeconds,
    );
    log(
      `  no deletion: ${baseline.created} creates at ${rate}/s, p50 ${baseline.latency.p50} ms p99 ${baseline.latency.p99} ms, ${baseline.errors} errors`,
    );
    if ((await count(db, 'workflow_runs', a.orgId)) !== n) {
      throw new Error("retention: A's runs were deleted before A had a retention");
    }

    // A's retention: one day. B creates until A has no run left.
    const set = await fetch(`${apiUrl}/update-organization-settings`, {
      method: 'POST',
      headers: { authorization: a.key, 'content-type': 'application/json' },
      body: JSON.stringify({ run_retention_days: 1 }),
    });
    if (set.status !== 200) {
      throw new Error(`retention: update-organization-settings answered ${set.status}`);
    }
    // Wait for the pass to begin, so that every create of the round is made during deletion.
    const counts: Array<{ at: number; left: number }> = [];
    const setAt = Date.now();
    const deadline = setAt + DELETE_DEADLINE_MS;
    for (;;) {
      const left = await count(db, 'workflow_runs', a.orgId);
      if (left < n) {
        counts.push({ at: Date.now(), left });
        break;
      }
      if (Date.now() > setAt + 30_000) {
        throw new Error('retention: no run deleted 30 s after the retention was set');
      }
      await sleep(100);
    }
    let done = counts[0]!.left === 0;
    const during = pacedCreates(apiUrl, b, rate, () => done, DELETE_DEADLINE_MS / 1000);
    during.catch(() => undefined); // awaited below, once A has no run left
    while (!done) {
      await sleep(POLL_MS);
      if (Date.now() > deadline) throw new Error('retention: runs still left after 900 s');
      if (!worker.running) throw new Error(`retention: the worker exited:\n${worker.tail()}`);
      const left = await count(db, 'workflow_runs', a.orgId);
      counts.push({ at: Date.now(), left });
      done = left === 0;
    }
    const duringRound = await during;

    const first = counts[0]!;
    const last = counts[counts.length - 1]!;
    const deleteSeconds = Math.max(0.001, (last.at - first.at) / 1000);
    let peak = 0;
    for (let i = 1; i < counts.length; i++) {
      const seconds = (counts[i]!.at - counts[i - 1]!.at) / 1000;
      peak = Math.max(peak, (counts[i - 1]!.left - counts[i]!.left) / seconds);
    }
    const result: RetentionPhaseResult = {
      runs: n,
      events,
      seedSeconds: round(seedSeconds, 1),
      batch,
      pauseMs,
      rate,
      deleteSeconds: round(deleteSeconds, 1),
      deletedPerSecond: round((first.left - last.left) / deleteSeconds, 0),
      peakPerSecond: round(peak, 0),
      runsLeft: last.left,
      eventsLeft: await count(db, 'run_events', a.orgId),
      baseline,
      during: duringRound,
    };
    log(
      `  deletion (batch ${batch}, pause ${pauseMs} ms): ${n} runs gone in about ${result.deleteSeconds} s,` +
        ` ${result.deletedPerSecond}/s (peak ${result.peakPerSecond}/s); left: ${result.runsLeft} runs, ${result.eventsLeft} events`,
    );
    log(
      `  during it: ${duringRound.created} creates at ${rate}/s, p50 ${duringRound.latency.p50} ms p99 ${duringRound.latency.p99} ms, ${duringRound.errors} errors`,
    );
    return result;
  } finally {
    await worker.stop();
    await reset();
  }
}
