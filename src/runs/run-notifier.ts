// Tells workers which organizations have runs to apply (src/jobs/apply-runs.ts: one turn per
// organization). A notification is best effort by design (kind-queue.ts in src/jobs/): the
// change is already committed in MySQL, and the reconciler gives a turn to every organization
// whose runs wait longer than they should, so a Redis outage delays work but never loses it.
import type { RunJobs } from '../jobs/apply-runs.js';

export class RunNotifier {
  /** Organizations posted while an enqueue was in flight: they go out together in the next. */
  private posted = new Set<string>();
  private sending: Promise<void> | null = null;

  constructor(private readonly jobs: RunJobs) {}

  /**
   * Notifies without waiting, for callers that have already answered. While one enqueue is in
   * flight, later organizations are held and sent together by the next: under load one Redis
   * round trip serves many committed batches instead of one each.
   */
  post(organizationIds: Iterable<string>): void {
    for (const id of organizationIds) this.posted.add(id);
    if (this.posted.size > 0 && !this.sending) this.sending = this.sendPosted();
  }

  /** Resolves once every posted organization has been handed to Redis or given up on. */
  async idle(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async sendPosted(): Promise<void> {
    try {
      while (this.posted.size > 0) {
        const organizationIds = [...this.posted];
        this.posted = new Set();
        await this.jobs.enqueue(organizationIds); // never rejects: a failure is logged
      }
    } finally {
      this.sending = null;
    }
  }

  /** Enqueues the organization's turn now; resolves false (and logs) when Redis did not take it. */
  notify(organizationId: string): Promise<boolean> {
    return this.jobs.enqueue([organizationId]);
  }
}
