// Several API processes on one port (API_PROCESSES > 1), with node:cluster. The process started
// becomes their supervisor and builds no app of its own: it forks API_PROCESSES processes that
// run src/server.ts each (their own MySQL and Redis pools) and listen on the shared port, the
// supervisor handing accepted connections to them in turn (cluster's round robin). It replaces
// a process that dies unexpectedly (after a backoff), passes SIGTERM/SIGINT on to every process,
// each of which drains as a lone API does, and exits once all have exited: 0 when all exited 0.
// With API_PROCESSES=1 none of this runs: the process serves itself.
import { randomBytes } from 'node:crypto';
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from './config.js';
import { createLogger } from './logger.js';
import { registry } from './metrics/metrics.js';
import { startMetricsServer } from './metrics/server.js';

/** The first replacement waits this long; each quick death in a row doubles it, up to the max. */
const RESTART_MIN_MS = 100;
const RESTART_MAX_MS = 10_000;
/** A process that lived this long died of something new: its replacement waits the minimum. */
const STABLE_AFTER_MS = 10_000;

/** Whether this process is to supervise API processes rather than serve. */
export function isApiSupervisor(config: Config): boolean {
  return config.apiProcesses > 1 && cluster.isPrimary;
}

/** Whether this process is an API process forked by a supervisor. */
export function isSupervisedApiProcess(): boolean {
  return cluster.isWorker;
}

/**
 * In a supervised API process: its metrics are answered to the supervisor, which serves the
 * processes' metrics summed on METRICS_PORT (the port is the supervisor's alone).
 */
export function reportMetricsToSupervisor(): undefined {
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // listens for the supervisor's requests
  return undefined;
}

const REHEARSAL_TOKEN_ENV = 'WRS_REHEARSAL_TOKEN';

/**
 * The secret that marks warm-up requests (warm-up.ts): made here for a lone API process, handed
 * down by the supervisor to the processes it forks.
 */
export function rehearsalToken(): string {
  return (
    (isSupervisedApiProcess() ? process.env[REHEARSAL_TOKEN_ENV] : undefined) ??
    randomBytes(24).toString('base64url')
  );
}

/** Runs the supervisor; never resolves: it ends the process itself once every API process has. */
export function superviseApiProcesses(config: Config): Promise<never> {
  const log = createLogger(config.logLevel, { proc: 'api-supervisor', pid: process.pid });
  const startedAt = new Map<number, number>();
  const listening = new Set<number>();
  const restarts = new Set<NodeJS.Timeout>();
  let quickDeaths = 0;
  let announced = false;
  let stopping = false;
  let failedExits = 0;

  // One secret for all: a process's warm-up requests may land on a sibling (they share the
  // port), which must know them as such too (rehearsalToken).
  const token = randomBytes(24).toString('base64url');
  const fork = () => {
    const worker = cluster.fork({ [REHEARSAL_TOKEN_ENV]: token });
    startedAt.set(worker.id, Date.now());
  };
  const alive = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);

  cluster.on('listening', (worker, address) => {
    log.info('api process listening', { workerPid: worker.process.pid, port: address.port });
    listening.add(worker.id);
    if (!announced && listening.size >= config.apiProcesses) {
      announced = true;
      log.info('api processes listening', {
        port: address.port,
        workerPids: alive().map((w) => w.process.pid),
      });
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker.id) ?? Date.now());
    startedAt.delete(worker.id);
    listening.delete(worker.id);
    if (stopping) {
      if (code !== 0) failedExits++;
      log.info('api process exited', { workerPid: worker.process.pid, code, signal });
      if (alive().length === 0) {
        log.info('stopped', { failedExits });
        process.exit(failedExits === 0 ? 0 : 1);
      }
      return;
    }
    quickDeaths = lived < STABLE_AFTER_MS ? quickDeaths + 1 : 0;
    const delayMs = Math.min(RESTART_MIN_MS * 2 ** Math.max(0, quickDeaths - 1), RESTART_MAX_MS);
    log.error('api process died; starting another', {
      workerPid: worker.process.pid,
      code,
      signal,
      livedMs: lived,
      restartInMs: delayMs,
    });
    const timer = setTimeout(() => {
      restarts.delete(timer);
      if (!stopping) fork();
    }, delayMs);
    restarts.add(timer);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const timer of restarts) clearTimeout(timer);
    const workers = alive();
    log.info('shutting down', { signal, workerPids: workers.map((w) => w.process.pid) });
    // Each process drains within SHUTDOWN_TIMEOUT_MS (and ends itself 2 s after); past that
    // and a margin, what is left is killed.
    setTimeout(() => {
      log.error('shutdown timed out; killing the api processes left', {
        workerPids: alive().map((w) => w.process.pid),
      });
      for (const w of alive()) w.process.kill('SIGKILL');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5000).unref();
    if (workers.length === 0) process.exit(0);
    for (const w of workers) w.process.kill(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  if (config.metricsPort !== undefined) {
    const aggregator = new AggregatorRegistry();
    startMetricsServer(config.metricsPort, log, {
      contentType: aggregator.contentType,
      metrics: () => aggregator.clusterMetrics(),
    });
  }

  // Every process accepts on the shared socket itself (the kernel picks which), rather than the
  // supervisor accepting and handing each connection on: a connection handed to a process that
  // dies on the way would be left open, unanswered, until the client gives up.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  log.info('starting api processes', { count: config.apiProcesses, port: config.port });
  for (let i = 0; i < config.apiProcesses; i++) fork();
  return new Promise<never>(() => undefined);
}
