// The peer's storage: its own database on the local PostgreSQL (wrs_bench_peer_<pid>), holding
// the same organizations, keys and templates as the service's bench database, a run table with
// the columns the service keeps, and pg-boss's schema. Everything here is the bench's; it is
// dropped when the bench ends (and a later bench drops what a killed one left).
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { hashApiKey } from '../../src/auth/api-keys.js';
import type { RunRecord } from '../../src/runs/run-record.js';
import type { Tenant } from '../fixtures.js';
import type { StartedSpan } from '../backlog.js';

/** The PostgreSQL server to use (trust or password auth); the database is always the bench's. */
const SERVER_URL =
  process.env.BENCH_PG_URL || process.env.PGURL || 'postgres://postgres@127.0.0.1:5432/postgres';

export const PEER_DB_PREFIX = 'wrs_bench_peer_';
/** The pg-boss queue the peer's API sends to and its worker works. */
export const PEER_QUEUE = 'start-run';

export function peerDatabaseUrl(pid = process.pid): string {
  const url = new URL(SERVER_URL);
  url.pathname = `/${PEER_DB_PREFIX}${pid}`;
  return url.toString();
}

async function onServer<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Why the peer cannot run here (no PostgreSQL answers), or undefined when it can. */
export async function peerUnavailable(): Promise<string | undefined> {
  try {
    await onServer((client) => client.query('SELECT 1'));
    return undefined;
  } catch (err) {
    return `no PostgreSQL at ${new URL(SERVER_URL).host} (${(err as Error).message}); set BENCH_PG_URL`;
  }
}

const SCHEMA = `
  CREATE TABLE api_keys (
    key_hash char(64) PRIMARY KEY,
    organization_id varchar(36) NOT NULL
  );
  CREATE TABLE workflow_templates (
    id varchar(36) PRIMARY KEY,
    organization_id varchar(36) NOT NULL,
    name text NOT NULL,
    pages jsonb NOT NULL
  );
  CREATE TABLE workflow_runs (
    seq bigserial PRIMARY KEY,
    id varchar(36) NOT NULL UNIQUE,
    organization_id varchar(36) NOT NULL,
    template_id varchar(36) NOT NULL,
    workflow_name text NOT NULL,
    status varchar(16) NOT NULL,
    current_step_name text,
    current_step_assignee text,
    run_json text NOT NULL,
    last_activity timestamptz NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX workflow_runs_org_seq ON workflow_runs (organization_id, seq);
  CREATE INDEX workflow_runs_pending ON workflow_runs (status) WHERE status = 'pending';
`;

/**
 * Creates the peer's database with the tenants' keys and templates, installs pg-boss there and
 * creates its queue (LISTEN/NOTIFY on, so a worker wakes as a job is sent, as the service's
 * does).
 */
export async function createPeerDatabase(tenants: Tenant[]): Promise<void> {
  const name = `${PEER_DB_PREFIX}${process.pid}`;
  await onServer((client) => client.query(`CREATE DATABASE ${name}`));
  const client = new pg.Client({ connectionString: peerDatabaseUrl() });
  await client.connect();
  try {
    await client.query(SCHEMA);
    for (const t of tenants) {
      await client.query('INSERT INTO api_keys VALUES ($1, $2)', [hashApiKey(t.key), t.orgId]);
      await client.query('INSERT INTO workflow_templates VALUES ($1, $2, $3, $4)', [
        t.template.id,
        t.orgId,
        t.template.name,
        JSON.stringify(t.template.pages),
      ]);
    }
  } finally {
    await client.end();
  }
  const boss = new PgBoss({ connectionString: peerDatabaseUrl(), max: 2 });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    await boss.createQueue(PEER_QUEUE, { notify: true });
  } finally {
    await boss.stop({ graceful: false });
  }
}

export async function dropPeerDatabase(pid = process.pid): Promise<void> {
  await onServer((client) =>
    client.query(`DROP DATABASE IF EXISTS ${PEER_DB_PREFIX}${pid} WITH (FORCE)`),
  );
}

/** Pids of the benches whose peer databases are still there. */
export async function peerDatabasePids(): Promise<number[]> {
  const { rows } = await onServer((client) =>
    client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE '${PEER_DB_PREFIX}%'`,
    ),
  );
  return rows
    .map((r) => Number(r.datname.slice(PEER_DB_PREFIX.length)))
    .filter((pid) => Number.isSafeInteger(pid));
}

/** The peer's run row (the service's columns that a list or a worker reads). */
export function peerRunValues(run: RunRecord): unknown[] {
  return [
    run.id,
    run.organizationId,
    run.templateId,
    run.workflowName,
    run.status,
    run.currentStepName,
    run.currentStepAssignee,
    JSON.stringify(run.document),
    run.lastActivity,
    run.createdAt,
  ];
}

export const INSERT_PEER_RUN = `INSERT INTO workflow_runs (id, organization_id, template_id,
  workflow_name, status, current_step_name, current_step_assignee, run_json, last_activity,
  created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;

/** A connection to the peer's database, for the phases' counts and resets. */
export class PeerDb {
  private readonly pool = new pg.Pool({ connectionString: peerDatabaseUrl(), max: 2 });

  async countPending(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      "SELECT COUNT(*) AS n FROM workflow_runs WHERE status = 'pending'",
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** How many of the given runs are still pending (a primary-key lookup each). */
  async pendingAmong(ids: readonly string[]): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      "SELECT COUNT(*) AS n FROM workflow_runs WHERE id = ANY($1) AND status = 'pending'",
      [ids],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** The runs' first and last last-activity time (ms), and how many came after the first. */
  async startedSpan(): Promise<StartedSpan> {
    const { rows } = await this.pool.query<{ first: Date; last: Date }>(
      'SELECT MIN(last_activity) AS first, MAX(last_activity) AS last FROM workflow_runs',
    );
    const { first, last } = rows[0]!;
    const after = await this.pool.query<{ n: string }>(
      'SELECT COUNT(*) AS n FROM workflow_runs WHERE last_activity > $1',
      [first],
    );
    return {
      firstMs: first.getTime(),
      lastMs: last.getTime(),
      afterFirst: Number(after.rows[0]?.n ?? 0),
    };
  }

  async countByStatus(status: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      'SELECT COUNT(*) AS n FROM workflow_runs WHERE status = $1',
      [status],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Empties the run table and the queue: each measurement starts from nothing. */
  async reset(): Promise<void> {
    await this.pool.query('TRUNCATE workflow_runs');
    await this.pool.query('DELETE FROM pgboss.job');
    await this.pool.query('VACUUM ANALYZE workflow_runs');
  }

  /** Stores pending runs and one job each, as the peer's API would have (rows, then jobs). */
  async seedBacklog(runs: RunRecord[]): Promise<void> {
    const boss = new PgBoss({ connectionString: peerDatabaseUrl(), max: 2, supervise: false });
    boss.on('error', () => undefined);
    await boss.start();
    try {
      for (let i = 0; i < runs.length; i += 1000) {
        const chunk = runs.slice(i, i + 1000);
        const values = chunk.map(peerRunValues);
        const params = values.map(
          (row, r) => `(${row.map((_, c) => `$${r * row.length + c + 1}`).join(', ')})`,
        );
        await this.pool.query(
          `${INSERT_PEER_RUN.slice(0, INSERT_PEER_RUN.indexOf('VALUES'))} VALUES ${params.join(', ')}`,
          values.flat(),
        );
        await boss.insert(
          PEER_QUEUE,
          chunk.map((run) => ({ data: { runId: run.id } })),
        );
      }
    } finally {
      await boss.stop({ graceful: false });
    }
    await this.pool.query('ANALYZE'); // as autovacuum would soon: plans for the tables' size
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
