// Once per test run: a fresh database with the schema, and at the end, the database and the
// run's Redis keys removed.
import { Redis } from 'ioredis';
import knexFactory from 'knex';
import { createDb, databaseName, knexConfig, type Db } from '../../src/db.js';
import { migrate } from '../../src/migrate.js';
import { spawnSync } from 'node:child_process';
import { testConfig, testEnv } from './env.js';
import { onCluster } from './private-redis.js';
import { RedisCluster } from './redis-cluster.js';

let shared: Db | undefined;

/** A Knex connection to the test database, shared by the tests of a run. */
export function testDb(): Db {
  shared ??= createDb(testConfig());
  return shared;
}

async function dropDatabase(): Promise<void> {
  const config = testConfig();
  const base = knexConfig(config);
  const server = knexFactory({
    ...base,
    connection: { ...(base.connection as object), database: undefined },
    pool: { min: 0, max: 1 },
  });
  await server.raw(`DROP DATABASE IF EXISTS \`${databaseName(config.databaseUrl)}\``);
  await server.destroy();
}

async function deleteRedisKeys(): Promise<void> {
  const redis = new Redis(testEnv.REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(
        cursor,
        'MATCH',
        `${testEnv.QUEUE_PREFIX}:*`,
        'COUNT',
        1000,
      );
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

let cluster: RedisCluster | undefined;

/** The cluster every process of a cluster run uses (npm run test:cluster). */
export function testCluster(): RedisCluster {
  if (!cluster) throw new Error('not a cluster run: set TEST_REDIS_CLUSTER=1');
  return cluster;
}

/**
 * On a cluster run, every process a test starts (and every private Redis a test asks for) uses
 * a Redis Cluster of three masters started here, instead of the machine's Redis.
 */
async function startCluster(ctx: Mocha.Context): Promise<void> {
  const bin = process.env.REDIS_SERVER_BIN || 'redis-server';
  if (spawnSync(bin, ['--version']).error) {
    process.stderr.write(`\n  SKIPPED: the Redis Cluster tests need ${bin}, not found here\n\n`);
    ctx.skip();
  }
  cluster = await RedisCluster.start();
  Object.assign(testEnv, cluster.env);
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60000);
    if (onCluster) await startCluster(this);
    await dropDatabase();
    await migrate(testConfig());
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60000);
    await shared?.destroy();
    shared = undefined;
    await cluster?.stop();
    if (!process.env.TEST_KEEP_DATA) {
      await dropDatabase().catch(() => undefined);
      await deleteRedisKeys().catch(() => undefined);
    }
  },
};
