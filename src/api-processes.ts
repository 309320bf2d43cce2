// Several API processes on one port (API_PROCESSES > 1), with node:cluster. The process started
// becomes their supervisor and builds no app of its own: it forks API_PROCESSES processes that
// run src/server.ts each (their own MySQL and Redis pools) and listen on the port (listenApi:
// each on a socket of its own where Node has reusePort, else all on one shared socket). It
// replaces a process that dies unexpectedly (after a backoff), passes SIGTERM/SIGINT on to every
// process, each of which drains as a lone API does, and exits once all have exited: 0 when all
// exited 0. With API_PROCESSES=1 none of this runs: the process serves itself.
import { randomBytes } from 'node:crypto';
import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:net';
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

/**
 * Whether API processes can each listen on a socket of their own with the kernel spreading new
 * connections over them: Linux (SO_REUSEPORT), and a Node whose server.listen() takes reusePort,
 * from 22.12 on the 22 line and from 23.1. Older ones (Node 20) ignore the option without a word,
 * so it is asked by version; elsewhere (macOS) the bind fails or the kernel does not spread.
 */
export function hasReusePort(
  version: string = process.versions.node,
  platform: NodeJS.Platform = process.platform,
): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const listenTakesIt = major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
  return platform === 'linux' && listenTakesIt;
}

/** What a supervised API process sends its supervisor once it listens on a socket of its own. */
const LISTENING_MESSAGE = 'wrs:api-process-listening';

type ListeningMessage = { type: typeof LISTENING_MESSAGE; port: number };

function isListeningMessage(message: unknown): message is ListeningMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === LISTENING_MESSAGE
  );
}

/**
 * Listens on the API port; `onListening` gets the port. A lone API process listens as any server
 * does. A supervised one, on a Node with reusePort, opens a socket of its own on the port with
 * SO_REUSEPORT, and the kernel spreads new connections over the processes' sockets by a hash of
 * each connection's addresses and ports, at its handshake. On a shared socket (SCHED_NONE, the
 * fallback) every process waits on the one accept queue and the first to wake takes all that is
 * queued: a burst of new connections on an idle API went unevenly, at times all to one process
 * (16 of 16).
 *
 * `exclusive` makes the process bind the socket itself instead of asking the supervisor for the
 * shared one; Node 24 implies it with reusePort, and it is stated for any Node that does not.
 * A socket of its own is not announced through the cluster, so the process tells its supervisor
 * itself (superviseApiProcesses hears both ways).
 *
 * When a process dies, its socket's accept queue dies with it: the kernel resets each connection
 * queued there, and a handshake not yet done finds no socket to finish it and is reset too; none
 * is left waiting (test integration/api-processes), and new ones go to the sockets left. A
 * process that drains (SIGTERM) closes its socket the same way: what was queued on it and not
 * yet accepted is reset, before any answer. What reusePort costs: a process whose event loop is
 * blocked keeps the connections hashed to it waiting until it is free again, where on the shared
 * socket a free sibling would have taken them.
 */
export function listenApi(server: Server, port: number, onListening: (port: number) => void): void {
  const boundPort = () => {
    const address = server.address();
    return typeof address === 'object' && address ? address.port : port;
  };
  if (!isSupervisedApiProcess() || !hasReusePort()) {
    server.listen(port, () => onListening(boundPort()));
    return;
  }
  server.listen({ port, reusePort: true, exclusive: true }, () => {
    const message: ListeningMessage = { type: LISTENING_MESSAGE, port: boundPort() };
    process.send?.(message);
    onListening(boundPort());
  });
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

  const onListening = (worker: Worker, port: number) => {
    log.info('api process listening', { workerPid: worker.process.pid, port });
    listening.add(worker.id);
    if (!announced && listening.size >= config.apiProcesses) {
      announced = true;
      log.info('api processes listening', {
        port,
        workerPids: alive().map((w) => w.process.pid),
      });
    }
  };
  // On the shared socket (the supervisor opened it), the cluster says a process listens; on a
  // socket of its own, the process says so itself (listenApi).
  cluster.on('listening', (worker, address) => onListening(worker, address.port));
  cluster.on('message', (worker, message: unknown) => {
    if (isListeningMessage(message)) onListening(worker, message.port);
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

  // Where Node has reusePort each process listens on a socket of its own (listenApi) and this
  // policy does not apply to it. Without (Node 20), the fallback: every process accepts on the
  // shared socket itself, rather than the supervisor accepting and handing each connection on
  // (cluster's round robin, its default): a connection handed to a process that dies on the way
  // was left open, unanswered, until the client gave up. The cost: the kernel does not spread a
  // burst of new connections, the first process to wake takes all that is queued.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  const sockets = hasReusePort() ? 'one per process (reusePort)' : 'shared';
  log.info('starting api processes', { count: config.apiProcesses, port: config.port, sockets });
  for (let i = 0; i < config.apiProcesses; i++) fork();
  return new Promise<never>(() => undefined);
}
