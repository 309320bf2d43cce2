// What a kind of job is: the queue it travels on (one queue per kind, so each kind has its own
// workers, concurrency, attempts and backoff) and the options every job of the kind gets. A
// job only ever says where to look: MySQL holds the truth, and every processor is idempotent.
import type { JobsOptions } from 'bullmq';
import type { Config } from '../config.js';

export interface JobKind<Data> {
  /**
   * BullMQ queue name (under QUEUE_PREFIX), in braces: a Redis Cluster hash tag, so that every
   * key of the queue is in one slot, as BullMQ's multi-key scripts need.
   */
  readonly queue: string;
  /** Jobs a worker process handles at once, for this kind. */
  concurrency(config: Config): number;
  /** Options every job of this kind is added with (attempts, backoff, trimming). */
  options(config: Config): JobsOptions;
  /** Only for the type: what one job carries. */
  readonly data?: Data;
}

/** Trims finished jobs so Redis does not grow without end; MySQL keeps the history. */
export const TRIM = {
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
} as const;
