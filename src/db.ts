// The one place that knows how to reach MySQL/MariaDB.
import knexFactory, { type Knex } from 'knex';
import type { Connection, ResultSetHeader } from 'mysql2';
import { format } from 'mysql2';
import { Counter } from 'prom-client';
import type { Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { registry } from './metrics/metrics.js';
import { DbNodes } from './db-nodes.js';
import {
  OutcomeUnknownError,
  WriteTimeoutError,
  isConnectionLost,
  isWriteConflict,
} from './errors.js';

/** Dates are stored and read as UTC whatever the server's time zone. */
const TIME_ZONE = 'Z';

/**
 * mysql2's own formatting, except that a statement without values is sent as it is. The
 * driver would otherwise scan its whole text for placeholders even then, and the statements
 * written with literals (the multi-row INSERT of new runs) are the longest ones it sends.
 */
function queryFormat(sql: string, values: unknown): string {
  if (values === undefined || (Array.isArray(values) && values.length === 0)) return sql;
  return format(sql, values as Parameters<typeof format>[1], false, TIME_ZONE);
}

export type Db = Knex;

export interface DbOptions {
  /**
   * Lets one query carry several statements, for writeScript. Only for processes whose SQL
   * is all the service's own (workers); the API never turns it on.
   */
  multipleStatements?: boolean;
  /**
   * Connections the pool keeps open once opened (idle ones above it are closed after 30 s).
   * The API keeps its pools whole: its /readyz says 200 once they are open (warm-up.ts), and a
   * burst after a quiet spell then finds them open too. Default 0.
   */
  poolMin?: number;
  /** Connections with no database chosen: to create or drop one. */
  serverOnly?: boolean;
}

/** What a pool needs to know of where the database is. */
export type DbPlace = Pick<Config, 'databaseUrl' | 'dbPoolMax' | 'dbAcquireTimeoutMs'> &
  Partial<Pick<Config, 'databaseNodes' | 'databaseCheckIntervalMs'>>;

/** The process's writer choice for each set of nodes: every pool of a process shares one. */
const nodeSets = new Map<string, DbNodes>();

/** The DbNodes that pick the writer for `config`'s DATABASE_NODES; undefined without them. */
export function dbNodesOf(config: DbPlace, log?: Logger): DbNodes | undefined {
  if (!config.databaseNodes) return undefined;
  const url = new URL(config.databaseUrl);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const key = JSON.stringify([config.databaseNodes, user, password]);
  let nodes = nodeSets.get(key);
  if (!nodes) {
    nodes = new DbNodes(
      config.databaseNodes,
      { user, password, timeoutMs: Math.min(config.dbAcquireTimeoutMs, 1000) },
      config.databaseCheckIntervalMs ?? 1000,
      log ?? createLogger('warn', { proc: 'db' }),
    );
    nodeSets.set(key, nodes);
  }
  return nodes;
}

/** Which writer choice a pool's connections follow (for its write paths' errors). */
const poolNodes = new WeakMap<Db, DbNodes>();

/** Connection settings shared by the service, the admin CLI, migrations and tests. */
export function knexConfig(config: DbPlace, options: DbOptions = {}, log?: Logger): Knex.Config {
  const url = new URL(config.databaseUrl);
  const nodes = dbNodesOf(config, log);
  const settings = {
    host: url.hostname,
    port: url.port ? Number(url.port) : 3306,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: options.serverOnly ? undefined : url.pathname.replace(/^\//, ''),
    timezone: TIME_ZONE,
    queryFormat,
    charset: 'utf8mb4',
    // Fail fast when the server is unreachable rather than hanging a request.
    connectTimeout: config.dbAcquireTimeoutMs,
    supportBigNumbers: true,
    multipleStatements: options.multipleStatements === true,
  };
  const pool = { min: Math.min(options.poolMin ?? 0, config.dbPoolMax), max: config.dbPoolMax };
  return {
    client: 'mysql2',
    // With DATABASE_NODES, each new connection goes to the writer of the moment, and a pooled
    // one to another node is dropped when next lent (db-nodes.ts).
    connection: nodes ? nodes.provider(settings) : settings,
    pool: nodes
      ? {
          ...pool,
          validate: (conn: Connection) => nodes.isToWriter(conn),
          afterCreate: (conn: Connection, done: (err: Error | null, c: Connection) => void) =>
            nodes.afterCreate(conn, done),
        }
      : pool,
    acquireConnectionTimeout: config.dbAcquireTimeoutMs,
  };
}

/**
 * A connection pool. Knex's own warnings (a failed connection attempt, say) go to the given
 * logger as JSON lines; by default knex would print plain-text stack traces to stdout.
 */
export function createDb(
  config: DbPlace,
  log: Logger = createLogger('warn', { proc: 'db' }),
  options: DbOptions = {},
): Db {
  const knexLog = log.child({ component: 'knex' });
  const db = knexFactory({
    ...knexConfig(config, options, log.child({ component: 'db-nodes' })),
    log: {
      warn: (message: unknown) => knexLog.warn(firstLine(message)),
      error: (message: unknown) => knexLog.error(firstLine(message)),
      deprecate: (method: unknown, alternative: unknown) =>
        knexLog.warn('deprecated knex call', { method, alternative }),
      debug: (message: unknown) => knexLog.debug(firstLine(message)),
    },
  });
  const nodes = dbNodesOf(config);
  if (nodes) {
    poolNodes.set(db, nodes);
    nodes.attach();
    // An error of a query built with knex may be the writer's (a lost node, 1047).
    db.on('query-error', (err: unknown) => nodes.report(err));
    // The checks stop with the process's last pool (a closed pool's process may go on: tests).
    // (knex's own destroy is read-only; it calls its client's.)
    const client = db.client as { destroy: (callback?: unknown) => Promise<void> };
    const destroy = client.destroy.bind(client);
    client.destroy = async (callback?: unknown) => {
      if (await nodes.detach()) {
        for (const [key, value] of nodeSets) if (value === nodes) nodeSets.delete(key);
      }
      return destroy(callback);
    };
  }
  return db;
}

/** Knex hands over messages with whole stack traces in them: the first line says it. */
function firstLine(message: unknown): string {
  const text = typeof message === 'string' ? message : String(message);
  const nl = text.indexOf('\n');
  return nl < 0 ? text : text.slice(0, nl);
}

/**
 * Checks that the server numbers new rows one by one (auto_increment_increment 1). The live
 * streams, the webhooks and the insights read run events behind a watermark that waits out
 * every gap in their ids (an id whose transaction may still commit): a server stepping ids by
 * more leaves gaps after every event, and each reader would wait out each of them. Galera does
 * so by default (wsrep_auto_increment_control steps ids by the cluster's size, for writes on
 * every node); the service writes to one node at a time, which wants it off (docs/scaling.md).
 */
export async function checkIdStep(db: Pick<Db, 'raw'>): Promise<void> {
  const [rows] = (await db.raw('SELECT @@auto_increment_increment AS step')) as [
    Array<{ step: number | string }>,
  ];
  const step = Number(rows[0]?.step ?? 1);
  if (step !== 1) {
    throw new Error(
      `the database steps new ids by ${step} (auto_increment_increment), not 1: on Galera set ` +
        'wsrep_auto_increment_control=OFF and auto_increment_increment=1 on every node ' +
        '(one writer at a time; docs/scaling.md)',
    );
  }
}

/** The database name of a DATABASE_URL, for tools that create it. */
export function databaseName(databaseUrl: string): string {
  return new URL(databaseUrl).pathname.replace(/^\//, '');
}

/** One statement inside writeTransaction; resolves with what mysql2 returns for it. */
export type TxQuery = (sql: string, values?: readonly unknown[]) => Promise<ResultSetHeader>;

/**
 * Lends `use` one pooled connection whose statements fail with WriteTimeoutError once
 * timeoutMs have passed. When `use` fails, the open transaction is rolled back: by a ROLLBACK
 * on a connection that is still sound, or, when the connection timed out, was lost or saw its
 * COMMIT unanswered, by cutting it (MySQL rolls back the transaction of a connection that is
 * gone, and the pool replaces a destroyed connection rather than reuse it).
 */
async function onWriteConnection<T>(
  db: Db,
  timeoutMs: number,
  use: (query: TxQuery) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await onWriteConnectionOnce(db, timeoutMs, use);
    } catch (err) {
      poolNodes.get(db)?.report(err);
      if (!isWriteConflict(err) || attempt >= CONFLICT_ATTEMPTS) throw err;
      // Rolled back whole (a deadlock, or on Galera a certification conflict at COMMIT):
      // nothing of it was stored, so the transaction runs again from its start, after a random
      // wait that sets the two sides apart.
      writeConflictRetries.inc();
      await new Promise((resolve) =>
        setTimeout(resolve, Math.random() * CONFLICT_BACKOFF_MS * 2 ** (attempt - 1)),
      );
    }
  }
}

/** Tries of a transaction that meets a write conflict (ER_LOCK_DEADLOCK, 1213). */
const CONFLICT_ATTEMPTS = 4;
/** The first retry's wait is up to this; each next one's up to twice the last. */
const CONFLICT_BACKOFF_MS = 20;

const writeConflictRetries = new Counter({
  name: 'wrs_db_write_conflict_retries_total',
  help: 'Transactions run again after a deadlock or a Galera certification conflict (1213)',
  registers: [registry],
});

async function onWriteConnectionOnce<T>(
  db: Db,
  timeoutMs: number,
  use: (query: TxQuery) => Promise<T>,
): Promise<T> {
  const conn = (await db.client.acquireConnection()) as Connection;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WriteTimeoutError(timeoutMs)), timeoutMs);
  });
  expired.catch(() => undefined); // settled by whichever statement is waiting, if any
  const query: TxQuery = (sql, values) =>
    Promise.race([
      new Promise<ResultSetHeader>((resolve, reject) => {
        const done = (err: unknown, result: unknown) =>
          err ? reject(err) : resolve(result as ResultSetHeader);
        if (values === undefined) conn.query(sql, done);
        else conn.query(sql, values as unknown[], done);
      }),
      expired,
    ]);
  let healthy = true;
  try {
    return await use(query);
  } catch (err) {
    healthy = !(
      err instanceof WriteTimeoutError ||
      err instanceof OutcomeUnknownError ||
      isConnectionLost(err)
    );
    if (healthy) await query('ROLLBACK').catch(() => (healthy = false));
    throw err;
  } finally {
    clearTimeout(timer);
    if (!healthy) conn.destroy();
    await db.client.releaseConnection(conn);
  }
}

/**
 * Runs `work` in one transaction on one connection and commits it, the whole bounded by
 * timeoutMs, so that a caller can always tell whether it was stored:
 *   - it resolves: committed;
 *   - it rejects with anything but OutcomeUnknownError: nothing was stored. A statement that
 *     did not answer in time, or a connection lost before the COMMIT, ends with the connection
 *     cut, and MySQL rolls back the open transaction of a connection that is gone;
 *   - OutcomeUnknownError: the COMMIT was sent and no answer came, so it may have been stored.
 * Autocommit statements could not give this: one that was sent and not answered may still
 * commit after the caller was told it failed.
 */
export function writeTransaction<T>(
  db: Db,
  timeoutMs: number,
  work: (query: TxQuery) => Promise<T>,
  options: { readCommitted?: boolean } = {},
): Promise<T> {
  return onWriteConnection(db, timeoutMs, async (query) => {
    // READ COMMITTED for a transaction that locks a range it reads (FOR UPDATE): then only the
    // rows found are locked, not the gaps between them, so inserts into the range go on.
    if (options.readCommitted) await query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await query('START TRANSACTION');
    const result = await work(query);
    await commit(query);
    return result;
  });
}

/**
 * Sends the COMMIT. An error the server answered with means it did not commit; a timeout, a
 * lost connection or a Galera node cut off mid-replication leaves the outcome unknown
 * (OutcomeUnknownError).
 */
async function commit(query: TxQuery): Promise<void> {
  try {
    await query('COMMIT');
  } catch (err) {
    if (err instanceof WriteTimeoutError || isConnectionLost(err) || isCommitCutOff(err)) {
      throw new OutcomeUnknownError(err);
    }
    throw err;
  }
}

/**
 * A Galera node that left the primary component while its COMMIT was being replicated
 * (ER_ERROR_DURING_COMMIT, "Not connected to Primary Component"): the write set may have
 * reached the others before the node was cut off, and be committed there.
 */
function isCommitCutOff(err: unknown): boolean {
  return (
    err instanceof Error && (err as Error & { code?: unknown }).code === 'ER_ERROR_DURING_COMMIT'
  );
}

/**
 * writeTransaction for statements known in advance, in two round trips instead of one per
 * statement: `START TRANSACTION; …statements` together, then the COMMIT alone. The promise is
 * writeTransaction's: until the COMMIT is sent nothing can be stored (a statement that fails
 * stops the rest, and the transaction is rolled back), so only an unanswered COMMIT leaves
 * the outcome unknown. Needs a pool made with multipleStatements.
 */
export function writeBatch(
  db: Db,
  timeoutMs: number,
  statements: readonly string[],
  /**
   * Given each statement's result (in order), before the COMMIT: throwing rolls the
   * transaction back and rejects with what it threw (nothing stored).
   */
  check?: (results: unknown[]) => void,
): Promise<void> {
  return onWriteConnection(db, timeoutMs, async (query) => {
    const results = (await query(
      ['START TRANSACTION', ...statements].join('; '),
    )) as unknown as unknown[];
    check?.(results.slice(1));
    await commit(query);
  });
}

/**
 * Runs statements as one transaction in one round trip (`START TRANSACTION; …; COMMIT`), on a
 * pool made with multipleStatements. When a statement fails, MySQL runs none after it, so the
 * COMMIT is never reached and the transaction is rolled back. Unlike writeTransaction it cannot
 * tell "not stored" from "unknown" when the connection dies: only for writers that need not
 * (a worker's guarded writes, which are idempotent and retried).
 */
export async function writeScript(
  db: Db,
  timeoutMs: number,
  statements: readonly string[],
  /** Reads to run after the COMMIT, in the same round trip. */
  after: readonly string[] = [],
): Promise<unknown[]> {
  if (statements.length === 0) return [];
  // One result per statement: the SET, START TRANSACTION, statements, COMMIT, then `after`.
  return onWriteConnection(db, timeoutMs, async (query) =>
    // One join: the statements of a batch can be megabytes, and every copy is garbage.
    // READ COMMITTED: an INSERT … SELECT reads the rows it joins as a consistent read instead
    // of locking them, so it never waits on (or deadlocks with) a request that is changing one
    // of them; UPDATEs still lock what they change.
    query(
      [
        'SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
        'START TRANSACTION',
        ...statements,
        'COMMIT',
        ...after,
      ].join('; '),
    ),
  ) as unknown as Promise<unknown[]>;
}

/** The round trips of a scriptTransaction after its first. */
export interface Script {
  /** Sends statements inside the open transaction, in one round trip; one result each. */
  run(statements: readonly string[]): Promise<unknown[]>;
  /**
   * Sends statements, the COMMIT, then `after` (reads once it is committed), in one round
   * trip; one result per statement of `after`. A script's work ends with it.
   */
  commit(statements: readonly string[], after?: readonly string[]): Promise<unknown[]>;
}

/**
 * A transaction in a few round trips of several statements each, for work whose statements
 * depend on what earlier ones read, on a pool made with multipleStatements: the first trip is
 * `SET … READ COMMITTED; START TRANSACTION; …first`, and `work`, given the results of `first`,
 * sends the rest through the Script, ending with its commit. A statement that fails, or
 * `work` throwing, rolls the transaction back. Like writeScript it cannot tell "not stored"
 * from "unknown" when the connection dies: only for writes that are idempotent and retried,
 * or claims, which let go by themselves when their time runs out.
 */
export function scriptTransaction<T>(
  db: Db,
  timeoutMs: number,
  first: readonly string[],
  work: (results: unknown[], script: Script) => Promise<T>,
): Promise<T> {
  return onWriteConnection(db, timeoutMs, async (query) => {
    // One result per statement; a query of one statement answers with its result alone.
    const send = async (statements: readonly string[]): Promise<unknown[]> => {
      const results = (await query(statements.join('; '))) as unknown;
      return statements.length === 1 ? [results] : (results as unknown[]);
    };
    let committed = false;
    const script: Script = {
      run: (statements) => (statements.length === 0 ? Promise.resolve([]) : send(statements)),
      commit: async (statements, after = []) => {
        committed = true;
        const results = await send([...statements, 'COMMIT', ...after]);
        return results.slice(statements.length + 1);
      },
    };
    const opened = await send([
      'SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'START TRANSACTION',
      ...first,
    ]);
    const result = await work(opened.slice(2), script);
    if (!committed) throw new Error('a script transaction ended without its COMMIT');
    return result;
  });
}

/** What claimScript's statements came to. */
export interface ClaimResults {
  /** The result of `lock`, the statement that found and locked the rows. */
  locked: unknown;
  /** One result per statement of `after`. */
  after: unknown[];
}

/**
 * A claim as one transaction in two round trips (a scriptTransaction):
 * `SET … READ COMMITTED; START TRANSACTION; lock`, then `…statements; COMMIT; …after`, where
 * `then` writes the statements (and the reads after the COMMIT) from what `lock` found.
 */
export function claimScript(
  db: Db,
  timeoutMs: number,
  lock: string,
  then: (locked: unknown) => { statements: readonly string[]; after?: readonly string[] },
): Promise<ClaimResults> {
  return scriptTransaction(db, timeoutMs, [lock], async ([locked], script) => {
    const { statements, after = [] } = then(locked);
    return { locked, after: await script.commit(statements, after) };
  });
}

/** A statement with its `?` values written in, as the driver would (for writeScript). */
export function inlineSql(sql: string, values: readonly unknown[]): string {
  return format(sql, values as Parameters<typeof format>[1], false, TIME_ZONE);
}
