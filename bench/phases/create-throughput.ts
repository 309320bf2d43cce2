// Phase 1: create throughput. The same load (same body, same connections, same time) against
// the service, the bare echo endpoint and the naive pipeline, in turns, so that the noise of a
// shared machine falls on all three; the best round of each is kept.
import type { Db } from '../../src/db.js';
import { CpuMeter, pidsByName } from '../cpu.js';
import { clearQueue, clearRuns, createBody, type Tenant } from '../fixtures.js';
import type { LoadOptions, LoadResult } from '../load.js';
import type { MemoryTracker } from '../memory.js';
import { RequestChild } from '../processes.js';
import { BENCH_REDIS_URL, PREFIXES, type BenchSettings } from '../settings.js';

export type CreateTarget = 'service' | 'echo' | 'naive';

/**
 * A load run, with the CPU each process spent per successful request (microseconds): the
 * server, MariaDB, Redis and the load generator itself.
 */
export type CreateRun = LoadResult & { cpuUsPerRequest: Record<string, number> };

export interface CreatePhaseResult {
  best: Record<CreateTarget, CreateRun>;
  rounds: Array<Record<CreateTarget, CreateRun>>;
}

export interface CreatePhaseDeps {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  urls: Record<CreateTarget, string>;
  /** The server process behind each target, for its CPU time. */
  pids: Record<CreateTarget, number>;
  memory: MemoryTracker;
  log: (line: string) => void;
}

const ORDER: CreateTarget[] = ['echo', 'naive', 'service'];

async function reset(db: Db): Promise<void> {
  // Every run starts from an empty table and queue: no run measures the leftovers of another.
  await clearRuns(db);
  await clearQueue(PREFIXES.api);
  await clearQueue(PREFIXES.naive);
}

export async function measureCreateThroughput(deps: CreatePhaseDeps): Promise<CreatePhaseResult> {
  const { settings, tenant } = deps;
  const redisPort = new URL(BENCH_REDIS_URL).port || '6379';
  const shared = pidsByName({ mariadbd: '', mysqld: '', 'redis-server': `:${redisPort}` });
  const generator = new RequestChild('load', 'bench/load.js');
  const measured = async (target: CreateTarget, seconds: number): Promise<CreateRun> => {
    const meter = new CpuMeter(
      new Map([['server', deps.pids[target]], ...shared, ['load', generator.pid]]),
    );
    const result = await load(target, seconds);
    const cpuUsPerRequest: Record<string, number> = {};
    for (const [name, ms] of Object.entries(meter.elapsedMs())) {
      cpuUsPerRequest[name] = Math.round((ms * 1000) / Math.max(1, result.ok));
    }
    return { ...result, cpuUsPerRequest };
  };
  const load = (target: CreateTarget, seconds: number) =>
    generator.request<LoadResult>(
      {
        url: deps.urls[target],
        body: createBody(tenant),
        headers: { authorization: tenant.key },
        connections: settings.connections,
        seconds,
      } satisfies LoadOptions,
      (seconds + 30) * 1000,
    );

  const rounds: CreatePhaseResult['rounds'] = [];
  try {
    for (const target of ORDER) {
      await reset(deps.db);
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
      const results = {} as Record<CreateTarget, CreateRun>;
      for (const target of ORDER) {
        await reset(deps.db);
        deps.memory.enterPhase(target === 'service' ? `create round ${round + 1}` : undefined);
        results[target] = await measured(target, settings.createSeconds);
        deps.memory.enterPhase(undefined);
        const r = results[target];
        const cpu = Object.entries(r.cpuUsPerRequest)
          .map(([name, us]) => `${name} ${us}`)
          .join(', ');
        deps.log(
          `  round ${round + 1} ${target.padEnd(7)} ${r.requestsPerSecond.toFixed(0).padStart(6)} req/s` +
            `  p50 ${r.p50} ms  p99 ${r.p99} ms  errors ${r.errors + r.timeouts + r.non2xx}` +
            `  (CPU µs/request: ${cpu})`,
        );
        if (target === 'service') deps.memory.sample(`after create round ${round + 1}`);
      }
      rounds.push(results);
    }
  } finally {
    await generator.close();
  }
  await reset(deps.db);

  const best = {} as Record<CreateTarget, CreateRun>;
  for (const target of ORDER) {
    best[target] = rounds
      .map((r) => r[target])
      .reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
  }
  return { best, rounds };
}
