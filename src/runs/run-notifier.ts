// Tells workers to look at runs. A notification is best effort by design (kind-queue.ts in
// src/jobs/): the change is already committed in MySQL, and the reconciler enqueues again
// whatever is not applied in time, so a Redis outage delays work but never loses it.
import type { RunChange, RunJobs } from '../jobs/apply-runs.js';

export class RunNotifier {
  /** Changes posted while an enqueue was in flight: they go out together in the next one. */
  private posted: RunChange[] = [];
  private sending: Promise<void> | null = null;

  constructor(private readonly jobs: RunJobs) {}

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
        await this.jobs.enqueue(changes); // never rejects: a failure is logged, the reconciler's
      }
    } finally {
      this.sending = null;
    }
  }

  /**
   * Enqueues the changes now (jobIdSuffix sets a retry's jobs apart); resolves false (and
   * logs) when Redis could not take them.
   */
  notify(changes: RunChange[], jobIdSuffix?: string): Promise<boolean> {
    return this.jobs.enqueue(changes, jobIdSuffix ? { suffix: jobIdSuffix } : undefined);
  }
}
