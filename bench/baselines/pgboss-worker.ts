// The peer's worker (baseline (c) of the worker and end-to-end phases): pg-boss's work() takes
// the start-run jobs in batches and moves their runs to active with one guarded multi-row
// UPDATE per batch; pg-boss completes the batch's jobs when the handler returns. Woken by
// LISTEN/NOTIFY as jobs are sent, polling every 0.5 s (pg-boss's least) as a floor, and
// fetching again at once while batches come back full (a backlog). Batch size and local
// concurrency are the best this machine gave the peer (PEER_BATCH_SIZE, PEER_CONCURRENCY).
import pg from 'pg';
import { PgBoss, type Job } from 'pg-boss';
import { exitWithParent } from '../child.js';
import { PEER_QUEUE } from '../peer/peer-db.js';

exitWithParent();
const connectionString = process.env.PEER_DATABASE_URL ?? '';
const BATCH = Number(process.env.PEER_BATCH_SIZE ?? 200);
const CONCURRENCY = Number(process.env.PEER_CONCURRENCY ?? 2);
const pool = new pg.Pool({ connectionString, max: 4 });
const boss = new PgBoss({
  connectionString,
  max: 4,
  supervise: false,
  schedule: false,
  useListenNotify: true,
});
boss.on('error', (err) => process.stderr.write(`pg-boss: ${err.message}\n`));
await boss.start();

async function startRuns(jobs: Array<Job<{ runId: string }>>): Promise<void> {
  // The same change as the service's worker makes to a run that starts: status and the
  // last-activity time, only for a run still pending (a job run twice changes nothing).
  await pool.query({
    name: 'start-runs',
    text: `UPDATE workflow_runs SET status = 'active', last_activity = now()
           WHERE id = ANY($1) AND status = 'pending'`,
    values: [jobs.map((job) => job.data.runId)],
  });
}

await boss.work<{ runId: string }>(
  PEER_QUEUE,
  {
    batchSize: BATCH,
    localConcurrency: CONCURRENCY,
    pollingIntervalSeconds: 0.5,
    notifyPollingIntervalSeconds: 0.5,
    burstWhenBatchFull: true,
  },
  startRuns,
);
process.stdout.write(JSON.stringify({ msg: 'worker started', batchSize: BATCH }) + '\n');
process.on('SIGTERM', () => {
  void Promise.all([boss.stop({ graceful: false }), pool.end()]).finally(() => process.exit(0));
});
