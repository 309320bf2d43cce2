// Phase 2: worker throughput. A backlog of pending runs with their jobs is stored, then one
// worker process is started and MySQL is read until every run is started. The real worker and
// the bare one-UPDATE-per-job worker take the same backlog size, in turns.
import type { Db } from '../../src/db.js';
import { countByStatus, countPending, seedBacklog } from '../backlog.js';
import { CpuMeter, pidsByName } from '../cpu.js';
import { clearQueue, clearRuns, type Tenant } from '../fixtures.js';
import { sleep, startScript } from '../processes.js';
import { BENCH_REDIS_URL, PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { round } from '../stats.js';

export type WorkerKind = 'worker' | 'bare';

export interface WorkerRun {
  runs: number;
  /** Runs started per second, from the first started run to the last. */
  runsPerSecond: number;
  /** Seconds from starting the process until every run was started (includes start-up). */
  wallSeconds: number;
  /** Seconds it took to store the backlog and its jobs. */
  seedSeconds: number;
  /** CPU each process spent per run (microseconds), start-up included. */
  cpuUsPerRun: Record<string, number>;
}

export interface WorkerPhaseResult {
  best: Record<WorkerKind, WorkerRun>;
  rounds: Array<Record<WorkerKind, WorkerRun>>;
}

const SCRIPTS: Record<WorkerKind, string> = {
  worker: 'workers/main.js',
  bare: 'bench/baselines/bare-worker.js',
};

async function drainBacklog(
  db: Db,
  tenant: Tenant,
  kind: WorkerKind,
  backlog: number,
): Promise<WorkerRun> {
  await clearRuns(db);
  await clearQueue(PREFIXES.workerPhase);
  const seeding = Date.now();
  await seedBacklog(
    db,
    tenant,
    PREFIXES.workerPhase,
    backlog,
    kind === 'worker' ? 'as-api' : 'one-per-run',
  );
  const seedSeconds = round((Date.now() - seeding) / 1000, 1);

  const proc = startScript(`${kind}-phase2`, SCRIPTS[kind], {
    env: serviceEnv(PREFIXES.workerPhase),
  });
  const redisPort = new URL(BENCH_REDIS_URL).port || '6379';
  const meter = new CpuMeter(
    new Map([
      ['worker', proc.pid],
      ...pidsByName({ mariadbd: '', mysqld: '', 'redis-server': `:${redisPort}` }),
    ]),
  );
  try {
    const spawned = Date.now();
    let firstAt = 0;
    let pendingAtFirst = backlog;
    const deadline = spawned + 180_000;
    for (;;) {
      const pending = await countPending(db);
      const now = Date.now();
      if (pending < backlog && firstAt === 0) {
        firstAt = now;
        pendingAtFirst = pending;
      }
      if (pending === 0) {
        const active = await countByStatus(db, 'active');
        if (active !== backlog) throw new Error(`${kind}: ${active} of ${backlog} runs active`);
        const seconds = Math.max(0.001, (now - firstAt) / 1000);
        const cpuUsPerRun: Record<string, number> = {};
        for (const [name, ms] of Object.entries(meter.elapsedMs())) {
          cpuUsPerRun[name] = Math.round((ms * 1000) / backlog);
        }
        return {
          seedSeconds,
          cpuUsPerRun,
          runs: backlog,
          runsPerSecond: round(pendingAtFirst / seconds, 0),
          wallSeconds: round((now - spawned) / 1000, 2),
        };
      }
      if (now > deadline) throw new Error(`${kind}: ${pending} runs still pending after 180 s`);
      if (!proc.running) throw new Error(`${kind} exited:\n${proc.tail()}`);
      await sleep(25);
    }
  } finally {
    await proc.stop();
  }
}

export async function measureWorkerThroughput(deps: {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  log: (line: string) => void;
}): Promise<WorkerPhaseResult> {
  const rounds: WorkerPhaseResult['rounds'] = [];
  for (let i = 0; i < deps.settings.workerRounds; i++) {
    const result = {} as Record<WorkerKind, WorkerRun>;
    for (const kind of ['bare', 'worker'] as const) {
      result[kind] = await drainBacklog(deps.db, deps.tenant, kind, deps.settings.backlog);
      deps.log(
        `  round ${i + 1} ${kind.padEnd(6)} ${String(result[kind].runsPerSecond).padStart(6)} runs/s` +
          `  (${result[kind].runs} runs seeded in ${result[kind].seedSeconds} s, drained ${result[kind].wallSeconds} s after process start;` +
          ` CPU µs/run: ${Object.entries(result[kind].cpuUsPerRun)
            .map(([name, us]) => `${name} ${us}`)
            .join(', ')})`,
      );
    }
    rounds.push(result);
  }
  await clearRuns(deps.db);
  await clearQueue(PREFIXES.workerPhase);
  const best = {} as Record<WorkerKind, WorkerRun>;
  for (const kind of ['bare', 'worker'] as const) {
    best[kind] = rounds
      .map((r) => r[kind])
      .reduce((a, b) => (b.runsPerSecond > a.runsPerSecond ? b : a));
  }
  return { best, rounds };
}
