// Baseline of the worker benchmark: a bare BullMQ worker with the real worker's concurrency,
// connection and lock settings, doing one guarded UPDATE per job and nothing else (no read,
// no run document, no batching). Its backlog has one job per run, naming the run (on the runs
// queue, which it has to itself during its turn of the benchmark).
import { Worker } from 'bullmq';
import { loadConfigOrExit } from '../../src/config.js';
import { createDb } from '../../src/db.js';
import { applyRunsJob } from '../../src/jobs/apply-runs.js';
import { RedisConnections } from '../../src/queue.js';
import { exitWithParent } from '../child.js';

exitWithParent();
const config = loadConfigOrExit();
const db = createDb(config);

/** What the bare worker's jobs carry: one run each. */
export interface OneRunJob {
  runIds: string[];
}

const worker = new Worker<OneRunJob>(
  applyRunsJob.queue,
  async (job) => {
    await db.raw(
      `UPDATE workflow_runs SET status = 'active', applied_seq = 1, pending_since = NULL,
         last_activity = ? WHERE id = ? AND applied_seq = 0`,
      [new Date(), job.data.runIds[0] ?? null],
    );
  },
  {
    connection: new RedisConnections(config).bull('worker', 'wrs-bench-bare-worker'),
    prefix: config.queuePrefix,
    concurrency: config.workerConcurrency,
    lockDuration: config.workerLockMs,
    stalledInterval: Math.max(1000, Math.floor(config.workerLockMs / 2)),
    maxStalledCount: 5,
  },
);
worker.on('error', (err) => process.stderr.write(`bare worker error: ${err.message}\n`));
process.stdout.write(
  JSON.stringify({ msg: 'worker started', concurrency: config.workerConcurrency }) + '\n',
);
process.on('SIGTERM', () => {
  void worker
    .close()
    .then(() => db.destroy())
    .finally(() => process.exit(0));
});
