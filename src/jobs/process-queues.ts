// The queues a process adds jobs to, one per kind in the list (kinds.ts), each opened on first
// use: a process opens a connection only for a queue it uses, so the API opens the queues it
// does not add to only when the operators' board shows them. Closed together at shutdown.
import type { Config } from '../config.js';
import { throttledWarn } from '../lib/process.js';
import type { Logger } from '../logger.js';
import type { RedisConnections } from '../queue.js';
import type { JobKind } from './job-kind.js';
import { KindQueue } from './kind-queue.js';
import { JOB_KIND_NAMES, JOB_KINDS, type JobKindName, type KindQueues } from './kinds.js';

export class ProcessQueues {
  private readonly opened: Partial<KindQueues> = {};

  constructor(
    private readonly connections: RedisConnections,
    private readonly config: Config,
    private readonly log: Logger,
    /** Starts this process's connection names, e.g. "wrs-api" (as CLIENT LIST shows them). */
    private readonly owner: string,
  ) {}

  /** The named kind's queue, opened now if it is not yet. */
  get<K extends JobKindName>(name: K): KindQueues[K] {
    return (this.opened[name] ??= this.open(name));
  }

  /** Every kind's queue, in the list's order (opening those not yet open). */
  all(): Array<KindQueues[JobKindName]> {
    return JOB_KIND_NAMES.map((name) => this.get(name));
  }

  /** Closes the queues opened; errors are of no use at shutdown. */
  async close(): Promise<void> {
    await Promise.all(
      Object.values(this.opened).map((q) => q.queue.close().catch(() => undefined)),
    );
  }

  private open<K extends JobKindName>(name: K): KindQueues[K] {
    const kind: JobKind<unknown, never> = JOB_KINDS[name];
    const queue = this.connections.queue(kind, this.config, `${this.owner}-${name}`);
    queue.on('error', throttledWarn(this.log, 'queue error'));
    // For a generic K, TypeScript sees JOB_KINDS[name] only as one of the kinds and cannot tell
    // that the queue made from it is KindQueues[K]: the cast restates what the map says.
    return new KindQueue(name, kind, queue, this.log) as KindQueues[K];
  }
}
