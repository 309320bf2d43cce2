// The steady state: creates at full load while the worker starts the runs, as a deployment on
// one box runs (API, worker, database and queue sharing the cores). The service (its API and
// one worker on one queue) and the pg-boss peer (its API and its worker) take the same load in
// turns, round after round: the same body and key, the same connections, the same seconds.
//
// Each round starts its system's worker and begins once that worker takes jobs (the service's
// "worker ready", the peer's "worker started"): a load begun earlier would pile runs up for
// the worker's first turns, whose larger batches cost MariaDB less than a steady flow's.
// A round counts a run once it is created and started: the load runs for its seconds, then the
// round waits until the worker has started every run created (the drain is timed, and counted
// in the throughput: runs created ÷ (load + drain) seconds). CPU is read for every process of
// the system from the round's start to the end of its drain, per run created and started.
import type { Db } from '../../src/db.js';
import { countPending } from '../backlog.js';
import {
  CpuMeter,
  cpuList,
  storagePids,
  postgresTicks,
  processTicks,
  type TickReader,
} from '../cpu.js';
import {
  clearQueue,
  clearRuns,
  createBody,
  skipInsightsBacklog,
  type Tenant,
} from '../fixtures.js';
import type { LoadOptions, LoadResult } from '../load.js';
import { peerDatabaseUrl, type PeerDb } from '../peer/peer-db.js';
import { mariadbStatus } from '../round-probes.js';
import { RequestChild, sleep, startScript, waitForWorker } from '../processes.js';
import { BENCH_REDIS_URL, PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { round } from '../stats.js';

export type SteadyTarget = 'service' | 'peer';

export interface SteadyRound {
  /** The load's figures (requests answered 2xx, per second of load; latency percentiles). */
  load: LoadResult;
  /** Runs created (answered 200) and started by the end of the drain. */
  runs: number;
  /** Runs still waiting for the worker when the load stopped. */
  backlogAtEnd: number;
  /** Seconds from the load's end until every run created was started. */
  drainSeconds: number;
  /** Runs created and started per second: runs ÷ (load + drain seconds). */
  runsPerSecond: number;
  /** CPU µs per run created and started, by process (api, worker, mariadb, redis, postgres). */
  cpuUsPerRun: Record<string, number>;
  /**
   * Transactions the database committed per run created and started (creates' and starts'
   * together; MariaDB's Com_commit), where the system can tell: how large its batches were.
   */
  commitsPerRun?: number;
}

export interface SteadyPhaseResult {
  targets: SteadyTarget[];
  rounds: Array<Partial<Record<SteadyTarget, SteadyRound>>>;
  /** Per target, the median round by runs per second (its CPU figures with it). */
  median: Partial<Record<SteadyTarget, SteadyRound>>;
}

interface System {
  url: string;
  apiPid: number;
  workerScript: string;
  workerEnv: Record<string, string>;
  reset: () => Promise<void>;
  pending: () => Promise<number>;
  /** The storage processes whose CPU the runs cost. */
  storage: () => Map<string, number | TickReader>;
  /** Transactions committed so far by the database, server-wide. */
  commits?: () => Promise<number>;
}

export async function measureSteadyState(deps: {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  service: { url: string; pid: number };
  /** The peer's API and database; without them the peer is not measured. */
  peer?: { url: string; pid: number; db: PeerDb };
  /**
   * The service's worker on other servers (the Galera phase): its environment, its queues and
   * the database processes whose CPU its runs cost.
   */
  worker?: {
    env: Record<string, string>;
    prefix: string;
    storage: () => Map<string, number | TickReader>;
  };
  /** Rounds to measure (the settings' steadyRounds by default). */
  rounds?: number;
  log: (line: string) => void;
}): Promise<SteadyPhaseResult> {
  const { settings, db, tenant } = deps;
  const systems = new Map<SteadyTarget, System>();
  if (deps.peer) {
    const peer = deps.peer;
    systems.set('peer', {
      url: peer.url,
      apiPid: peer.pid,
      workerScript: 'bench/baselines/pgboss-worker.js',
      workerEnv: { PEER_DATABASE_URL: peerDatabaseUrl() },
      reset: () => peer.db.reset(),
      pending: () => peer.db.countPending(),
      storage: () => {
        const postgres = postgresTicks();
        return new Map(postgres ? [['postgres', postgres]] : []);
      },
    });
  }
  systems.set('service', {
    url: deps.service.url,
    apiPid: deps.service.pid,
    workerScript: 'workers/main.js',
    workerEnv: deps.worker?.env ?? serviceEnv(PREFIXES.api),
    reset: async () => {
      await clearRuns(db);
      await clearQueue(deps.worker?.prefix ?? PREFIXES.api);
      // As the end-to-end phase: the insights' fold folds this phase's own flow.
      await skipInsightsBacklog(db);
    },
    pending: () => countPending(db, tenant.orgId),
    storage: deps.worker?.storage ?? (() => new Map(storagePids(BENCH_REDIS_URL))),
    commits: async () => (await mariadbStatus(db)).Com_commit,
  });

  const generator = new RequestChild('load', 'bench/load.js');
  const load = (url: string, seconds: number) =>
    generator.request<LoadResult>(
      {
        url,
        body: createBody(tenant),
        headers: { authorization: tenant.key },
        connections: settings.connections,
        seconds,
      } satisfies LoadOptions,
      (seconds + 30) * 1000,
    );

  const measure = async (
    target: SteadyTarget,
    system: System,
    seconds: number,
  ): Promise<SteadyRound> => {
    await system.reset();
    const worker = startScript(`${target}-worker-steady`, system.workerScript, {
      env: system.workerEnv,
    });
    try {
      await waitForWorker(worker, system.workerScript);
      const meter = new CpuMeter(
        new Map<string, number | TickReader>([
          ['api', system.apiPid],
          ['worker', worker.pid],
          ...system.storage(),
          ['load', processTicks(generator.pid, true)],
        ]),
      );
      const commitsBefore = await system.commits?.();
      const result = await load(system.url, seconds);
      const stoppedAt = Date.now();
      const backlogAtEnd = await system.pending();
      let pending = backlogAtEnd;
      while (pending > 0) {
        if (Date.now() - stoppedAt > 120_000) {
          throw new Error(`${target}: ${pending} runs still pending 120 s after the load`);
        }
        if (!worker.running) throw new Error(`${target} worker exited:\n${worker.tail()}`);
        await sleep(10);
        pending = await system.pending();
      }
      const drainSeconds = (Date.now() - stoppedAt) / 1000;
      const commitsAfter = await system.commits?.();
      const cpuUsPerRun = meter.usPer(result.ok);
      return {
        load: result,
        runs: result.ok,
        backlogAtEnd,
        drainSeconds: round(drainSeconds, 2),
        runsPerSecond: round(result.ok / (seconds + drainSeconds), 0),
        cpuUsPerRun,
        ...(commitsBefore !== undefined && commitsAfter !== undefined
          ? { commitsPerRun: round((commitsAfter - commitsBefore) / Math.max(1, result.ok), 3) }
          : {}),
      };
    } finally {
      await worker.stop();
    }
  };

  const rounds: SteadyPhaseResult['rounds'] = [];
  try {
    // Unmeasured: each system's connections, JIT and caches, as in the create phase.
    for (const [target, system] of systems) await measure(target, system, settings.warmupSeconds);
    for (let i = 0; i < (deps.rounds ?? settings.steadyRounds); i++) {
      const results: Partial<Record<SteadyTarget, SteadyRound>> = {};
      for (const [target, system] of systems) {
        const r = await measure(target, system, settings.steadySeconds);
        results[target] = r;
        deps.log(
          `  round ${i + 1} ${target.padEnd(7)} ${String(r.runsPerSecond).padStart(6)} runs/s created and started` +
            `  (creates ${r.load.requestsPerSecond.toFixed(0)}/s, p99 ${r.load.p99} ms, backlog at end ${r.backlogAtEnd},` +
            ` drained in ${r.drainSeconds} s, errors ${r.load.errors + r.load.timeouts + r.load.non2xx};` +
            `${r.commitsPerRun !== undefined ? ` MariaDB commits per run ${r.commitsPerRun};` : ''}` +
            ` CPU µs/run: ${cpuList(r.cpuUsPerRun)})`,
        );
      }
      rounds.push(results);
    }
  } finally {
    await generator.close();
  }
  for (const system of systems.values()) await system.reset();

  const median: SteadyPhaseResult['median'] = {};
  for (const target of systems.keys()) {
    const sorted = rounds.map((r) => r[target]!).sort((a, b) => a.runsPerSecond - b.runsPerSecond);
    median[target] = sorted[Math.floor(sorted.length / 2)];
  }
  return { targets: [...systems.keys()], rounds, median };
}
