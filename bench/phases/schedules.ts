// Phase "schedules": how fast schedules fire, and what it costs ordinary creates beside them.
// One worker runs, and the API. Schedules are seeded straight into MySQL as the service stores
// them (each with its next time and wake time), and one timer is set for that second, as the API
// sets it when a schedule is made.
//   - burst: N schedules all due in the same second T. Measured: when the last of their runs is
//     visible (committed) after T, and each run's lag (visible − T). Visibility is read by
//     polling the schedules' fire records every 20 ms, so a lag is within 20 ms of the truth.
//   - steady: M schedules firing every minute (cron "* * * * *"), for a few minutes, while
//     another organization creates runs through the API at a steady rate (open loop), first
//     alone (the baseline). Measured: each firing's lag (visible − its minute), and the creates'
//     p50 / p99 with and without the schedules.
import type { Db } from '../../src/db.js';
import { KindQueue } from '../../src/jobs/kind-queue.js';
import { scheduleTickJob } from '../../src/jobs/schedule-tick.js';
import { SecondTimers } from '../../src/jobs/second-timers.js';
import { newId } from '../../src/lib/ids.js';
import { createLogger } from '../../src/logger.js';
import { RedisConnections } from '../../src/queue.js';
import { benchConfig, clearQueue, clearRuns, INPUT_FIELDS, type Tenant } from '../fixtures.js';
import { pacedCreates, type CreateRound } from '../paced-creates.js';
import { sleep, startScript, waitForWorker, type BenchProcess } from '../processes.js';
import { PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { round, summarize, type LatencySummary } from '../stats.js';

const POLL_MS = 20;

export interface SchedulesPhaseResult {
  burst: {
    schedules: number;
    /** Seconds from T until the last run was visible. */
    lastAfter: number;
    runs: number;
    lag: LatencySummary;
  };
  steady: {
    schedules: number;
    firings: number;
    runs: number;
    lag: LatencySummary;
    baseline: CreateRound;
    during: CreateRound;
  };
  /** Runs created twice for one (schedule, time): must be 0. */
  doubled: number;
}

/** Seeds `count` schedules of the tenant, each first due at `at`. */
async function seed(
  db: Db,
  tenant: Tenant,
  count: number,
  at: Date,
  cadence: { cron: string } | { interval: number },
): Promise<void> {
  const now = new Date();
  const prefix = newId().slice(0, 24);
  const request = JSON.stringify({ input_fields: INPUT_FIELDS, user_assignments: {} });
  for (let done = 1; done <= count; done += 100_000) {
    const size = Math.min(100_000, count - done + 1);
    await db.raw(
      'INSERT INTO workflow_schedules (id, organization_id, template_id, template_version, ' +
        'run_request, cron, interval_seconds, time_zone, start_at, end_at, overlap, ' +
        'catchup_window_seconds, state, note, next_fire_at, buffered_for, wake_at, last_run_id, ' +
        'version, created_at, updated_at) ' +
        `SELECT CONCAT(?, LPAD(HEX(s.seq), 12, '0')), ?, ?, NULL, ?, ?, ?, 'UTC', NULL, NULL, ` +
        "'allow_all', 3600, 'active', NULL, ?, NULL, ?, NULL, 1, ?, ? " +
        `FROM seq_${done}_to_${done + size - 1} s`,
      [
        prefix,
        tenant.orgId,
        tenant.template.id,
        request,
        'cron' in cadence ? cadence.cron : null,
        'interval' in cadence ? cadence.interval : null,
        at,
        at,
        now,
        now,
      ],
    );
  }
}

/** The tenant's fired records so far. */
async function firedCount(db: Db, orgId: string): Promise<number> {
  const [rows] = (await db.raw(
    "SELECT COUNT(*) AS n FROM schedule_fires WHERE organization_id = ? AND outcome = 'fired'",
    [orgId],
  )) as [Array<{ n: number | string }>];
  return Number(rows[0]?.n ?? 0);
}

/**
 * Polls the tenant's fired records until `expected` are there (or `timeoutMs` passes); returns
 * each run's visible time (ms), in order.
 */
async function watchFires(
  db: Db,
  orgId: string,
  from: number,
  expected: number,
  timeoutMs: number,
): Promise<number[]> {
  const seen: number[] = [];
  let count = from;
  const deadline = Date.now() + timeoutMs;
  while (count < expected && Date.now() < deadline) {
    await sleep(POLL_MS);
    const now = Date.now();
    const n = await firedCount(db, orgId);
    for (let i = count; i < n; i++) seen.push(now);
    count = n;
  }
  return seen;
}

async function doubledRuns(db: Db, orgId: string): Promise<number> {
  const [rows] = (await db.raw(
    "SELECT COUNT(*) - COUNT(DISTINCT JSON_VALUE(run_json, '$.schedule.id'), " +
      "JSON_VALUE(run_json, '$.schedule.scheduled_for')) AS n FROM workflow_runs " +
      'WHERE organization_id = ?',
    [orgId],
  )) as [Array<{ n: number | string }>];
  return Number(rows[0]?.n ?? 0);
}

export async function measureSchedules(deps: {
  settings: BenchSettings;
  db: Db;
  /** The organization whose schedules fire. */
  scheduling: Tenant;
  /** The organization creating runs meanwhile. */
  creating: Tenant;
  apiUrl: string;
  log: (line: string) => void;
}): Promise<SchedulesPhaseResult> {
  const { settings, db, scheduling, creating, apiUrl, log } = deps;
  const reset = async () => {
    await db('workflow_schedules').where({ organization_id: scheduling.orgId }).delete();
    await db('schedule_fires').where({ organization_id: scheduling.orgId }).delete();
    await clearRuns(db);
    await clearQueue(PREFIXES.api);
  };
  await reset();
  const config = benchConfig(PREFIXES.api);
  const connections = new RedisConnections(config);
  const queue = connections.queue(scheduleTickJob, config, 'wrs-bench-schedules');
  const timers = new SecondTimers(
    new KindQueue('scheduleTick', scheduleTickJob, queue, createLogger('warn'), 30_000),
  );
  const worker: BenchProcess = startScript('schedules-worker', 'workers/main.js', {
    env: serviceEnv(PREFIXES.api),
  });
  await waitForWorker(worker, 'workers/main.js');
  try {
    // Burst: N schedules due in the same second.
    const n = settings.scheduleBurst;
    const at = new Date(Math.ceil((Date.now() + 8000) / 1000) * 1000);
    await seed(db, scheduling, n, at, { interval: 3600 });
    await timers.at([at]);
    log(`  seeded ${n} schedules due at ${at.toISOString()}`);
    const visible = await watchFires(db, scheduling.orgId, 0, n, 120_000);
    const burst = {
      schedules: n,
      runs: visible.length,
      lastAfter: round(((visible.at(-1) ?? Date.now()) - at.getTime()) / 1000, 2),
      lag: summarize(visible.map((t) => t - at.getTime())),
    };
    log(
      `  burst: ${burst.runs} of ${n} runs, the last ${burst.lastAfter} s after their time; lag p50 ${burst.lag.p50} ms p99 ${burst.lag.p99} ms`,
    );
    await db('workflow_schedules').where({ organization_id: scheduling.orgId }).delete();

    // Steady: M schedules every minute beside another organization's creates.
    const m = settings.scheduleSteady;
    const rate = settings.bulkCreateRate;
    await pacedCreates(apiUrl, creating, rate, () => false, 1);
    const baseline = await pacedCreates(apiUrl, creating, rate, () => false, 10);
    log(
      `  no schedules: ${baseline.created} creates at ${rate}/s, p50 ${baseline.latency.p50} ms p99 ${baseline.latency.p99} ms`,
    );
    const firstMinute = new Date(Math.ceil((Date.now() + 5000) / 60_000) * 60_000);
    await seed(db, scheduling, m, firstMinute, { cron: '* * * * *' });
    await timers.at([firstMinute]);
    const minutes = settings.scheduleMinutes;
    const lags: number[] = [];
    let seen = await firedCount(db, scheduling.orgId);
    let stopCreates = false;
    const during = pacedCreates(apiUrl, creating, rate, () => stopCreates, 600);
    during.catch(() => undefined);
    await sleep(Math.max(0, firstMinute.getTime() - Date.now() - 2000));
    for (let k = 0; k < minutes; k++) {
      const minute = firstMinute.getTime() + k * 60_000;
      const visibleAt = await watchFires(db, scheduling.orgId, seen, seen + m, 50_000);
      seen += visibleAt.length;
      lags.push(...visibleAt.map((t) => t - minute));
      if (!worker.running) throw new Error(`schedules: the worker exited:\n${worker.tail()}`);
      // The firings' timers were set by the worker's sweep; wait for the next minute.
      if (k < minutes - 1) await sleep(Math.max(0, minute + 60_000 - Date.now() - 2000));
    }
    stopCreates = true;
    const duringRound = await during;
    const steady = {
      schedules: m,
      firings: minutes,
      runs: lags.length,
      lag: summarize(lags),
      baseline,
      during: duringRound,
    };
    log(
      `  every minute: ${steady.runs} runs of ${m} schedules over ${minutes} minutes, lag p50 ${steady.lag.p50} ms p99 ${steady.lag.p99} ms`,
    );
    log(
      `  beside them: ${duringRound.created} creates at ${rate}/s, p50 ${duringRound.latency.p50} ms p99 ${duringRound.latency.p99} ms, ${duringRound.errors} errors`,
    );
    return {
      burst,
      steady,
      doubled: await doubledRuns(db, scheduling.orgId),
    };
  } finally {
    await worker.stop();
    await queue.close();
    connections.close();
    await reset();
  }
}
