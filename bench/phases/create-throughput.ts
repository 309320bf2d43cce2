// Phase 1: create throughput. The same load (same body, same key, same connections, same time)
// against the service, the bare echo endpoint, the naive pipeline and the pg-boss peer, in
// turns, so that the noise of a shared machine falls on all of them. Every round is kept (its
// p99 is a target of its own); the best round of each target gives the throughput figures.
import type { Db } from '../../src/db.js';
import {
  CpuMeter,
  cpuList,
  storagePids,
  postgresTicks,
  processTicks,
  type TickReader,
} from '../cpu.js';
import { clearQueue, clearRuns, createBody, type Tenant } from '../fixtures.js';
import type { LoadOptions, LoadResult } from '../load.js';
import type { MemoryTracker } from '../memory.js';
import { RequestChild } from '../processes.js';
import { describeProbe, watchRound, type RoundProbe } from '../round-probes.js';
import { BENCH_REDIS_URL, PREFIXES, type BenchSettings } from '../settings.js';

export type CreateTarget = 'service' | 'echo' | 'naive' | 'peer';

/**
 * A load run, with the CPU each process spent per successful request (microseconds): the
 * server, MariaDB, PostgreSQL, Redis and the load generator itself.
 */
export type CreateRun = LoadResult & {
  cpuUsPerRequest: Record<string, number>;
  /** For the service: what its event loop, its GC and MariaDB did during the run. */
  probe?: RoundProbe;
};

export interface CreatePhaseResult {
  /** The targets measured: the peer is left out where no PostgreSQL answers. */
  targets: CreateTarget[];
  best: Partial<Record<CreateTarget, CreateRun>>;
  rounds: Array<Partial<Record<CreateTarget, CreateRun>>>;
}

export interface CreatePhaseDeps {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  /** The URL of each target's create endpoint (no peer: not measured). */
  urls: Partial<Record<CreateTarget, string>>;
  /** The server process behind each target, for its CPU time. */
  pids: Partial<Record<CreateTarget, number>>;
  /** The API's /metrics, read around each of its runs (event-loop delay, GC). */
  serviceMetricsUrl?: string;
  /** Empties the peer's run table and queue. */
  resetPeer?: () => Promise<void>;
  memory: MemoryTracker;
  log: (line: string) => void;
}

const ORDER: CreateTarget[] = ['echo', 'naive', 'peer', 'service'];

export async function measureCreateThroughput(deps: CreatePhaseDeps): Promise<CreatePhaseResult> {
  const { settings, tenant } = deps;
  const order = ORDER.filter((target) => deps.urls[target] !== undefined);
  const reset = async () => {
    // Every run starts from an empty table and queue: no run measures the leftovers of another.
    await clearRuns(deps.db);
    await clearQueue(PREFIXES.api);
    await clearQueue(PREFIXES.naive);
    await deps.resetPeer?.();
  };
  const shared = new Map<string, number | TickReader>(storagePids(BENCH_REDIS_URL));
  const postgres = postgresTicks();
  if (postgres && deps.urls.peer) shared.set('postgres', postgres);
  const generator = new RequestChild('load', 'bench/load.js');
  const measured = async (target: CreateTarget, seconds: number): Promise<CreateRun> => {
    const meter = new CpuMeter(
      new Map<string, number | TickReader>([
        ['server', deps.pids[target]!],
        ...shared,
        // The load child with wrk, its child, once that has ended.
        ['load', processTicks(generator.pid, true)],
      ]),
    );
    const watching =
      target === 'service' ? await watchRound(deps.db, deps.serviceMetricsUrl) : undefined;
    const result = await load(target, seconds);
    const cpuUsPerRequest = meter.usPer(result.ok);
    return { ...result, cpuUsPerRequest, probe: await watching?.() };
  };
  const load = (target: CreateTarget, seconds: number) =>
    generator.request<LoadResult>(
      {
        url: deps.urls[target]!,
        body: createBody(tenant),
        headers: { authorization: tenant.key },
        connections: settings.connections,
        seconds,
      } satisfies LoadOptions,
      (seconds + 30) * 1000,
    );

  const rounds: CreatePhaseResult['rounds'] = [];
  try {
    for (const target of order) {
      await reset();
      deps.memory.enterPhase(target === 'service' ? 'create warm-up' : undefined);
      await load(
        target,
        target === 'service' ? settings.serviceWarmupSeconds : settings.warmupSeconds,
      );
    }
    deps.memory.enterPhase(undefined);
    deps.memory.sample('after warm-up');
    deps.memory.setBaseline('create round 1');

    for (let round = 0; round < settings.createRounds; round++) {
      const results: Partial<Record<CreateTarget, CreateRun>> = {};
      for (const target of order) {
        await reset();
        deps.memory.enterPhase(target === 'service' ? `create round ${round + 1}` : undefined);
        results[target] = await measured(target, settings.createSeconds);
        deps.memory.enterPhase(undefined);
        const r = results[target]!;
        const cpu = cpuList(r.cpuUsPerRequest);
        deps.log(
          `  round ${round + 1} ${target.padEnd(7)} ${r.requestsPerSecond.toFixed(0).padStart(6)} req/s` +
            `  p50 ${r.p50} ms  p90 ${r.p90} ms  p99 ${r.p99} ms  max ${r.max} ms` +
            `  errors ${r.errors + r.timeouts + r.non2xx}` +
            `  (CPU µs/request: ${cpu})`,
        );
        if (r.probe) deps.log(`          ${describeProbe(r.probe)}`);
        if (target === 'service') deps.memory.sample(`after create round ${round + 1}`);
      }
      rounds.push(results);
    }
  } finally {
    await generator.close();
  }
  await reset();

  const best: CreatePhaseResult['best'] = {};
  for (const target of order) {
    best[target] = rounds
      .map((r) => r[target]!)
      .reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
  }
  return { targets: order, best, rounds };
}
