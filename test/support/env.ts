// Where the tests put their data: each test file has a database and a queue prefix of its
// own (given by the harness, test/support/root-hooks.ts), so a test run never touches the
// service's data nor another run's, and a test file never sees what another file left.
import { loadConfig, type Config } from '../../src/config.js';

const server = new URL(
  process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'mysql://wrs:wrs@127.0.0.1:3306/x',
);

/** DATABASE_URL of a database on the test server. */
export function databaseUrl(database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * The run's names: its template database (the migrated schema every file's database is copied
 * from), and the stem of every file's database and queue prefix, which end-of-run cleanup
 * matches on.
 */
export const runNames = {
  database: `wrs_test_${process.pid}`,
  queuePrefix: `wrs-test-${process.pid}`,
};

/** The database and queue prefix of the test file that is running. */
export interface FileData {
  file: string;
  database: string;
  queuePrefix: string;
}

let current: FileData | undefined;

/** Switches testEnv, testConfig() and testDb() to a file's data (undefined: between files). */
export function useFileData(data: FileData | undefined): void {
  current = data;
}

function fileData(): FileData {
  if (!current) {
    // Read at import time (a module-level const, a describe body), the value would be the
    // same for every file.
    throw new Error(
      'the test database and queue prefix exist only while a test file runs: read testEnv, ' +
        'testConfig() and testDb() in a hook or a test, not when the file is loaded',
    );
  }
  return current;
}

/**
 * Environment given to every process a test starts. DATABASE_URL and QUEUE_PREFIX are those
 * of the file that is running, read when asked.
 */
export const testEnv: Record<string, string> = {
  get DATABASE_URL() {
    return databaseUrl(fileData().database);
  },
  get QUEUE_PREFIX() {
    return fileData().queuePrefix;
  },
  REDIS_URL: process.env.TEST_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  LOG_LEVEL: 'info',
  RATE_LIMIT_MAX: '1000000',
  RECONCILE_AFTER_MS: '1500',
  RECONCILE_INTERVAL_MS: '500',
  WORKER_LOCK_MS: '3000',
  JOB_BACKOFF_MS: '100',
  KEY_CACHE_TTL_MS: '1000',
};

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ ...testEnv, ...overrides });
}
