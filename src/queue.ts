// Redis connections, and a BullMQ queue for a kind of job (src/jobs/, where jobs are added and
// the queues of a process are opened). Jobs carry only ids: MySQL holds the truth, a job only
// says where to look.
//
// Redis is one server (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES). In a cluster, a
// script may only touch keys of one hash slot: every queue name carries a hash tag (JobKind),
// so each queue's keys live together, and so do a rate-limit key's windows (window-leases.ts).
import { type ConnectionOptions, Queue } from 'bullmq';
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

  /**
   * A connection for SUBSCRIBE (the live event stream's wake-ups): it waits for Redis and
   * reconnects forever, subscribing again each time.
   */
  subscriber(name: string): RedisClient {
    const nodes = this.config.redisClusterNodes;
    if (nodes) return this.track(clusterClient(nodes, 'worker', name));
    return new Redis(this.config.redisUrl, {
      protocol: WIRE_PROTOCOL,
      retryStrategy: reconnectDelay,
      connectionName: name,
      ...roleOptions('worker'),
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

  /**
   * A producer's queue for one kind of job, adding jobs with the kind's options. (Any kind: what
   * its callers enqueue, the second type, plays no part here.)
   */
  queue<D>(kind: JobKind<D, never>, config: Config, name: string): Queue<D> {
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
