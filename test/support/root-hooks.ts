// The harness of a test run. Once per run: a template database with the schema. For each test
// file: a database copied from the template and a queue prefix, both its own, so that nothing
// a file leaves (rows, Redis jobs) is seen by another. At the end, the databases and the
// run's Redis keys removed (kept with TEST_KEEP_DATA).
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import Mocha from 'mocha';
import { createDb, type Db } from '../../src/db.js';
import { runNames, testConfig, testEnv, useFileData, type FileData } from './env.js';
import { DatabaseTemplate } from './file-databases.js';
import { onCluster } from './private-redis.js';
import { RedisCluster } from './redis-cluster.js';

const keepData = Boolean(process.env.TEST_KEEP_DATA);

let fileDb: Db | undefined;

/** A Knex connection to the running test file's database, closed when the file ends. */
export function testDb(): Db {
  fileDb ??= createDb(testConfig());
  return fileDb;
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
        // Every file's prefix, and only this run's: `${stem}-${n}-…`.
        `${runNames.queuePrefix}-*`,
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

let template: DatabaseTemplate | undefined;
let files = 0;
let running: FileData | undefined;

/** Gives the file a database and a queue prefix, and points testEnv and testDb() at them. */
async function enterFile(file: string): Promise<void> {
  const database = await template!.take();
  running = { file, database, queuePrefix: `${runNames.queuePrefix}-${++files}` };
  useFileData(running);
}

async function leaveFile(): Promise<void> {
  const left = running;
  running = undefined;
  useFileData(undefined);
  const db = fileDb;
  fileDb = undefined;
  await db?.destroy();
  if (!left) return; // it got no database
  if (keepData) {
    const { file, database, queuePrefix } = left;
    process.stderr.write(
      `  (kept for ${file}: database ${database}, queue prefix ${queuePrefix})\n`,
    );
  } else {
    template!.release(left.database);
  }
}

const testRoot = fileURLToPath(new URL('../', import.meta.url)); // dist/test/

/**
 * Puts the top-level suites (and tests) of each test file under a suite of the file's own,
 * titled by its path, whose hooks make the file's database and queue prefix before its first
 * test and drop the database after its last: every file is isolated, without asking for it.
 * This runs in the root suite's beforeAll: every file is loaded by then (and `.only` applied),
 * and the runner reads a suite's children only after its beforeAll hooks. The suites are moved
 * by hand, not by addSuite, which would reset their own timeouts to the new parent's. The
 * file's path is now part of each test's full title, which --grep matches.
 */
function suitePerFile(root: Mocha.Suite): void {
  const byFile = new Map<string, Mocha.Suite>();
  const suiteOf = (file = '(no file)'): Mocha.Suite => {
    let suite = byFile.get(file);
    if (!suite) {
      suite = Mocha.Suite.create(root, relative(testRoot, file));
      suite.beforeAll('a database and queue prefix of its own', async function () {
        this.timeout(60000);
        await enterFile(file);
      });
      suite.afterAll('release its database', async function () {
        this.timeout(60000);
        await leaveFile();
      });
      byFile.set(file, suite);
    }
    return suite;
  };
  const suites = root.suites.splice(0);
  const tests = root.tests.splice(0);
  for (const suite of suites) {
    const parent = suiteOf(suite.file);
    suite.parent = parent;
    parent.suites.push(suite);
  }
  for (const test of tests) {
    const parent = suiteOf(test.file);
    test.parent = parent;
    parent.tests.push(test);
  }
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60000);
    if (onCluster) await startCluster(this);
    template = await DatabaseTemplate.create(runNames.database);
    const root = this.test?.parent;
    if (!root) throw new Error('mochaHooks.beforeAll runs without its suite');
    suitePerFile(root);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60000);
    await cluster?.stop();
    if (!keepData) await deleteRedisKeys().catch(() => undefined);
    await template?.close({ all: !keepData });
  },
};
