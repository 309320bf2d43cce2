// What a bench run does and for how long: one set of figures for the full run, a smaller one
// for --quick. Everything the bench owns (database, queue prefixes) is named here.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BenchSettings {
  mode: 'quick' | 'full';
  /** Connections of the create-throughput load (phase 1). */
  connections: number;
  /** Seconds of unmeasured load on each baseline before the measured runs. */
  warmupSeconds: number;
  /**
   * Seconds of unmeasured load on the service before the measured runs: long enough for its
   * heap to reach the size it keeps under load (the memory readings start after it).
   */
  serviceWarmupSeconds: number;
  /** Seconds of each measured create-throughput run. */
  createSeconds: number;
  /**
   * Measured runs per target: each run's p99 must meet the target; the best run of each target
   * gives its throughput.
   */
  createRounds: number;
  /** Pending runs in the worker backlog (phase 2). */
  backlog: number;
  /** Backlog runs per target (real worker, bare worker). */
  workerRounds: number;
  /** Creates per second of the end-to-end phase (phase 3). */
  e2eRate: number;
  e2eSeconds: number;
  /** Seconds of paced creates before the measured ones (connections, the worker's start). */
  e2eWarmupSeconds: number;
  /** Rounds, and seconds of load in each, of the steady-state phase (creates with the worker). */
  steadyRounds: number;
  steadySeconds: number;
  /** Runs in the small and the big organization of the list phase (phase 4). */
  listSmall: number;
  listBig: number;
  /** Sequential requests per list URL (after a warm-up of a tenth as many). */
  listSamples: number;
  /** Events in the webhook backlog; events per second and seconds of the latency run (phase 5). */
  webhookBacklog: number;
  webhookRate: number;
  webhookSeconds: number;
  /** Pending runs of organization A's backlog in the fairness phase. */
  fairnessBacklog: number;
  /** Organization B's creates per second, and seconds of them alone, in the fairness phase. */
  fairnessRate: number;
  fairnessSeconds: number;
  /** Active runs the bulk phase's bulk cancel matches. */
  bulkRuns: number;
  /** Another organization's creates per second meanwhile, and seconds of them alone. */
  bulkCreateRate: number;
  bulkBaselineSeconds: number;
  /** Active runs the migrate phase's bulk migration moves onto version 2 (at the bulk phase's rate). */
  migrateRuns: number;
  /** Schedules due in the same second (the schedules phase's burst). */
  scheduleBurst: number;
  /** Schedules firing every minute, for scheduleMinutes, beside creates at bulkCreateRate. */
  scheduleSteady: number;
  scheduleMinutes: number;
  /** Runs (five events each) of the insights phase's small and big organizations. */
  insightsSmall: number;
  insightsBig: number;
  /** Timed answers per view and organization. */
  insightsSamples: number;
  /** Finished, expired runs of the organization whose retention the retention phase sets. */
  retentionRuns: number;
  /** Another organization's creates per second meanwhile, and seconds of them alone. */
  retentionCreateRate: number;
  retentionBaselineSeconds: number;
  /**
   * Cold starts of the coldstart phase: each a fresh database and a freshly started API, then
   * coldRounds rounds of coldSeconds at `connections`, each between two echo rounds of
   * coldEchoSeconds.
   */
  coldStarts: number;
  coldRounds: number;
  coldSeconds: number;
  coldEchoSeconds: number;
  /** Runs created and started by the write floor phase at each batch size. */
  floorRuns: number;
  /**
   * The rules phase: rounds of creates (each round loads templates A, B and C once, for
   * createSeconds each, in the order ABC, then CBA, …); step completions owed in each drain of
   * the worker, and drains of each template.
   */
  rulesCreateRounds: number;
  rulesDrainRuns: number;
  rulesDrainRounds: number;
  /** The claims phase: steps claimed by two claimants each, and pairs of claims at once. */
  claimSteps: number;
  claimPairs: number;
}

export const FULL: BenchSettings = {
  mode: 'full',
  connections: 32,
  warmupSeconds: 3,
  serviceWarmupSeconds: 12,
  createSeconds: 15,
  createRounds: 3,
  backlog: 20_000,
  workerRounds: 2,
  e2eRate: 500,
  e2eSeconds: 20,
  e2eWarmupSeconds: 3,
  steadyRounds: 3,
  steadySeconds: 10,
  listSmall: 1_000,
  listBig: 1_000_000,
  listSamples: 400,
  webhookBacklog: 5_000,
  webhookRate: 200,
  webhookSeconds: 10,
  fairnessBacklog: 100_000,
  fairnessRate: 50,
  fairnessSeconds: 10,
  bulkRuns: 100_000,
  bulkCreateRate: 200,
  bulkBaselineSeconds: 10,
  migrateRuns: 100_000,
  scheduleBurst: 10_000,
  scheduleSteady: 1_000,
  scheduleMinutes: 3,
  insightsSmall: 1_000,
  insightsBig: 1_000_000,
  insightsSamples: 200,
  retentionRuns: 1_000_000,
  retentionCreateRate: 200,
  retentionBaselineSeconds: 10,
  coldStarts: 3,
  coldRounds: 3,
  coldSeconds: 8,
  coldEchoSeconds: 2,
  floorRuns: 12_000,
  rulesCreateRounds: 5,
  rulesDrainRuns: 10_500,
  rulesDrainRounds: 3,
  claimSteps: 5_000,
  claimPairs: 8,
};

export const QUICK: BenchSettings = {
  mode: 'quick',
  connections: 32,
  warmupSeconds: 1,
  serviceWarmupSeconds: 3,
  createSeconds: 4,
  createRounds: 1,
  backlog: 20_000,
  workerRounds: 1,
  e2eRate: 500,
  e2eSeconds: 5,
  e2eWarmupSeconds: 1,
  steadyRounds: 1,
  steadySeconds: 5,
  listSmall: 1_000,
  listBig: 200_000,
  listSamples: 150,
  webhookBacklog: 2_000,
  webhookRate: 200,
  webhookSeconds: 4,
  fairnessBacklog: 20_000,
  fairnessRate: 50,
  fairnessSeconds: 4,
  bulkRuns: 20_000,
  bulkCreateRate: 200,
  bulkBaselineSeconds: 5,
  migrateRuns: 20_000,
  scheduleBurst: 10_000,
  scheduleSteady: 1_000,
  scheduleMinutes: 2,
  insightsSmall: 1_000,
  insightsBig: 100_000,
  insightsSamples: 60,
  retentionRuns: 50_000,
  retentionCreateRate: 200,
  retentionBaselineSeconds: 5,
  coldStarts: 1,
  coldRounds: 3,
  coldSeconds: 8,
  coldEchoSeconds: 2,
  floorRuns: 4_000,
  rulesCreateRounds: 3,
  rulesDrainRuns: 4_200,
  rulesDrainRounds: 2,
  claimSteps: 1_000,
  claimPairs: 8,
};

const mysqlBase = new URL(
  process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'mysql://wrs:wrs@127.0.0.1:3306/x',
);
/**
 * The bench's own database and Redis key prefix, named after its pid so that two benches never
 * share (or drop) each other's data; both are removed when it ends, and a later bench removes
 * those of a bench that was killed (see removeLeftovers).
 */
export const BENCH_DB_PREFIX = 'wrs_bench_';
mysqlBase.pathname = `/${BENCH_DB_PREFIX}${process.pid}`;
export const BENCH_DATABASE_URL = mysqlBase.toString();

/**
 * Another database of this bench (the coldstart phase's fresh ones): its name starts with the
 * bench's, so removeLeftovers finds it when a bench was killed.
 */
export function benchDatabaseUrl(suffix: string): string {
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = `/${BENCH_DB_PREFIX}${process.pid}_${suffix}`;
  return url.toString();
}
export const BENCH_REDIS_URL =
  process.env.BENCH_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379';
export const BENCH_PREFIX = benchPrefix(process.pid);

export function benchPrefix(pid: number): string {
  return `wrs-bench-${pid}`;
}

/** The queue prefixes a bench uses: the API's, the worker phase's, the naive baseline's, the coldstart phase's. */
export function queuePrefixes(prefix: string) {
  return {
    api: prefix,
    workerPhase: `${prefix}-worker`,
    naive: `${prefix}-naive`,
    cold: `${prefix}-cold`,
  } as const;
}

/** Queue prefixes: the API's, the worker phase's, the naive baseline's, the coldstart phase's. */
export const PREFIXES = queuePrefixes(BENCH_PREFIX);

/** Where the processes started by the bench write their logs (removed after a good run). */
export const LOG_DIR = join(tmpdir(), `wrs-bench-${process.pid}`);

/** Environment shared by every service and baseline process the bench starts. */
export function serviceEnv(prefix: string): Record<string, string> {
  return {
    DATABASE_URL: BENCH_DATABASE_URL,
    REDIS_URL: BENCH_REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'info',
    // High enough never to throttle the bench, but the limiter stays on: it is part of the
    // real request path.
    RATE_LIMIT_MAX: '1000000000',
    // The webhook phase's receiver is on this machine, over http.
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  };
}
