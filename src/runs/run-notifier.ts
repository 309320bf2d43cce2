// Tells workers to look at runs. A notification is best effort by design: the change is
// already committed in MySQL, and the reconciler enqueues again whatever is not applied in
// time, so a Redis outage delays work but never loses it.
import type { Queue } from 'bullmq';
import type { Logger } from '../logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import { addJobs } from '../queue.js';
import { NOTIFY_BATCH, applyRunsJobId, type ApplyRunsData } from '../jobs/apply-runs.js';

export interface RunChange {
  runId: string;
  seq: number;
}

export class RunNotifier {
  /** Changes posted while an enqueue was in flight: they go out together in the next one. */
  private posted: RunChange[] = [];
  private sending: Promise<void> | null = null;

  constructor(
    private readonly queue: Queue<ApplyRunsData>,
    private readonly log: Logger,
    private readonly timeoutMs = 1000,
  ) {}

  /**
   * Notifies without waiting, for callers that have already answered. While one enqueue is in
   * flight, later changes are held and sent together by the next: under load one Redis round
   * trip (and one BullMQ pipeline) serves many committed batches instead of one each.
   */
  post(changes: RunChange[]): void {
    if (changes.length === 0) return;
    for (const change of changes) this.posted.push(change);
    if (!this.sending) this.sending = this.sendPosted();
  }

  /** Resolves once every posted change has been handed to Redis or given up on (shutdown). */
  async idle(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async sendPosted(): Promise<void> {
    try {
      while (this.posted.length > 0) {
        const changes = this.posted;
        this.posted = [];
        await this.notify(changes); // never rejects: a failure is logged and left to the reconciler
      }
    } finally {
      this.sending = null;
    }
  }

  /**
   * Enqueues one job per NOTIFY_BATCH changes; resolves false (and logs) when Redis could not
   * take them.
   */
  async notify(changes: RunChange[], jobIdSuffix = ''): Promise<boolean> {
    if (changes.length === 0) return true;
    try {
      const jobs = [];
      for (let i = 0; i < changes.length; i += NOTIFY_BATCH) {
        const chunk = changes.slice(i, i + NOTIFY_BATCH);
        jobs.push({
          name: 'apply',
          data: { runIds: chunk.map((c) => c.runId) },
          opts: { jobId: applyRunsJobId(chunk[0]!, chunk.length, jobIdSuffix) },
        });
      }
      await withTimeout(addJobs(this.queue, jobs), this.timeoutMs, 'enqueue');
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
