// The `procs` phase: create throughput with one API process and with two (API_PROCESSES=2,
// one port, src/api-processes.ts), in alternated rounds 1, 2, 1, 2, … against two APIs started
// side by side (the idle one costs nothing), so the machine's noise falls on both. Same load
// as the create phase: the same body and key, the same connections, no worker running.
import type { Db } from '../../src/db.js';
import {
  CpuMeter,
  cpuList,
  storagePids,
  processTicks,
  processTreeTicks,
  type TickReader,
} from '../cpu.js';
import { clearQueue, clearRuns, createBody, type Tenant } from '../fixtures.js';
import type { LoadOptions, LoadResult } from '../load.js';
import { RequestChild } from '../processes.js';
import { BENCH_REDIS_URL, PREFIXES, type BenchSettings } from '../settings.js';

export interface ProcsRound {
  processes: 1 | 2;
  result: LoadResult;
  /** CPU µs per successful create: the API (every process of it), MariaDB, Redis, the load. */
  cpuUsPerRequest: Record<string, number>;
}

export interface ProcsPhaseResult {
  rounds: ProcsRound[];
  /** The best round of each. */
  one: ProcsRound;
  two: ProcsRound;
}

export interface ProcsPhaseDeps {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  /** The create URL and the (supervisor's) pid of each API. */
  apis: Record<1 | 2, { url: string; pid: number }>;
  log: (line: string) => void;
}

export async function measureApiProcesses(deps: ProcsPhaseDeps): Promise<ProcsPhaseResult> {
  const { settings, tenant } = deps;
  const roundsEach = settings.mode === 'quick' ? 2 : 3;
  const shared = new Map<string, number | TickReader>(storagePids(BENCH_REDIS_URL));
  const generator = new RequestChild('load', 'bench/load.js');
  const load = (processes: 1 | 2, seconds: number) =>
    generator.request<LoadResult>(
      {
        url: deps.apis[processes].url,
        body: createBody(tenant),
        headers: { authorization: tenant.key },
        connections: settings.connections,
        seconds,
      } satisfies LoadOptions,
      (seconds + 30) * 1000,
    );
  const reset = async () => {
    await clearRuns(deps.db);
    await clearQueue(PREFIXES.api);
  };

  const rounds: ProcsRound[] = [];
  try {
    for (const processes of [1, 2] as const) {
      await reset();
      await load(processes, settings.serviceWarmupSeconds);
    }
    for (let i = 0; i < roundsEach * 2; i++) {
      const processes = i % 2 === 0 ? 1 : 2;
      await reset();
      const meter = new CpuMeter(
        new Map<string, number | TickReader>([
          ['api', processTreeTicks(deps.apis[processes].pid)],
          ...shared,
          ['load', processTicks(generator.pid, true)],
        ]),
      );
      const result = await load(processes, settings.createSeconds);
      const cpuUsPerRequest = meter.usPer(result.ok);
      rounds.push({ processes, result, cpuUsPerRequest });
      const cpu = cpuList(cpuUsPerRequest);
      deps.log(
        `  round ${i + 1} ${processes} API process${processes === 1 ? ' ' : 'es'} ${result.requestsPerSecond
          .toFixed(0)
          .padStart(6)} req/s  p50 ${result.p50} ms  p99 ${result.p99} ms` +
          `  errors ${result.errors + result.timeouts + result.non2xx}  (CPU µs/request: ${cpu})`,
      );
    }
  } finally {
    await generator.close();
  }
  await reset();
  const best = (n: 1 | 2) =>
    rounds
      .filter((r) => r.processes === n)
      .reduce((a, b) => (b.result.requestsPerSecond > a.result.requestsPerSecond ? b : a));
  return { rounds, one: best(1), two: best(2) };
}
