// The bench's data: its own database (migrated with the service's migrations), organizations
// with a key and a real template each, and the removal of all of it (database and Redis keys).
import { readFileSync } from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { KeyStore } from '../src/auth/key-store.js';
import { loadConfig, type Config } from '../src/config.js';
import { createDb, databaseName, knexConfig, type Db } from '../src/db.js';
import { migrate } from '../src/migrate.js';
import { createOrganization } from '../src/organizations.js';
import { DEMO_TEMPLATE } from '../src/admin/demo-template.js';
import type { TemplateDefinition } from '../src/templates/definition/definition-types.js';
import type { Template } from '../src/templates/template.js';
import { TemplateStore } from '../src/templates/template-store.js';
import { JOB_KINDS } from '../src/jobs/kinds.js';
import {
  BENCH_DB_PREFIX,
  BENCH_PREFIX,
  BENCH_REDIS_URL,
  benchPrefix,
  queuePrefixes,
  serviceEnv,
} from './settings.js';

/** The demo template; every create fills it in the same way. */
export const BENCH_TEMPLATE: TemplateDefinition = DEMO_TEMPLATE;

export const INPUT_FIELDS = { full_name: 'Ada Lovelace', email: 'ada@example.com' };
export const USER_ASSIGNMENTS = { 'Personal details': 'ada', 'Manager approval': 'charles' };

export interface Tenant {
  orgId: string;
  key: string;
  keyId: string;
  template: Template;
}

/** The body every create request of the bench sends. */
export function createBody(tenant: Tenant): string {
  return JSON.stringify({
    workflow_template_id: tenant.template.id,
    input_fields: INPUT_FIELDS,
    user_assignments: USER_ASSIGNMENTS,
  });
}

/** The service configuration the bench's processes run with (for in-process helpers). */
export function benchConfig(prefix: string): Config {
  return loadConfig(serviceEnv(prefix));
}

/** Creates and migrates this bench's database. */
export async function createBenchDatabase(): Promise<Db> {
  const config = benchConfig(BENCH_PREFIX);
  await migrate(config);
  return createDb({ ...config, dbPoolMax: 4, dbAcquireTimeoutMs: 60_000 });
}

/** Creates and migrates another database of this bench (a fresh one, for a cold start). */
export async function createFreshDatabase(databaseUrl: string): Promise<Db> {
  const config = { ...benchConfig(BENCH_PREFIX), databaseUrl };
  await migrate(config);
  return createDb({ ...config, dbPoolMax: 4, dbAcquireTimeoutMs: 60_000 });
}

/** Runs a statement on the server without a database (to list, create or drop databases). */
async function onServer<T>(run: (server: Knex) => Promise<T>): Promise<T> {
  const server = knexFactory({
    ...knexConfig(benchConfig(BENCH_PREFIX), { serverOnly: true }),
    pool: { min: 0, max: 1 },
  });
  try {
    return await run(server);
  } finally {
    await server.destroy();
  }
}

export async function dropBenchDatabase(
  name = databaseName(benchConfig(BENCH_PREFIX).databaseUrl),
): Promise<void> {
  await onServer((server) => server.raw(`DROP DATABASE IF EXISTS \`${name}\``));
}

/** True when the pid is a running bench (not a pid reused by something else). */
function isRunningBench(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('bench/run.js');
  } catch {
    return false;
  }
}

/**
 * Removes what benches that were killed left behind (their database and queues; their
 * rate-limit counters expire by themselves). Returns the pids of benches running now: their
 * load would disturb this one's figures.
 */
export async function removeLeftovers(): Promise<number[]> {
  const [rows] = (await onServer((server) =>
    server.raw('SHOW DATABASES LIKE ?', [`${BENCH_DB_PREFIX.replace(/_/g, '\\_')}%`]),
  )) as [Array<Record<string, string>>];
  const running: number[] = [];
  for (const row of rows) {
    const name = Object.values(row)[0] ?? '';
    // wrs_bench_<pid>, or wrs_bench_<pid>_<suffix> (the coldstart phase's fresh databases).
    const pid = Number(/^\d+/.exec(name.slice(BENCH_DB_PREFIX.length))?.[0]);
    if (!Number.isSafeInteger(pid) || pid === process.pid) continue;
    if (isRunningBench(pid)) {
      running.push(pid);
      continue;
    }
    await dropBenchDatabase(name);
    for (const prefix of Object.values(queuePrefixes(benchPrefix(pid)))) await clearQueue(prefix);
  }
  return running;
}

export async function createTenant(db: Db, name: string): Promise<Tenant> {
  const org = await createOrganization(db, name);
  const key = await new KeyStore(db, 0).create(org.id, 'bench');
  const template = await new TemplateStore(db).insert(org.id, BENCH_TEMPLATE);
  return { orgId: org.id, key: key.key, keyId: key.id, template };
}

/** Removes every run (between measurements, so each starts from the same table). */
export async function clearRuns(db: Db): Promise<void> {
  await db.raw('TRUNCATE TABLE workflow_runs');
}

/**
 * Empties the run history, and with it what the insights folded from it: TRUNCATE starts the
 * event ids again from 1, and a cursor left past them would fold none of the new events.
 */
export async function clearHistory(db: Db): Promise<void> {
  await db.raw('TRUNCATE TABLE run_events');
  for (const table of [
    'insight_runs',
    'insight_run_slots',
    'insight_step_slots',
    'insight_run_days',
    'insight_step_days',
    'insight_open_steps',
  ]) {
    await db.raw(`TRUNCATE TABLE ${table}`);
  }
  await db('insight_cursor').update({ event_id: 0 });
}

/**
 * Takes the events seeded straight into MySQL as folded (the insights' cursor moved past them),
 * as if they were from before the insights: a phase measuring something else then does not
 * share the machine with a fold of millions of events that a real service never has in one go.
 */
export async function skipInsightsBacklog(db: Db): Promise<void> {
  await db.raw(
    'INSERT INTO insight_cursor (id, event_id, updated_at) ' +
      'SELECT 1, COALESCE(MAX(id), 0), CURRENT_TIMESTAMP(3) FROM run_events ' +
      'ON DUPLICATE KEY UPDATE event_id = VALUES(event_id)',
  );
}

/**
 * Empties and removes the queue of every job kind under a prefix (every key BullMQ keeps for
 * it) through BullMQ itself: its cost follows the queue's size, not the size of the Redis
 * keyspace, which other users of a shared Redis may have filled.
 */
export async function clearQueue(prefix: string): Promise<void> {
  for (const kind of Object.values(JOB_KINDS)) {
    const queue = new Queue(kind.queue, {
      connection: { url: BENCH_REDIS_URL, maxRetriesPerRequest: 1 },
      prefix,
    });
    try {
      try {
        await queue.obliterate({ force: true });
      } catch (err) {
        // Something un-paused it half way (a second clean-up, say): pause and go again.
        if (!/non-paused/.test((err as Error).message)) throw err;
        await queue.obliterate({ force: true });
      }
    } finally {
      await queue.close();
    }
  }
}

/** Deletes the rate-limit counters of the bench's keys for the windows since `sinceMs`. */
export async function deleteRateLimitKeys(
  prefix: string,
  keyIds: string[],
  windowMs: number,
  sinceMs: number,
): Promise<void> {
  const names: string[] = [];
  for (let w = Math.floor(sinceMs / windowMs); w <= Math.floor(Date.now() / windowMs); w++) {
    for (const keyId of keyIds) names.push(`${prefix}:ratelimit:${keyId}:${w}`);
  }
  const redis = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    for (let i = 0; i < names.length; i += 500) await redis.unlink(...names.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
}
