// One kind's queue in this process, and the one enqueue every kind uses. An enqueue is best
// effort by design: it comes after the commit that made the work owed, and the reconciler
// enqueues again from MySQL whatever Redis did not take, so a Redis outage delays work but
// never loses it. Hence enqueue never throws into a caller that has already committed.
import type { JobsOptions, Queue } from 'bullmq';
import type { Logger } from '../logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import type { EnqueueOptions, JobKind, NewJob } from './job-kind.js';

/** Shared by the calls that give no options, so the hot paths allocate none. */
const NO_OPTIONS: EnqueueOptions = Object.freeze({});

export class KindQueue<Data, Item> {
  /** The timeout's message, made once rather than per enqueue. */
  private readonly what: string;

  constructor(
    /** The kind's name in the list (kinds.ts): the gauges' label. */
    readonly name: string,
    readonly kind: JobKind<Data, Item>,
    // The data type is given (BullMQ's fourth parameter) so that it is Data itself, not
    // BullMQ's ExtractDataType<Data>, which TypeScript cannot resolve for a type parameter.
    readonly queue: Queue<Data, unknown, string, Data>,
    private readonly log: Logger,
    private readonly timeoutMs = kind.enqueueTimeoutMs,
  ) {
    this.what = `enqueue ${kind.queue}`;
  }

  /**
   * Adds the jobs for these items; resolves false (and logs) when Redis did not take them in
   * time. Never rejects.
   */
  async enqueue(items: readonly Item[], options = NO_OPTIONS): Promise<boolean> {
    if (items.length === 0) return true;
    try {
      const jobs = this.kind.jobs(items, options);
      await withTimeout(addJobs(this.queue, jobs), this.timeoutMs, this.what);
      return true;
    } catch (err) {
      this.log.warn(this.kind.notTaken, { err, [this.kind.items]: items.length });
      return false;
    }
  }
}

/** The two ways a BullMQ queue takes jobs (any Queue<D> has them). */
interface JobAdder<D> {
  add(name: string, data: D, opts?: JobsOptions): Promise<unknown>;
  addBulk(jobs: Array<NewJob<D>>): Promise<unknown>;
}

/**
 * Adds jobs to a queue: one by a single script call, several together. addBulk builds an
 * ioredis pipeline, which copies every BullMQ script onto it and costs more CPU than the job
 * itself when there is only one.
 */
function addJobs<D>(queue: JobAdder<D>, jobs: Array<NewJob<D>>): Promise<unknown> {
  const [only] = jobs;
  if (jobs.length === 1 && only) return queue.add(only.name, only.data, only.opts);
  return queue.addBulk(jobs);
}
