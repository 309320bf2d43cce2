// Phase 2: worker throughput. A backlog of pending runs with their jobs is stored, then one
// worker process is started and the database is read until every run is started. The real
// worker, the bare one-UPDATE-per-job worker and the pg-boss peer's worker (on its PostgreSQL
// database) take the same backlog size, in turns.
import { SYSTEM } from '../../src/audit/actor.js';
import type { Db } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import { newRun } from '../../src/runs/run-state.js';
import {
  countByStatus,
  countPending,
  pendingAmong,
  seedBacklog,
  startedSpan,
  type StartedSpan,
} from '../backlog.js';
import { CpuMeter, cpuList, storagePids, postgresTicks, type TickReader } from '../cpu.js';
import { clearQueue, clearRuns, INPUT_FIELDS, USER_ASSIGNMENTS, type Tenant } from '../fixtures.js';
import { peerDatabaseUrl, type PeerDb } from '../peer/peer-db.js';
import { sleep, startScript } from '../processes.js';
import { BENCH_REDIS_URL, PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { round } from '../stats.js';
import { measureDrainFloor } from './drain-floor.js';

export type WorkerKind = 'worker' | 'bare' | 'peer' | 'floor';

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
  kinds: WorkerKind[];
  best: Partial<Record<WorkerKind, WorkerRun>>;
  rounds: Array<Partial<Record<WorkerKind, WorkerRun>>>;
}

/** The drain's floor measured beside the worker (drain-floor.ts). */
async function floorRun(db: Db, pool: Db, tenant: Tenant, backlog: number): Promise<WorkerRun> {
  const seeding = Date.now();
  await clearRuns(db);
  await clearQueue(PREFIXES.workerPhase);
  // The rows only: the floor takes no jobs.
  await seedBacklog(db, tenant, PREFIXES.workerPhase, backlog, 'none');
  const seedSeconds = round((Date.now() - seeding) / 1000, 1);
  const started = Date.now();
  const floor = await measureDrainFloor({ pool, organizationId: tenant.orgId, runs: backlog });
  return {
    runs: floor.runs,
    runsPerSecond: floor.runsPerSecond,
    seedSeconds,
    wallSeconds: round((Date.now() - started) / 1000, 2),
    cpuUsPerRun: floor.cpuUsPerRun,
  };
}

/** What draining a backlog needs of each kind: where its runs live and how it is started. */
interface Drainer {
  script: string;
  env: Record<string, string>;
  /** Stores the backlog; its run ids in the order they were stored (oldest first). */
  seed: (backlog: number) => Promise<string[]>;
  countPending: () => Promise<number>;
  /** How many of these runs still wait (a key lookup each: cheap to ask while draining). */
  pendingAmong: (ids: readonly string[]) => Promise<number>;
  /** The runs' first and last started time, read after the drain. */
  startedSpan: () => Promise<StartedSpan>;
  countActive: () => Promise<number>;
  /** The database and queue processes whose CPU the drain costs. */
  storage: () => Map<string, number | TickReader>;
}

function drainers(db: Db, tenant: Tenant, peer: PeerDb | undefined): Map<WorkerKind, Drainer> {
  const mysqlAndRedis = () => new Map(storagePids(BENCH_REDIS_URL));
  const onMysql = (jobs: 'as-api' | 'one-per-run', script: string): Drainer => ({
    script,
    env: serviceEnv(PREFIXES.workerPhase),
    seed: async (backlog) => {
      await clearRuns(db);
      await clearQueue(PREFIXES.workerPhase);
      return seedBacklog(db, tenant, PREFIXES.workerPhase, backlog, jobs);
    },
    countPending: () => countPending(db, tenant.orgId),
    pendingAmong: (ids) => pendingAmong(db, ids),
    startedSpan: () => startedSpan(db, tenant.orgId),
    countActive: () => countByStatus(db, 'active'),
    storage: mysqlAndRedis,
  });
  const kinds = new Map<WorkerKind, Drainer>([
    ['bare', onMysql('one-per-run', 'bench/baselines/bare-worker.js')],
    ['worker', onMysql('as-api', 'workers/main.js')],
  ]);
  if (peer) {
    kinds.set('peer', {
      script: 'bench/baselines/pgboss-worker.js',
      env: { PEER_DATABASE_URL: peerDatabaseUrl() },
      seed: async (backlog) => {
        await peer.reset();
        const now = new Date();
        const runs = Array.from({ length: backlog }, () =>
          newRun(
            newId(),
            tenant.orgId,
            tenant.template,
            INPUT_FIELDS,
            USER_ASSIGNMENTS,
            now,
            SYSTEM,
          ),
        );
        await peer.seedBacklog(runs);
        return runs.map((run) => run.id);
      },
      countPending: () => peer.countPending(),
      pendingAmong: (ids) => peer.pendingAmong(ids),
      startedSpan: () => peer.startedSpan(),
      countActive: () => peer.countByStatus('active'),
      storage: () => {
        const postgres = postgresTicks();
        return new Map(postgres ? [['postgres', postgres]] : []);
      },
    });
  }
  return kinds;
}

/** The runs seeded last, watched while draining. */
const TAIL = 50;

async function drainBacklog(
  kind: WorkerKind,
  drainer: Drainer,
  backlog: number,
): Promise<WorkerRun> {
  const seeding = Date.now();
  const ids = await drainer.seed(backlog);
  const seedSeconds = round((Date.now() - seeding) / 1000, 1);
  // The runs seeded last are taken last: while any of them waits, the drain is not over. Only
  // they are looked at while the worker drains (a COUNT of the backlog every 25 ms read every
  // owed run's index entry, MariaDB's work charged to the drain); the whole backlog is counted
  // once they are all taken.
  const tail = ids.slice(-TAIL);

  const proc = startScript(`${kind}-phase2`, drainer.script, { env: drainer.env });
  const meter = new CpuMeter(
    new Map<string, number | TickReader>([['worker', proc.pid], ...drainer.storage()]),
  );
  try {
    const spawned = Date.now();
    const deadline = spawned + 180_000;
    for (;;) {
      const now = Date.now();
      if ((await drainer.pendingAmong(tail)) === 0 && (await drainer.countPending()) === 0) {
        const cpuUsPerRun = meter.usPer(backlog);
        const active = await drainer.countActive();
        if (active !== backlog) throw new Error(`${kind}: ${active} of ${backlog} runs active`);
        // The rate from the runs' own started times (each batch's time as its worker stamped
        // it): the runs started after the first instant, over the time from it to the last.
        const span = await drainer.startedSpan();
        const seconds = Math.max(0.001, (span.lastMs - span.firstMs) / 1000);
        return {
          seedSeconds,
          cpuUsPerRun,
          runs: backlog,
          runsPerSecond: round(span.afterFirst / seconds, 0),
          wallSeconds: round((now - spawned) / 1000, 2),
        };
      }
      if (now > deadline) throw new Error(`${kind}: runs still pending after 180 s`);
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
  /** A pool that allows several statements a query, as a worker's: the drain's floor. */
  pool: Db;
  tenant: Tenant;
  /** The peer's database; without it the peer is not measured. */
  peer?: PeerDb;
  log: (line: string) => void;
}): Promise<WorkerPhaseResult> {
  const kinds = drainers(deps.db, deps.tenant, deps.peer);
  // For profiling one kind alone: BENCH_WORKER_KINDS=worker (a comma-separated list).
  const picked = process.env.BENCH_WORKER_KINDS?.split(',');
  if (picked) for (const kind of kinds.keys()) if (!picked.includes(kind)) kinds.delete(kind);
  const withFloor = !picked || picked.includes('floor');
  const rounds: WorkerPhaseResult['rounds'] = [];
  for (let i = 0; i < deps.settings.workerRounds; i++) {
    const result: Partial<Record<WorkerKind, WorkerRun>> = {};
    for (const [kind, drainer] of kinds) {
      const r = await drainBacklog(kind, drainer, deps.settings.backlog);
      result[kind] = r;
      deps.log(
        `  round ${i + 1} ${kind.padEnd(6)} ${String(r.runsPerSecond).padStart(6)} runs/s` +
          `  (${r.runs} runs seeded in ${r.seedSeconds} s, drained ${r.wallSeconds} s after process start;` +
          ` CPU µs/run: ${cpuList(r.cpuUsPerRun)})`,
      );
    }
    if (withFloor) {
      const r = await floorRun(deps.db, deps.pool, deps.tenant, deps.settings.backlog);
      result.floor = r;
      deps.log(
        `  round ${i + 1} floor  ${String(r.runsPerSecond).padStart(6)} runs/s` +
          `  (the worker's statements, worked out beforehand, sent as it sends them; CPU µs/run: ${cpuList(r.cpuUsPerRun)})`,
      );
    }
    rounds.push(result);
  }
  await clearRuns(deps.db);
  await clearQueue(PREFIXES.workerPhase);
  await deps.peer?.reset();
  const best: WorkerPhaseResult['best'] = {};
  for (const kind of [...kinds.keys(), ...(withFloor ? (['floor'] as const) : [])]) {
    best[kind] = rounds
      .map((r) => r[kind]!)
      .reduce((a, b) => (b.runsPerSecond > a.runsPerSecond ? b : a));
  }
  return { kinds: [...kinds.keys(), ...(withFloor ? (['floor'] as const) : [])], best, rounds };
}
