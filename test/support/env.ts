// Where the tests put their data: a database and a queue prefix of their own, so a test run
// never touches the service's data nor another run's.
import { loadConfig, type Config } from '../../src/config.js';

const suffix = `${process.pid}`;
const base = new URL(
  process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'mysql://wrs:wrs@127.0.0.1:3306/x',
);
base.pathname = `/wrs_test_${suffix}`;

/** Environment given to every process a test starts. */
export const testEnv: Record<string, string> = {
  DATABASE_URL: base.toString(),
  REDIS_URL: process.env.TEST_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  QUEUE_PREFIX: `wrs-test-${suffix}`,
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
