// Tells workers to look at runs. A notification is best effort by design: the change is
// already committed in MySQL, and the reconciler enqueues again whatever is not applied in
// time, so a Redis outage delays work but never loses it.
import type { Queue } from 'bullmq';
import type { Logger } from '../logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import { NOTIFY_BATCH, type RunJobData, runJobId } from '../queue.js';

export interface RunChange {
  runId: string;
  seq: number;
}

export class RunNotifier {
  constructor(
    private readonly queue: Queue<RunJobData>,
    private readonly log: Logger,
    private readonly timeoutMs = 1000,
  ) {}

  /**
   * Enqueues one job per NOTIFY_BATCH changes; resolves false (and logs) when Redis could not
   * take them.
   */
  async notify(changes: RunChange[], jobIdSuffix = ''): Promise<boolean> {
    if (changes.length === 0) return true;
    const jobs = [];
    for (let i = 0; i < changes.length; i += NOTIFY_BATCH) {
      const chunk = changes.slice(i, i + NOTIFY_BATCH);
      jobs.push({
        name: 'apply',
        data: { runIds: chunk.map((c) => c.runId) },
        opts: { jobId: runJobId(chunk[0]!, chunk.length, jobIdSuffix) },
      });
    }
    try {
      await withTimeout(this.queue.addBulk(jobs), this.timeoutMs, 'enqueue');
      return true;
    } catch (err) {
      this.log.warn('enqueue failed; the reconciler will pick these runs up', {
        err,
        runs: changes.length,
      });
      return false;
    }
  }
}
