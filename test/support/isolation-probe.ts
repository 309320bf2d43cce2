// The proof that every test file has a database and a queue prefix of its own, run by two
// files (test/harness/file-isolation-*.test.ts). Each finds nothing another file left, in its
// database or under its queue prefix, and names that are not those of the file that probed
// before it; then it leaves a row and a queued job for the next file not to find. It reads
// what every test reads (testDb(), testEnv), so it fails when the harness shares them.
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { databaseName } from '../../src/db.js';
import { createOrganization } from '../../src/organizations.js';
import { testEnv } from './env.js';
import { testDb } from './root-hooks.js';

interface Probed {
  database: string;
  queuePrefix: string;
}

/** What the files that probed before saw (the two files share this module). */
const probed: Probed[] = [];

async function keysUnder(prefix: string): Promise<string[]> {
  const redis = new Redis(testEnv.REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return await redis.keys(`${prefix}:*`);
  } finally {
    redis.disconnect();
  }
}

/** Tables of the database that have rows, knex's records of migrations aside. */
async function tablesWithRows(database: string): Promise<string[]> {
  const [tables] = (await testDb().raw(
    `SELECT TABLE_NAME AS name FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = ? AND TABLE_NAME NOT LIKE 'knex\\_%'`,
    [database],
  )) as [Array<{ name: string }>];
  const found: string[] = [];
  for (const { name } of tables) {
    if (await testDb()(name).first()) found.push(name);
  }
  return found;
}

export function probeIsolation(): void {
  describe('test files are isolated', () => {
    let mine: Probed;

    before(() => {
      mine = { database: databaseName(testEnv.DATABASE_URL!), queuePrefix: testEnv.QUEUE_PREFIX! };
    });

    it('has a database and a queue prefix that no file before it had', async () => {
      const [[{ current }]] = (await testDb().raw('SELECT DATABASE() AS current')) as [
        [{ current: string }],
      ];
      expect(current, 'the database testDb() uses').to.equal(mine.database);
      for (const earlier of probed) {
        expect(mine.database).not.to.equal(earlier.database);
        expect(mine.queuePrefix).not.to.equal(earlier.queuePrefix);
      }
    });

    it('finds nothing another file left: no rows, no Redis keys', async () => {
      const left = {
        tablesWithRows: await tablesWithRows(mine.database),
        keysUnderPrefix: await keysUnder(mine.queuePrefix),
      };
      expect(left).to.deep.equal({ tablesWithRows: [], keysUnderPrefix: [] });
    });

    it('leaves a row and a queued job behind, for the next file not to find', async () => {
      await createOrganization(testDb(), 'left by the isolation probe');
      const queue = new Queue('{isolation-probe}', {
        connection: { url: testEnv.REDIS_URL, maxRetriesPerRequest: 1 },
        prefix: mine.queuePrefix,
      });
      try {
        await queue.add('left', {}, { delay: 3_600_000 });
      } finally {
        await queue.close();
      }
      expect(await keysUnder(mine.queuePrefix)).not.to.deep.equal([]);
      probed.push(mine);
    });
  });
}
