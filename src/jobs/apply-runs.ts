// Job kind "apply runs": an organization's turn. Its job names only the organization; the worker
// reads that organization's oldest owed runs from MySQL and applies the
// change each one has waiting (a start, a step completion). The processor is
// workers/processors/apply-runs.ts, and src/runs/run-notifier.ts gathers the API's changes into
// few enqueues.
//
// Fair share: an organization has at most one turn queued and one being worked at any time
// (BullMQ deduplication by organization, keepLastIfActive), and a turn that finds more than it
// may take asks for the organization's next turn, which joins the queue behind every turn
// already waiting. So organizations with owed runs take turns, round robin, each turn a bounded
// number of runs (TURN_RUNS in the processor): a backlog of 100,000 in one organization is one queued job, and another
// organization's run waits for at most the turns ahead of it, never for that backlog.
import type { Config } from '../config.js';
import { retries, TRIM, type JobKind, type NewJob } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';

export interface ApplyRunsData {
  organizationId: string;
}

const NAME = 'apply';

export const applyRunsJob: JobKind<ApplyRunsData, string> = {
  queue: '{workflow-runs}',
  jobName: NAME,
  concurrency: (config: Config) => config.workerConcurrency,
  options: (config: Config) => ({ ...retries(config), ...TRIM }),
  // One job per organization. Added while the organization's turn waits: a no-op (that turn
  // will read the runs). Added while it is worked: kept, and queued once that turn ends (the
  // turn may have read before these runs were committed). The job id is BullMQ's own.
  jobs(organizationIds) {
    return [...new Set(organizationIds)].map((organizationId): NewJob<ApplyRunsData> => ({
      name: NAME,
      data: { organizationId },
      opts: { deduplication: { id: `turn:${organizationId}`, keepLastIfActive: true } },
    }));
  },
  enqueueTimeoutMs: 1000,
  notTaken: 'enqueue failed; the reconciler will give these organizations a turn',
  items: 'organizations',
};

/** The apply-runs queue of a process: it takes organization ids. */
export type RunJobs = KindQueue<ApplyRunsData, string>;
