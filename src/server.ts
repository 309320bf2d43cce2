// The API process: serves HTTP until SIGTERM/SIGINT, then stops accepting, lets in-flight
// requests finish, writes every accepted run and closes its connections.
import { createServer } from 'node:http';
import {
  isApiSupervisor,
  isSupervisedApiProcess,
  listenApi,
  rehearsalToken,
  reportMetricsToSupervisor,
  superviseApiProcesses,
} from './api-processes.js';
import { createApp } from './app.js';
import { registerProcessGauges } from './metrics/gauges.js';
import { startMetricsServer } from './metrics/server.js';
import { answerClientErrors } from './http/client-errors.js';
import { KeyService } from './auth/key-service.js';
import { BulkService } from './bulk/bulk-service.js';
import { BulkStore } from './bulk/bulk-store.js';
import { KeyStore } from './auth/key-store.js';
import { KeyUsage } from './auth/key-usage.js';
import { loadConfigOrExit } from './config.js';
import { createDb } from './db.js';
import { ReplicaReads } from './db-replicas.js';
import { onShutdown, throttledWarn } from './lib/process.js';
import { createLogger } from './logger.js';
import { ProcessQueues } from './jobs/process-queues.js';
import { RedisConnections } from './queue.js';
import { RunNotifier } from './runs/run-notifier.js';
import { RunService } from './runs/run-service.js';
import { DueTimers } from './runs/due-timers.js';
import { MigrationService } from './run-migration/migration-service.js';
import { SecondTimers } from './jobs/second-timers.js';
import { templateResolver } from './schedules/schedule-runner.js';
import { ScheduleService } from './schedules/schedule-service.js';
import { ScheduleStore } from './schedules/schedule-store.js';
import { RunStore } from './runs/run-store.js';
import { rehearsalBody, rehearseCreates } from './runs/create-rehearsal.js';
import { Readiness, rehearseRequests } from './warm-up.js';
import { TemplateService } from './templates/template-service.js';
import { InsightReads } from './insights/insight-reads.js';
import { InsightService } from './insights/insight-service.js';
import { TemplateStore } from './templates/template-store.js';
import { DeliveryLogStore } from './webhooks/delivery-log-store.js';
import { EndpointStore } from './webhooks/endpoint-store.js';
import { WebhookService } from './webhooks/webhook-service.js';
import { RunDeletionStore } from './retention/deletion-store.js';
import { RetentionService } from './retention/retention-service.js';
import { SettingsStore } from './retention/settings-store.js';
import { EventSignal, eventsChannel } from './streams/event-signal.js';
import { StreamHub } from './streams/stream-hub.js';
import { StreamStore } from './streams/stream-store.js';

const config = loadConfigOrExit();
// API_PROCESSES > 1: this process only supervises the API processes, which run this file too.
if (isApiSupervisor(config)) await superviseApiProcesses(config);
const log = createLogger(config.logLevel, { proc: 'api', pid: process.pid });
// The API keeps its pools whole (opened by the warm-up before /readyz says 200).
const db = createDb(config, log, { poolMin: config.dbPoolMax });
// With DATABASE_REPLICA_URLS: the reads listed in docs/operations.md (Read replicas) go to a replica once it has
// caught up with the primary (read-your-writes); without, `reader` is undefined and every
// store reads `db` as it always did.
const replicas = config.replicas ? new ReplicaReads(db, config.replicas, log, config) : undefined;
const reader = replicas?.read;
const connections = new RedisConnections(config);
const redis = connections.request('wrs-api');
redis.on('error', throttledWarn(log, 'redis connection error'));
// Opened as used: the API adds runs, redeliveries, bulk actions and the timers of moved runs;
// the other kinds are its only for the board.
const queues = new ProcessQueues(connections, config, log, 'wrs-api');

// The live event streams: woken through Redis by whichever process commits events, reading
// MySQL (src/streams/). A probe waits out writers' transactions: bounded a little past them.
const streamStore = new StreamStore(db, config.writeTimeoutMs + 1000);
const streamHub = new StreamHub({
  store: streamStore,
  config: config.streams,
  log,
  subscriber: connections.subscriber('wrs-api-events'),
  channel: eventsChannel(config.queuePrefix),
});
const eventSignal = new EventSignal(redis, eventsChannel(config.queuePrefix), log, (orgs) =>
  streamHub.wake(orgs),
);

const templates = new TemplateStore(db, config.writeTimeoutMs, reader);
// New runs' batches go in two round trips on a pool of their own that allows several
// statements a query (RunStore); nothing else the API sends may carry more than one.
const batchDb = createDb({ ...config, dbPoolMax: 4 }, log, {
  multipleStatements: true,
  poolMin: 4,
});
const runs = new RunStore(db, {
  writeTimeoutMs: config.writeTimeoutMs,
  batches: batchDb,
  templates,
  onEventsCommitted: eventSignal.committed,
  reader,
});
const settings = new SettingsStore(db, config.writeTimeoutMs);
const notifier = new RunNotifier(queues.get('applyRuns'));
const runService = new RunService(templates, runs, notifier, log, (organizationId) =>
  settings.cachedTimeZone(organizationId),
);
// Redeliveries are enqueued by the API; the workers make every other delivery job.
const webhookService = new WebhookService(
  new EndpointStore(db, config.writeTimeoutMs, reader),
  new DeliveryLogStore(db, config.writeTimeoutMs, reader),
  config.webhooks,
  queues.get('webhookDelivery'),
);
// Uses of keys are noted in memory and written in one UPDATE per interval (key-usage.ts).
const keyUsage = new KeyUsage(db, config.keyLastUsedFlushMs, log, config.writeTimeoutMs);
const keys = new KeyStore(db, config.keyCacheTtlMs, {
  lookupTimeoutMs: config.requestTimeoutMs,
  writeTimeoutMs: config.writeTimeoutMs,
  usage: keyUsage,
  reader,
});
let shuttingDown = false;
const readiness = new Readiness();
const rehearsal = rehearsalToken();

const app = createApp({
  config,
  log,
  db,
  reader,
  redis,
  keys,
  templateService: new TemplateService(templates),
  runs,
  runService,
  bulkService: new BulkService(
    new BulkStore(db, config.writeTimeoutMs),
    queues.get('bulkAction'),
    templates,
  ),
  scheduleService: new ScheduleService(
    new ScheduleStore(db, config.writeTimeoutMs, eventSignal.committed),
    templates,
    templateResolver(templates),
    (organizationId) => settings.cachedTimeZone(organizationId),
    notifier,
    new SecondTimers(queues.get('scheduleTick')),
  ),
  migrationService: new MigrationService(
    templates,
    runs,
    (organizationId) => settings.cachedTimeZone(organizationId),
    new DueTimers(queues.get('stepDue')),
  ),
  webhookService,
  keyService: new KeyService(keys),
  retentionService: new RetentionService(
    new RunDeletionStore(db, config.writeTimeoutMs, eventSignal.committed),
    settings,
    config.retention.defaultDays,
  ),
  insightService: new InsightService(new InsightReads(db, reader), templates, (organizationId) =>
    settings.cachedTimeZone(organizationId),
  ),
  streams: { hub: streamHub, store: streamStore },
  isShuttingDown: () => shuttingDown,
  isWarm: () => readiness.warm,
  rehearsalToken: rehearsal,
  // The operators' board shows every kind's queue; without it the others stay unopened.
  boardQueues: config.operatorToken ? queues.all().map((q) => q.queue) : [],
});

keyUsage.start();
// The first check decides which replicas start in service; until then reads use the primary.
void replicas?.start();
streamHub.start();
registerProcessGauges({
  db,
  pools: { main: db, batch: batchDb },
  redisPing: () => redis.ping(),
});
const metricsServer = isSupervisedApiProcess()
  ? reportMetricsToSupervisor()
  : startMetricsServer(config.metricsPort, log);

const server = createServer(app.callback());
answerClientErrors(server, log);
server.keepAliveTimeout = 5000;
listenApi(server, config.port, (port) => {
  log.info('listening', { port, basePath: config.basePath });
  // Listening (/healthz answers), ready only once warm: /readyz says 503 until then.
  void readiness.warmUp(
    {
      pools: [db, batchDb],
      redis: [redis],
      queues: [queues.get('applyRuns').queue],
      rehearse: async () => {
        rehearseCreates(500);
        const url = `http://127.0.0.1:${port}${config.basePath}/create-workflow-run`;
        await rehearseRequests(url, rehearsal, rehearsalBody(), 1000);
      },
      log,
    },
    () => shuttingDown,
  );
});

onShutdown(log, config.shutdownTimeoutMs, async () => {
  shuttingDown = true;
  // Open streams would hold their connections to the end: each is ended (its client resumes
  // elsewhere with Last-Event-ID), so closing the server waits only for real requests.
  await streamHub.close();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
  await closed;
  clearTimeout(force);
  await runService.drain();
  // After the last request: the uses it noted are written too.
  await keyUsage.stop();
  await queues.close();
  redis.disconnect();
  connections.close();
  metricsServer?.close();
  await replicas?.close();
  await Promise.all([db.destroy(), batchDb.destroy()]);
});
