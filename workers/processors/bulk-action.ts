// Processor of "bulk action" jobs (src/jobs/bulk-action.ts): works the action batch after
// batch until it is completed. Stopped between batches when the worker shuts down: what is
// left is resumed from MySQL by the reconciler's next job for the action.
import type { Job } from 'bullmq';
import type { BulkRunner } from '../../src/bulk/bulk-runner.js';
import type { BulkActionData } from '../../src/jobs/bulk-action.js';

export function bulkActionProcessor(deps: { runner: BulkRunner; stopping: () => boolean }) {
  return async (job: Job<BulkActionData>) => deps.runner.run(job.data.bulkActionId, deps.stopping);
}
