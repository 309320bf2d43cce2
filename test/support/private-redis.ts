// A Redis of the test's own, to flush or break: one redis-server, or, when the run is on a
// cluster (TEST_REDIS_CLUSTER=1, npm run test:cluster), a cluster of three masters. Both give a
// process its environment, a connection for the test's own queues, and FLUSHALL.
import type { ConnectionOptions } from 'bullmq';
import { RedisCluster } from './redis-cluster.js';
import { RedisServer } from './redis-server.js';

export interface PrivateRedis {
  /** REDIS_URL or REDIS_CLUSTER_NODES for a service process. */
  readonly env: Record<string, string>;
  connection(): ConnectionOptions;
  flushAll(): Promise<unknown>;
  stop(): Promise<void>;
}

/** True when this test run runs on a Redis Cluster. */
export const onCluster = process.env.TEST_REDIS_CLUSTER === '1';

export function startPrivateRedis(): Promise<PrivateRedis> {
  return onCluster ? RedisCluster.start() : RedisServer.start();
}
