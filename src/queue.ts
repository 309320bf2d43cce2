// Redis connections, and the BullMQ queue of each kind of job (src/jobs/). Jobs carry only ids:
// MySQL holds the truth, a job only says where to look.
//
// Redis is one server (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES). In a cluster, a
// script may only touch keys of one hash slot: every queue name carries a hash tag (JobKind),
// so each queue's keys live together, and so do a rate-limit key's windows (window-leases.ts).
import { type BulkJobOptions, type ConnectionOptions, type JobsOptions, Queue } from 'bullmq';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from './config.js';
import type { JobKind } from './jobs/job-kind.js';

/** A connection to a single Redis or to a cluster: both answer the same commands. */
export type RedisClient = Redis | Cluster;

type RedisConfig = Pick<Config, 'redisUrl' | 'redisClusterNodes'>;
type Role = 'producer' | 'worker';

// Shared by every connection: the v5 wire protocol (BullMQ's scripts are written against RESP2
// replies) and reconnecting with a back-off capped at 2 s.
const WIRE_PROTOCOL = 2;
const reconnectDelay = (times: number) => Math.min(100 * 2 ** Math.min(times, 6), 2000);

/**
 * How each role talks to Redis. Producers (the API's request path) fail fast while Redis is
 * away, so a request never waits on it; workers retry forever, as the BullMQ production guide
 * asks (maxRetriesPerRequest: null).
 */
function roleOptions(role: Role | 'request') {
  if (role === 'worker') return { enableOfflineQueue: true, maxRetriesPerRequest: null };
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    ...(role === 'request' ? { commandTimeout: 1000 } : {}),
  };
}

function clusterClient(
  nodes: NonNullable<Config['redisClusterNodes']>,
  role: Role | 'request',
  name: string,
): Cluster {
  const { enableOfflineQueue, ...perCommand } = roleOptions(role);
  const redisOptions: RedisOptions = {
    protocol: WIRE_PROTOCOL,
    connectionName: name,
    ...perCommand,
  };
  return new Cluster(nodes, {
    enableOfflineQueue,
    clusterRetryStrategy: reconnectDelay,
    redisOptions,
  });
}

/**
 * Opens the connections of one process and closes them at the end. BullMQ opens (and closes)
 * its own connections from options for a single Redis; a cluster client must be handed to it
 * ready-made, and BullMQ leaves such a shared client open, so this closes it.
 */
export class RedisConnections {
  private readonly clusters: Cluster[] = [];

  constructor(private readonly config: RedisConfig) {}

  get isCluster(): boolean {
    return this.config.redisClusterNodes !== undefined;
  }

  /** A connection for request-path commands (rate limit, readiness): fails at once when away. */
  request(name: string): RedisClient {
    const nodes = this.config.redisClusterNodes;
    if (nodes) return this.track(clusterClient(nodes, 'request', name));
    return new Redis(this.config.redisUrl, {
      protocol: WIRE_PROTOCOL,
      retryStrategy: reconnectDelay,
      connectionName: name,
      ...roleOptions('request'),
    });
  }

  /** What BullMQ's `connection` option gets for a queue or worker of this role. */
  bull(role: Role, name: string): ConnectionOptions {
    const nodes = this.config.redisClusterNodes;
    if (nodes) return this.track(clusterClient(nodes, role, name));
    return {
      url: this.config.redisUrl,
      protocol: WIRE_PROTOCOL,
      retryStrategy: reconnectDelay,
      connectionName: name,
      ...roleOptions(role),
    };
  }

  /** A producer's queue for one kind of job, adding jobs with the kind's options. */
  queue<D>(kind: JobKind<D>, config: Config, name: string): Queue<D> {
    return new Queue<D>(kind.queue, {
      connection: this.bull('producer', name),
      prefix: config.queuePrefix,
      defaultJobOptions: kind.options(config),
    });
  }

  /** Closes the cluster clients handed to BullMQ; call after the queues and workers closed. */
  close(): void {
    for (const cluster of this.clusters.splice(0)) cluster.disconnect();
  }

  private track(cluster: Cluster): Cluster {
    this.clusters.push(cluster);
    return cluster;
  }
}

/** A job to add: what Queue.addBulk takes. */
export interface NewJob<D> {
  name: string;
  data: D;
  opts?: BulkJobOptions;
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
export function addJobs<D>(queue: JobAdder<D>, jobs: Array<NewJob<D>>): Promise<unknown> {
  const [only] = jobs;
  if (jobs.length === 1 && only) return queue.add(only.name, only.data, only.opts);
  return queue.addBulk(jobs);
}
