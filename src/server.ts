// The API process: serves HTTP until SIGTERM/SIGINT, then stops accepting, lets in-flight
// requests finish, writes every accepted run and closes its connections.
import { createServer } from 'node:http';
import { createApp } from './app.js';
import { registerProcessGauges } from './metrics/gauges.js';
import { startMetricsServer } from './metrics/server.js';
import { answerClientErrors } from './http/client-errors.js';
import { KeyStore } from './auth/key-store.js';
import { loadConfigOrExit } from './config.js';
import { createDb } from './db.js';
import { onShutdown, throttledWarn } from './lib/process.js';
import { createLogger } from './logger.js';
import { applyRunsJob } from './jobs/apply-runs.js';
import { JOB_KINDS } from './jobs/kinds.js';
import { RedisConnections } from './queue.js';
import { RunNotifier } from './runs/run-notifier.js';
import { RunService } from './runs/run-service.js';
import { RunStore } from './runs/run-store.js';
import { TemplateStore } from './templates/template-store.js';
import { DeliveryJobs } from './webhooks/delivery-jobs.js';
import { DeliveryLogStore } from './webhooks/delivery-log-store.js';
import { EndpointStore } from './webhooks/endpoint-store.js';
import { WebhookService } from './webhooks/webhook-service.js';

const config = loadConfigOrExit();
const log = createLogger(config.logLevel, { proc: 'api', pid: process.pid });
const db = createDb(config, log);
const connections = new RedisConnections(config);
const redis = connections.request('wrs-api');
redis.on('error', throttledWarn(log, 'redis connection error'));
const queue = connections.queue(applyRunsJob, config, 'wrs-api-queue');
queue.on('error', throttledWarn(log, 'queue error'));

const templates = new TemplateStore(db);
// New runs' batches go in two round trips on a pool of their own that allows several
// statements a query (RunStore); nothing else the API sends may carry more than one.
const batchDb = createDb({ ...config, dbPoolMax: 4 }, log, { multipleStatements: true });
const runs = new RunStore(db, {
  writeTimeoutMs: config.writeTimeoutMs,
  batches: batchDb,
  templates,
});
const runService = new RunService(templates, runs, new RunNotifier(queue, log), log);
// Redeliveries are enqueued by the API; the workers make every other delivery job.
const webhookQueue = connections.queue(JOB_KINDS.webhookDelivery, config, 'wrs-api-webhooks');
webhookQueue.on('error', throttledWarn(log, 'queue error'));
const webhookService = new WebhookService(
  new EndpointStore(db, config.writeTimeoutMs),
  new DeliveryLogStore(db, config.writeTimeoutMs),
  config.webhooks,
  new DeliveryJobs(webhookQueue, log),
);
let shuttingDown = false;

// The operators' board shows every job kind's queue; the API opens the others only for it.
const dueQueue = config.operatorToken
  ? connections.queue(JOB_KINDS.stepDue, config, 'wrs-api-board')
  : undefined;

const app = createApp({
  config,
  log,
  db,
  redis,
  keys: new KeyStore(db, config.keyCacheTtlMs, config.requestTimeoutMs),
  templates,
  runs,
  runService,
  webhookService,
  isShuttingDown: () => shuttingDown,
  boardQueues: dueQueue ? [queue, dueQueue, webhookQueue] : [],
});

registerProcessGauges({ db, redisPing: () => redis.ping() });
const metricsServer = startMetricsServer(config.metricsPort, log);

const server = createServer(app.callback());
answerClientErrors(server, log);
server.keepAliveTimeout = 5000;
server.listen(config.port, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('listening', { port, basePath: config.basePath });
});

onShutdown(log, config.shutdownTimeoutMs, async () => {
  shuttingDown = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
  await closed;
  clearTimeout(force);
  await runService.drain();
  await Promise.all(
    [queue.close(), dueQueue?.close(), webhookQueue.close()].map((p) => p?.catch(() => undefined)),
  );
  redis.disconnect();
  connections.close();
  metricsServer?.close();
  await Promise.all([db.destroy(), batchDb.destroy()]);
});
