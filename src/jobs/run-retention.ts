// Job kind "run retention": delete the finished runs whose organization's retention ended,
// in small batches, and the delivery log and audit entries as old (workers/processors/
// run-retention.ts, src/retention/retention-pass.ts). MySQL decides what is due: the job only
// says "look now". Every worker adds it every RUN_RETENTION_INTERVAL_MS under one job id, so
// while one is queued or running another add is a no-op and passes never overlap; a job lost
// with Redis is added again at the next interval, and nothing it had to do is lost.
import type { Logger } from '../logger.js';
import { Periodic } from '../lib/periodic.js';
import type { JobKind } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';

export interface RunRetentionData {
  /** When the job was asked for (ms since the epoch); for the logs only. */
  at: number;
}

const NAME = 'expire-runs';

/** One job at a time, whoever adds it. */
export const RUN_RETENTION_JOB_ID = 'retention';

export const runRetentionJob: JobKind<RunRetentionData, number> = {
  queue: '{run-retention}',
  jobName: NAME,
  concurrency: () => 1,
  options: () => ({
    // No retries of its own: the next interval's job is the retry. Removed once done, so the
    // id is free for the next one (a failed job too: it must not hold the id for a week).
    attempts: 1,
    removeOnComplete: true,
    removeOnFail: true,
  }),
  jobs: (ats) => [{ name: NAME, data: { at: ats[0]! }, opts: { jobId: RUN_RETENTION_JOB_ID } }],
  enqueueTimeoutMs: 2000,
  notTaken: 'run retention not enqueued; the next interval will',
  items: 'passes',
};

export type RunRetentionJobs = KindQueue<RunRetentionData, number>;

/** Adds the retention job every interval (in every worker); the first soon after start. */
export function retentionTicker(jobs: RunRetentionJobs, intervalMs: number, log: Logger): Periodic {
  return new Periodic(() => jobs.enqueue([Date.now()]), {
    intervalMs,
    onError: (err) => log.warn('run retention not enqueued', { err }),
  });
}
