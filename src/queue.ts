// Redis connections, and the BullMQ queue of each kind of job (src/jobs/). Jobs carry only ids:
// MySQL holds the truth, a job only says where to look.
import { type ConnectionOptions, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { JobKind } from './jobs/job-kind.js';

// Shared by every connection: the v5 wire protocol (BullMQ's scripts are written against RESP2
// replies) and reconnecting with a back-off capped at 2 s.
const WIRE_PROTOCOL = 2;
const reconnectDelay = (times: number) => Math.min(100 * 2 ** Math.min(times, 6), 2000);

/**
 * A connection for request-path commands (rate limit, readiness): when Redis is away, commands
 * fail at once instead of piling up, so an API request never waits on Redis.
 */
export function createProducerRedis(config: Pick<Config, 'redisUrl'>, name: string): Redis {
  return new Redis(config.redisUrl, {
    protocol: WIRE_PROTOCOL,
    retryStrategy: reconnectDelay,
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
  });
}

/**
 * Connection options for BullMQ, which opens (and waits for) its own connections from them.
 * Producers fail fast while Redis is away; workers retry forever, as the BullMQ production
 * guide asks (maxRetriesPerRequest: null).
 */
export function bullConnection(
  config: Pick<Config, 'redisUrl'>,
  role: 'producer' | 'worker',
  name: string,
): ConnectionOptions {
  return {
    url: config.redisUrl,
    protocol: WIRE_PROTOCOL,
    retryStrategy: reconnectDelay,
    connectionName: name,
    ...(role === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1 }
      : { enableOfflineQueue: true, maxRetriesPerRequest: null }),
  };
}

/** A producer's queue for one kind of job, adding jobs with the kind's options. */
export function createQueue<D>(kind: JobKind<D>, config: Config, name: string): Queue<D> {
  return new Queue<D>(kind.queue, {
    connection: bullConnection(config, 'producer', name),
    prefix: config.queuePrefix,
    defaultJobOptions: kind.options(config),
  });
}
