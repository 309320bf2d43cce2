// A worker process: serves every kind of job (src/jobs/kinds.ts), each with its own BullMQ
// worker and concurrency, and reconciles what Redis may have lost. Start as many as you like;
// they share the work through BullMQ.
import { type Processor, Worker } from 'bullmq';
import { loadConfigOrExit } from '../src/config.js';
import { createDb } from '../src/db.js';
import { IdempotencyStore } from '../src/idempotency/idempotency-keys.js';
import { KeyStore } from '../src/auth/key-store.js';
import { JOB_KIND_NAMES, JOB_KINDS, type Processors } from '../src/jobs/kinds.js';
import { ProcessQueues } from '../src/jobs/process-queues.js';
import { onShutdown, throttledWarn } from '../src/lib/process.js';
import { withTimeout } from '../src/lib/with-timeout.js';
import { createLogger } from '../src/logger.js';
import { RedisConnections } from '../src/queue.js';
import { DueTimers } from '../src/runs/due-timers.js';
import { RunStore } from '../src/runs/run-store.js';
import { EventSignal, eventsChannel, listenForSignals } from '../src/streams/event-signal.js';
import { applyRunsProcessor } from './processors/apply-runs.js';
import { TurnPacer } from './turn-pacer.js';
import { bulkActionProcessor } from './processors/bulk-action.js';
import { BulkRunner } from '../src/bulk/bulk-runner.js';
import { BulkStore } from '../src/bulk/bulk-store.js';
import { TemplateStore } from '../src/templates/template-store.js';
import { stepDueProcessor } from './processors/step-due.js';
import { scheduleTickProcessor } from './processors/schedule-tick.js';
import { ScheduleRunner, templateResolver } from '../src/schedules/schedule-runner.js';
import { ScheduleStore } from '../src/schedules/schedule-store.js';
import { SecondTimers } from '../src/jobs/second-timers.js';
import { webhookDeliveryProcessor } from './processors/webhook-delivery.js';
import { runRetentionProcessor } from './processors/run-retention.js';
import { retentionTicker } from '../src/jobs/run-retention.js';
import { RunDeletionStore } from '../src/retention/deletion-store.js';
import { RetentionPass } from '../src/retention/retention-pass.js';
import { SettingsStore } from '../src/retention/settings-store.js';
import { Deliverer } from '../src/webhooks/deliverer.js';
import { DeliveryStore } from '../src/webhooks/delivery-store.js';
import { Dispatcher } from '../src/webhooks/dispatcher.js';
import { InsightFolder } from '../src/insights/insight-folder.js';
import { InsightStore } from '../src/insights/insight-store.js';
import { StreamStore } from '../src/streams/stream-store.js';
import { OutboxStore } from '../src/webhooks/outbox-store.js';
import { toSummary } from '../src/runs/run-views.js';
import { Reconciler } from './reconciler.js';
import { whenReady } from './readiness.js';
import { RunApplier } from './run-applier.js';
import { registerProcessGauges } from '../src/metrics/gauges.js';
import { startMetricsServer } from '../src/metrics/server.js';

const config = loadConfigOrExit();
const log = createLogger(config.logLevel, { proc: 'worker', pid: process.pid });
// Several statements a query: a batch's change and its events go to MySQL in one round trip.
// Kept open whole (opened before "worker ready": readiness.ts), as an API process's pools are.
const db = createDb(config, log, { multipleStatements: true, poolMin: config.dbPoolMax });
const connections = new RedisConnections(config);
// After each commit that wrote events, the API processes' live streams are woken through Redis.
const eventsRedis = connections.request('wrs-worker-events');
eventsRedis.on('error', throttledWarn(log, 'redis connection error (event signal)'));
const eventSignal = new EventSignal(eventsRedis, eventsChannel(config.queuePrefix), log);
const templates = new TemplateStore(db, config.writeTimeoutMs);
const store = new RunStore(db, {
  writeTimeoutMs: config.writeTimeoutMs,
  oneTrip: true,
  onEventsCommitted: eventSignal.committed,
  templates,
});

// A worker adds jobs of every kind: each kind's queue is opened here (and counted by wrs_jobs).
const queues = new ProcessQueues(connections, config, log, 'wrs-worker');
const dueTimers = new DueTimers(queues.get('stepDue'));
const deliveries = new DeliveryStore(db, config.writeTimeoutMs);
const deliveryJobs = queues.get('webhookDelivery');
const deliverer = new Deliverer(
  deliveries,
  {
    summary: async (runId) => {
      const [row] = await store.findRowsByIds([runId]);
      if (!row) throw new Error(`run ${runId} not found`);
      return toSummary(row);
    },
  },
  deliveryJobs,
  config.webhooks,
  log,
);
// The turns a pass owes go to BullMQ, and to this process's own turns of those endpoints, if
// any is being worked: such a turn takes the new deliveries at once instead of ending first.
const dispatcher = new Dispatcher(
  new OutboxStore(db, config.writeTimeoutMs),
  {
    enqueue: (turns, options) => {
      deliverer.dispatched(turns.map((turn) => turn.endpointId));
      return deliveryJobs.enqueue(turns, options);
    },
  },
  config.webhooks.dispatchIntervalMs,
  log,
);
// After a batch's changes are committed: their due timers, and their events sent on at once.
const applier = new RunApplier(store, async (runs) => {
  dispatcher.wake();
  await dueTimers.schedule(runs);
});

// Set at shutdown: bulk actions and retention passes stop between batches.
let stopping = false;
// Bulk actions: after each committed batch, retried runs are owed to the appliers, moved runs'
// steps get their timers, and every changed run's events go out at once.
const bulkActions = new BulkStore(db, config.writeTimeoutMs, {
  oneTrip: true,
  onEventsCommitted: eventSignal.committed,
});
const settings = new SettingsStore(db, config.writeTimeoutMs);
const bulkRunner = new BulkRunner({
  actions: bulkActions,
  runs: store,
  templates,
  timeZoneOf: (organizationId) => settings.cachedTimeZone(organizationId),
  afterBatch: async (action, changed) => {
    dispatcher.wake();
    if (action === 'retry' && changed.length > 0) {
      await queues.get('applyRuns').enqueue(changed.map((run) => run.organizationId));
    }
    if (action === 'migrate') await dueTimers.schedule(changed);
  },
  log,
  batchSize: config.bulkBatchSize,
});
// Schedules: a sweep fires what is owed; after its commit the runs go to the appliers, their
// events out at once, and the schedules' next wake times get their timers.
const scheduleStore = new ScheduleStore(db, config.writeTimeoutMs, eventSignal.committed);
const scheduleTimers = new SecondTimers(queues.get('scheduleTick'));
const scheduleRunner = new ScheduleRunner({
  store: scheduleStore,
  templateFor: templateResolver(templates),
  timeZoneOf: (organizationId) => settings.cachedTimeZone(organizationId),
  afterSweep: async ({ runs, wakes }) => {
    if (runs.length > 0) {
      dispatcher.wake();
      await queues.get('applyRuns').enqueue(runs.map((run) => run.organizationId));
    }
    await scheduleTimers.at(wakes);
  },
  log,
});
const retentionPass = new RetentionPass(
  new RunDeletionStore(db, config.writeTimeoutMs),
  settings,
  config.retention,
  log,
  () => stopping,
);

/**
 * Turns of applying runs in progress in this worker, and when the last ended: the insights'
 * fold gives way to them, and to the next turn of a steady flow (the gap between turns).
 */
let applying = 0;
let appliedAt = 0;
const NEXT_TURN_MS = 1000;
const applyRuns = applyRunsProcessor({
  store,
  applier,
  jobs: queues.get('applyRuns'),
  log,
  pacer: new TurnPacer(config.workerGatherMs),
});

/** One processor per kind of job: the compiler asks for one for each kind in the list. */
const processors: Processors = {
  applyRuns: async (job) => {
    applying++;
    try {
      return await applyRuns(job);
    } finally {
      applying--;
      appliedAt = Date.now();
    }
  },
  stepDue: stepDueProcessor({ store, dueTimers }),
  scheduleTick: scheduleTickProcessor({ runner: scheduleRunner }),
  webhookDelivery: webhookDeliveryProcessor({ deliverer, stopping: () => stopping }),
  bulkAction: bulkActionProcessor({ runner: bulkRunner, stopping: () => stopping }),
  runRetention: runRetentionProcessor({ pass: retentionPass }),
};

const workers = JOB_KIND_NAMES.map((name) => {
  const kind = JOB_KINDS[name];
  // processors[name] takes this kind's data (Processors checks it), but for a name of the union
  // TypeScript cannot tie the two together, so BullMQ's Worker gets it untyped.
  const worker = new Worker(kind.queue, processors[name] as Processor, {
    connection: connections.bull('worker', `wrs-worker-${name}`),
    prefix: config.queuePrefix,
    concurrency: kind.concurrency(config),
    lockDuration: config.workerLockMs,
    stalledInterval: Math.max(1000, Math.floor(config.workerLockMs / 2)),
    maxStalledCount: 5,
  });
  worker.on('error', throttledWarn(log, `${name} worker error`));
  worker.on('failed', (job, err) => {
    if (job) log.warn('job attempt failed', { kind: name, attempt: job.attemptsMade, err });
  });
  return worker;
});

const reconciler = new Reconciler(
  {
    runs: { store, jobs: queues.get('applyRuns'), timers: dueTimers },
    idempotencyKeys: new IdempotencyStore(db),
    deliveries: { store: deliveries, jobs: deliveryJobs },
    apiKeys: new KeyStore(db, 0, { writeTimeoutMs: config.writeTimeoutMs }),
    bulkActions: { store: bulkActions, jobs: queues.get('bulkAction') },
    schedules: {
      nextWake: () => scheduleStore.nextWake(),
      sweepAll: (now) => scheduleRunner.sweepAll(now),
    },
  },
  { intervalMs: config.reconcileIntervalMs, afterMs: config.reconcileAfterMs },
  log,
);
// The insights' rollups, folded from the events behind a cursor (one worker at a time).
const insightFolder = new InsightFolder(
  new InsightStore(db, config.writeTimeoutMs, (organizationId) =>
    settings.cachedTimeZone(organizationId),
  ),
  new StreamStore(db, config.writeTimeoutMs),
  config.streams.gapGraceMs,
  config.insightFoldIntervalMs,
  log,
  {
    busy: () => applying > 0 || Date.now() - appliedAt < NEXT_TURN_MS,
    deferMs: config.insightFoldDeferMs,
    share: config.insightFoldBusyPercent / 100,
  },
);
reconciler.start();
dispatcher.start();
insightFolder.start();
// Events any process committed (the API's cancels among them) wake the dispatcher too, not
// only this worker's own commits: they go out within milliseconds, not at the next pass.
const signals = connections.subscriber('wrs-worker-signals');
listenForSignals(signals, eventsChannel(config.queuePrefix), log, () => {
  dispatcher.signalled();
  insightFolder.signalled();
});
const retention = retentionTicker(queues.get('runRetention'), config.retention.intervalMs, log);
retention.start(Math.min(1000, config.retention.intervalMs));
registerProcessGauges({
  db,
  pools: { main: db },
  redisPing: () => queues.get('applyRuns').queue.getJobCounts('waiting'), // a Redis round trip
  queues: queues.all(),
});
const metricsServer = startMetricsServer(config.metricsPort, log);
log.info('worker started', {
  kinds: JOB_KIND_NAMES,
  concurrency: config.workerConcurrency,
  queuePrefix: config.queuePrefix,
});
// Started is not yet working: every kind's BullMQ connections still connect and load their
// scripts, and the MySQL pool makes its first connection. "worker ready" says when jobs are
// taken, which is when a worker that was down is back (and what the bench times drains from).
void whenReady({
  workers,
  db,
  stopped: () => stopping,
  notReady: throttledWarn(log, 'worker not ready yet'),
}).then(
  (ms) => {
    if (ms !== undefined) log.info('worker ready', { ms });
  },
  (err: unknown) => {
    if (!stopping) log.warn('worker not ready', { err });
  },
);

onShutdown(log, config.shutdownTimeoutMs, async () => {
  stopping = true; // bulk actions and retention passes stop between batches
  await Promise.all([reconciler.stop(), dispatcher.stop(), insightFolder.stop(), retention.stop()]);
  // Finish the jobs in hand, within the timeout; what is not finished is owed in MySQL and
  // picked up again by another worker (stalled job) or the reconciler.
  await Promise.all(
    workers.map((worker) =>
      withTimeout(worker.close(), config.shutdownTimeoutMs, 'worker close').catch(
        async (err: unknown) => {
          log.warn('active jobs did not finish in time', { err });
          await worker.close(true);
        },
      ),
    ),
  );
  await queues.close();
  signals.disconnect();
  eventsRedis.disconnect();
  connections.close();
  metricsServer?.close();
  await db.destroy();
});
