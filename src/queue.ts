// Redis connections and the BullMQ queue that carries "look at these runs" notifications.
// Jobs carry only run ids: MySQL holds the truth, a job only says where to look. One job names
// the runs of one or more committed batches, so the cost of a job is shared by up to
// NOTIFY_BATCH runs.
import { type ConnectionOptions, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Config } from './config.js';

export const RUNS_QUEUE = 'workflow-runs';

export interface RunJobData {
  runIds: string[];
}

/** Most runs named by one job. */
export const NOTIFY_BATCH = 100;

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

export function jobOptions(config: Pick<Config, 'jobAttempts' | 'jobBackoffMs'>) {
  return {
    attempts: config.jobAttempts,
    backoff: { type: 'exponential', delay: config.jobBackoffMs },
    // Trim finished jobs so Redis does not grow without end; MySQL keeps the history.
    removeOnComplete: { age: 3600, count: 1000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
  };
}

export function createRunsQueue(
  config: Pick<Config, 'redisUrl' | 'queuePrefix' | 'jobAttempts' | 'jobBackoffMs'>,
  name: string,
): Queue<RunJobData> {
  return new Queue<RunJobData>(RUNS_QUEUE, {
    connection: bullConnection(config, 'producer', name),
    prefix: config.queuePrefix,
    defaultJobOptions: jobOptions(config),
  });
}

/**
 * A job id that makes an accidental second enqueue of the same changes a no-op: named after the
 * first change (a run's change is committed, hence notified, in one batch only) and the count.
 */
export function runJobId(
  first: { runId: string; seq: number },
  count: number,
  suffix = '',
): string {
  return `${first.runId}_${first.seq}_${count}${suffix}`;
}
