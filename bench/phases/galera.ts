// The Galera phase: the service on a three-node Galera cluster of its own (one writer, the
// others ready to take over: DATABASE_NODES) beside the same service on one server of its own
// run as the nodes are (test/support/galera-cluster.ts), on this machine. On each in turn: the
// cost of one commit (a one-row transaction, one after another), the end-to-end latency (the
// e2e phase's paced client) and the steady state (the steady phase's rounds). The ratio of the
// two is what synchronous replication costs here, where the three nodes share the cores with
// the API and the worker; across machines each commit pays a network round trip instead.
import { loadConfig } from '../../src/config.js';
import { createDb, writeTransaction, type Db } from '../../src/db.js';
import { createLogger } from '../../src/logger.js';
import { migrate } from '../../src/migrate.js';
import { GaleraCluster, startLoneServer } from '../../test/support/galera-cluster.js';
import { processesTicks } from '../cpu.js';
import { createTenant } from '../fixtures.js';
import type { BenchProcess } from '../processes.js';
import { BENCH_PREFIX, serviceEnv, type BenchSettings } from '../settings.js';
import { percentile, round } from '../stats.js';
import { measureEndToEnd } from './e2e-latency.js';
import type { E2eResult } from '../e2e-client.js';
import { measureSteadyState, type SteadyRound } from './steady-state.js';

export type GaleraTarget = 'single' | 'galera';

export interface GaleraTargetResult {
  /** One-row transactions committed one after another: ms per commit. */
  commit: { p50: number; p99: number; count: number };
  e2e: E2eResult;
  /** The median steady round. */
  steady: SteadyRound;
}

export interface GaleraPhaseResult {
  single: GaleraTargetResult;
  galera: GaleraTargetResult;
  /** Galera's over the single server's. */
  ratio: { commitP50: number; e2eP50: number; e2eP99: number; steady: number };
}

export async function measureGalera(deps: {
  settings: BenchSettings;
  /** Starts an API process with this environment (over the bench's own). */
  startApi: (
    name: string,
    env: Record<string, string>,
  ) => Promise<{ proc: BenchProcess; url: string }>;
  log: (line: string) => void;
}): Promise<GaleraPhaseResult> {
  const { settings, log } = deps;
  const quick = settings.mode === 'quick';
  const results: Partial<Record<GaleraTarget, GaleraTargetResult>> = {};
  // One at a time: a target's servers run only while it is measured.
  for (const target of ['single', 'galera'] as const) {
    const prefix = `${BENCH_PREFIX}-${target}`;
    let stopServers: () => Promise<void>;
    let env: Record<string, string>;
    let pids: () => number[];
    if (target === 'single') {
      const lone = await startLoneServer();
      stopServers = lone.stop;
      env = { DATABASE_URL: lone.url };
      pids = () => [lone.server.pid!];
    } else {
      const cluster = await GaleraCluster.start();
      stopServers = () => cluster.stop();
      env = cluster.env;
      pids = () => cluster.nodes.map((node) => node.pid!);
    }
    let api: { proc: BenchProcess; url: string } | undefined;
    let db: Db | undefined;
    try {
      const config = loadConfig(env);
      await migrate(config);
      db = createDb({ ...config, dbPoolMax: 4 }, createLogger('error', { proc: 'bench-db' }));
      const tenant = await createTenant(db, `Bench ${target} organization`);
      const commit = await commitCost(db, quick ? 300 : 2000);
      const workerEnv = { ...serviceEnv(prefix), ...env };
      api = await deps.startApi(`api-${target}`, { ...env, QUEUE_PREFIX: prefix });
      const e2e = (
        await measureEndToEnd({
          settings,
          db,
          tenant,
          apiUrl: api.url,
          worker: { env: workerEnv, prefix },
        })
      ).service;
      const steady = await measureSteadyState({
        settings,
        db,
        tenant,
        service: { url: `${api.url}/create-workflow-run`, pid: api.proc.pid },
        worker: {
          env: workerEnv,
          prefix,
          storage: () => new Map([['mariadbd', processesTicks(pids())]]),
        },
        log: (line) => log(line.replace('service', target)),
      });
      results[target] = { commit, e2e, steady: steady.median.service! };
      log(
        `  ${target}: commit p50 ${commit.p50} ms p99 ${commit.p99} ms; end-to-end p50 ${e2e.endToEnd.p50} ms p99 ${e2e.endToEnd.p99} ms (${e2e.unseen} unseen, ${e2e.createErrors} errors); steady ${results[target].steady.runsPerSecond} runs/s`,
      );
    } finally {
      await api?.proc.stop();
      await db?.destroy();
      await stopServers();
    }
  }
  const single = results.single!;
  const galera = results.galera!;
  return {
    single,
    galera,
    ratio: {
      commitP50: round(galera.commit.p50 / single.commit.p50, 2),
      e2eP50: round(galera.e2e.endToEnd.p50 / single.e2e.endToEnd.p50, 2),
      e2eP99: round(galera.e2e.endToEnd.p99 / single.e2e.endToEnd.p99, 2),
      steady: round(galera.steady.runsPerSecond / single.steady.runsPerSecond, 2),
    },
  };
}

/** Commits `count` one-row transactions one after another (as the service writes: writeTransaction). */
async function commitCost(
  db: Db,
  count: number,
): Promise<{ p50: number; p99: number; count: number }> {
  await db.raw(
    'CREATE TABLE IF NOT EXISTS bench_commits (id INT PRIMARY KEY, at DATETIME(3) NOT NULL)',
  );
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await writeTransaction(db, 5000, (query) =>
      query('INSERT INTO bench_commits VALUES (?, CURRENT_TIMESTAMP(3))', [i]),
    );
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { p50: round(percentile(ms, 50), 2), p99: round(percentile(ms, 99), 2), count };
}
