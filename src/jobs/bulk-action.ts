// Job kind "bulk action": works one bulk cancel or retry (src/bulk/) batch after batch until it
// is completed (workers/processors/bulk-action.ts). The job names only the action; MySQL holds
// its filter, cursor and counts, so a job taken over from a dead worker, or given again by the
// reconciler after Redis lost it, resumes after the last batch committed. One job per action
// at a time (BullMQ deduplication by the action's id, released when the job ends), so the
// reconciler may offer a job for every running action on each pass.
import { retries, TRIM, type JobKind } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';

export interface BulkActionData {
  bulkActionId: string;
}

const NAME = 'bulk-action';

export const bulkActionJob: JobKind<BulkActionData, string> = {
  queue: '{bulk-actions}',
  jobName: NAME,
  concurrency: () => 2,
  options: (config) => ({ ...retries(config), ...TRIM }),
  jobs: (ids) =>
    [...new Set(ids)].map((bulkActionId) => ({
      name: NAME,
      data: { bulkActionId },
      opts: { deduplication: { id: `bulk:${bulkActionId}` } },
    })),
  enqueueTimeoutMs: 1000,
  notTaken: 'bulk actions not enqueued; the reconciler will enqueue them',
  items: 'bulkActions',
};

/** The bulk-action queue of a process: it takes bulk action ids. */
export type BulkActionJobs = KindQueue<BulkActionData, string>;
