// What a kind of job is: the queue it travels on (one queue per kind, so each kind has its own
// workers, concurrency, attempts and backoff), the options every job of the kind gets, and how
// the things a caller has in hand become jobs with ids. A job only ever says where to look:
// MySQL holds the truth, and every processor is idempotent. Enqueueing is the same for every
// kind (kind-queue.ts); the list of kinds is kinds.ts.
import type { BulkJobOptions, JobsOptions } from 'bullmq';
import type { Config } from '../config.js';

/** A job to add: what Queue.addBulk takes. */
export interface NewJob<D> {
  name: string;
  data: D;
  opts?: BulkJobOptions;
}

/** What a caller may add to an enqueue: optional, and most calls give none. */
export interface EnqueueOptions {
  /** The time delays are counted from (ms since the epoch); now when not given. */
  now?: number;
}

/** `Data` is what one job carries; `Item` is what a caller enqueues (a run change, a second). */
export interface JobKind<Data, Item> {
  /**
   * BullMQ queue name (under QUEUE_PREFIX), in braces: a Redis Cluster hash tag, so that every
   * key of the queue is in one slot, as BullMQ's multi-key scripts need.
   */
  readonly queue: string;
  /** The name every job of this kind is added with (what Bull Board shows). */
  readonly jobName: string;
  /** Jobs a worker process handles at once, for this kind. */
  concurrency(config: Config): number;
  /** Options every job of this kind is added with (attempts, backoff, trimming). */
  options(config: Config): JobsOptions;
  /**
   * The jobs for these items (never empty when items are not). Each job id (or deduplication
   * id) names what its job is for, so that adding the same job again while BullMQ holds it is a
   * no-op.
   */
  jobs(items: readonly Item[], options: EnqueueOptions): Array<NewJob<Data>>;
  /** How long an enqueue waits for Redis before it gives up. */
  readonly enqueueTimeoutMs: number;
  /** The warning when Redis does not take the jobs; it says who makes up for them. */
  readonly notTaken: string;
  /** What the items are, as the count in that warning: runs, timers, deliveries. */
  readonly items: string;
}

/** BullMQ's own retries, for a failure of the service itself (MySQL away), with backoff. */
export function retries(config: Config): JobsOptions {
  return {
    attempts: config.jobAttempts,
    backoff: { type: 'exponential', delay: config.jobBackoffMs },
  };
}

/** Trims finished jobs so Redis does not grow without end; MySQL keeps the history. */
export const TRIM = {
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
} as const;
