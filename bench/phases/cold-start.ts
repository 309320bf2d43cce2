// The coldstart phase: create throughput right after a start, where the warm create phase
// measures only after a warm-up. Each cold start is a fresh database (created and migrated for
// it) and a freshly started API with no worker, sent load as soon as its /readyz answers 200;
// then rounds of `coldSeconds` at `connections`, each between two short rounds on the bare
// echo, so that a slow round can be told to be the machine's (the echo slowed too) or the
// service's (it did not). For every service round: what the API's event loop and GC, MariaDB
// and Redis did, and the seconds in which the API itself answered slowly (from its log).
import { Redis } from 'ioredis';
import { databaseName, type Db } from '../../src/db.js';
import {
  clearQueue,
  createBody,
  createFreshDatabase,
  createTenant,
  dropBenchDatabase,
} from '../fixtures.js';
import type { LoadOptions, LoadResult } from '../load.js';
import { CpuMeter, databasePid, processTicks, TICKS_PER_SECOND } from '../cpu.js';
import { freePort, RequestChild, startScript, type BenchProcess } from '../processes.js';
import { describeProbe, watchRound, type RoundProbe } from '../round-probes.js';
import { round } from '../stats.js';
import {
  BENCH_REDIS_URL,
  PREFIXES,
  benchDatabaseUrl,
  serviceEnv,
  type BenchSettings,
} from '../settings.js';

/** A round's p99 must stay within this whenever the echo rounds beside it stayed quiet. */
export const COLD_P99_LIMIT_MS = 50;
/** The echo is quiet (the machine is not the one slowing things) up to this p99. */
export const ECHO_QUIET_P99_MS = 10;

export interface ColdRound {
  service: LoadResult;
  /** The echo rounds just before and just after this round. */
  echoBefore: LoadResult;
  echoAfter: LoadResult;
  probe: RoundProbe;
  /**
   * CPU per successful create, µs: the API's and MariaDB's. Less disturbed by a busy machine
   * than latency is, so round 1 against round 3 shows what a start costs the API itself.
   */
  apiCpuUs: number;
  mariadbCpuUs: number;
  /** Redis PING round trips from the bench during the round, ms. */
  redisP99Ms: number;
  redisMaxMs: number;
  /** Each second of the round, from its start (secondsOfRound). */
  seconds: ColdSecond[];
}

export interface ColdSecond {
  second: number;
  creates: number;
  /** The API's CPU in this second: ms, and µs per create answered in it. */
  cpuMs: number;
  cpuUs: number;
  /** Creates that took the API itself over the limit, and the slowest (ms). */
  slow: number;
  maxMs: number;
}

export interface ColdStart {
  /** From the API's spawn to its first /readyz 200, ms. */
  readyMs: number;
  rounds: ColdRound[];
}

export interface ColdPhaseResult {
  starts: ColdStart[];
}

export interface ColdPhaseDeps {
  settings: BenchSettings;
  /** The bare echo's create URL (a process that stays up through the phase). */
  echoUrl: string;
  /** Node flags for the API (profiling). */
  apiNodeArgs: string[];
  log: (line: string) => void;
}

/** Whether a round counts for the target: both echo rounds beside it were quiet. */
export function echoQuiet(r: ColdRound): boolean {
  return Math.max(r.echoBefore.p99, r.echoAfter.p99) <= ECHO_QUIET_P99_MS;
}

export async function measureColdStart(deps: ColdPhaseDeps): Promise<ColdPhaseResult> {
  const { settings } = deps;
  const generator = new RequestChild('load-cold', 'bench/load.js');
  const load = (url: string, headers: Record<string, string>, body: string, seconds: number) =>
    generator.request<LoadResult>(
      { url, body, headers, connections: settings.connections, seconds } satisfies LoadOptions,
      (seconds + 30) * 1000,
    );
  const starts: ColdStart[] = [];
  try {
    // The echo is the machine's yardstick, not under test: warmed before the first start.
    await load(deps.echoUrl, {}, '{}', 1);
    for (let n = 1; n <= settings.coldStarts; n++) {
      starts.push(await coldStart(n, deps, load));
    }
  } finally {
    await generator.close();
  }
  return { starts };
}

async function coldStart(
  n: number,
  deps: ColdPhaseDeps,
  load: (url: string, h: Record<string, string>, body: string, s: number) => Promise<LoadResult>,
): Promise<ColdStart> {
  const { settings, log } = deps;
  const databaseUrl = benchDatabaseUrl(`cold${n}`);
  let db: Db | undefined;
  let api: BenchProcess | undefined;
  try {
    db = await createFreshDatabase(databaseUrl);
    const tenant = await createTenant(db, `Bench cold start ${n}`);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const began = Date.now();
    api = startScript(`api-cold${n}`, 'src/server.js', {
      env: {
        ...serviceEnv(PREFIXES.cold),
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
      },
      nodeArgs: deps.apiNodeArgs,
    });
    const url = `http://127.0.0.1:${port}`;
    await waitForReady(`${url}/readyz`, api);
    const readyMs = Date.now() - began;
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const body = createBody(tenant);
    const headers = { authorization: tenant.key };
    const echo = () => load(deps.echoUrl, {}, body, settings.coldEchoSeconds);

    log(`  cold start ${n}: /readyz 200 after ${readyMs} ms`);
    const rounds: ColdRound[] = [];
    let echoBefore = await echo();
    for (let r = 1; r <= settings.coldRounds; r++) {
      const watching = await watchRound(db, metricsUrl);
      const redis = watchRedis();
      // Seconds are counted from here: the load starts at once.
      const roundBegan = Date.now();
      const cpuBySecond = watchCpu(api.pid);
      const meter = new CpuMeter(new Map<string, number>([['api', api.pid], ...databasePid()]));
      const service = await load(`${url}/create-workflow-run`, headers, body, settings.coldSeconds);
      const cpu = meter.elapsedMs();
      const cpuMsBySecond = cpuBySecond();
      const perCreate = (ms: number | undefined) =>
        Math.round(((ms ?? Number.NaN) * 1000) / Math.max(1, service.ok));
      const [probe, redisMs] = [await watching(), await redis()];
      const echoAfter = await echo();
      const cold: ColdRound = {
        service,
        echoBefore,
        echoAfter,
        probe,
        apiCpuUs: perCreate(cpu.api),
        mariadbCpuUs: perCreate(cpu.mariadbd ?? cpu.mysqld),
        redisP99Ms: redisMs.p99,
        redisMaxMs: redisMs.max,
        seconds: secondsOfRound(api.log(), roundBegan, cpuMsBySecond),
      };
      rounds.push(cold);
      log(
        `    round ${r}: p99 ${service.p99} ms (p50 ${service.p50}, max ${service.max}),` +
          ` ${service.requestsPerSecond.toFixed(0)} req/s, errors ${service.errors + service.timeouts + service.non2xx},` +
          ` CPU µs/create API ${cold.apiCpuUs} MariaDB ${cold.mariadbCpuUs};` +
          ` echo p99 before/after ${echoBefore.p99} / ${echoAfter.p99} ms` +
          `${service.p99 > COLD_P99_LIMIT_MS ? (echoQuiet(cold) ? '  MISS' : '  (over, echo not quiet)') : ''}`,
      );
      log(`      ${describeColdProbe(cold)}`);
      echoBefore = echoAfter;
    }
    return { readyMs, rounds };
  } finally {
    await api?.stop();
    await db?.destroy();
    await dropBenchDatabase(databaseName(databaseUrl)).catch(() => undefined);
    await clearQueue(PREFIXES.cold).catch(() => undefined);
  }
}

/** Polls /readyz until it answers 200: a cold start is measured from then on. */
async function waitForReady(url: string, proc: BenchProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!proc.running) throw new Error(`${proc.name} exited:\n${proc.tail()}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${proc.name}: ${url} did not answer 200 in ${timeoutMs} ms:\n${proc.tail()}`);
}

/** PINGs Redis every 20 ms from the bench until stopped: its round trips, ms. */
function watchRedis(): () => Promise<{ p99: number; max: number }> {
  const redis = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: 1 });
  const times: number[] = [];
  let stopped = false;
  const running = (async () => {
    while (!stopped) {
      const t = process.hrtime.bigint();
      await redis.ping().catch(() => undefined);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return async () => {
    stopped = true;
    await running;
    redis.disconnect();
    times.sort((a, b) => a - b);
    const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
    return { p99: round(at(0.99), 1), max: round(times.at(-1) ?? 0, 1) };
  };
}

/**
 * Each second of a round (counted from its start), from the API's request lines and its CPU
 * read every second: creates answered, the API's CPU per create, and creates that took the API
 * itself more than the limit (how many, the slowest).
 */
function secondsOfRound(
  apiLog: string,
  roundBegan: number,
  cpuMsBySecond: readonly number[],
): ColdSecond[] {
  const seconds: ColdSecond[] = cpuMsBySecond.map((cpuMs, second) => ({
    second,
    creates: 0,
    cpuUs: 0,
    slow: 0,
    maxMs: 0,
    cpuMs,
  }));
  for (const line of apiLog.split('\n')) {
    if (!line.includes('"msg":"request"') || !line.includes('create-workflow-run')) continue;
    let entry: { time?: string; ms?: number };
    try {
      entry = JSON.parse(line) as { time?: string; ms?: number };
    } catch {
      continue;
    }
    const at = entry.time ? Date.parse(entry.time) : Number.NaN;
    const s = seconds[Math.floor((at - roundBegan) / 1000)];
    if (!s) continue;
    s.creates++;
    if ((entry.ms ?? 0) > COLD_P99_LIMIT_MS) s.slow++;
    s.maxMs = Math.max(s.maxMs, Math.round(entry.ms ?? 0));
  }
  for (const s of seconds) s.cpuUs = Math.round((s.cpuMs * 1000) / Math.max(1, s.creates));
  return seconds;
}

/** Reads the API's CPU time every second until stopped: ms used in each whole second. */
function watchCpu(pid: number): () => number[] {
  const read = processTicks(pid);
  const ticks = [read()];
  const timer = setInterval(() => ticks.push(read()), 1000);
  return () => {
    clearInterval(timer);
    return ticks.slice(1).map((t, i) => ((t - ticks[i]!) * 1000) / TICKS_PER_SECOND);
  };
}

function describeColdProbe(r: ColdRound): string {
  const m = r.probe.mariadb;
  const seconds = r.seconds
    .map(
      (s) => `s${s.second} ${s.creates} creates ${s.cpuUs} µs ${s.slow} slow (max ${s.maxMs} ms)`,
    )
    .join(', ');
  return (
    `${describeProbe(r.probe)}; buffer pool reads ${m.Innodb_buffer_pool_reads},` +
    ` checkpoint age ${round(m.Innodb_checkpoint_age / 2 ** 20, 1)} MiB` +
    `; Redis PING p99 ${r.redisP99Ms} ms max ${r.redisMaxMs} ms; API by second (creates, CPU per create, over 50 ms in the API): ${seconds}`
  );
}
