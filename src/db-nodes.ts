// One writer among the nodes of a Galera cluster (DATABASE_NODES).
//
// Galera certifies a commit on every node before it returns, so a node can die without losing
// one. But row locks are each node's own (a SKIP LOCKED claim on two nodes takes the same row),
// and writes made on two nodes at once conflict at COMMIT: the service writes to one node at a
// time, as Galera advises. The writer is the first node of the list that is healthy: it
// answers, takes queries (wsrep_ready), is in the primary component and is synced. Every
// process picks by that one rule, so they agree on the writer but for the moment between their
// checks; within it nothing depends on their agreeing: a conflict is retried (db.ts), and every
// read waits until its node has applied what the cluster certified before it (below).
//
// Each pool's connections go to the writer (knex's connection provider). A connection to a
// node that is no longer the writer is dropped when its pool next lends it (validate). The
// writer is checked every DATABASE_CHECK_INTERVAL_MS, and at once after an error that may be
// its (a connection lost or refused, a pool timeout, 1047 "WSREP has not yet prepared node").
//
// Read-your-writes across a move: a commit certified on the old writer may not be applied on
// the new one yet when a read comes. Every session on a Galera node sets wsrep_sync_wait=1:
// each read waits until its node has applied every write the cluster had certified when the
// read began (docs/scaling.md gives its cost).
import type { Connection } from 'mysql2';
import { createConnection } from 'mysql2';
import { Counter } from 'prom-client';
import type { DbNode } from './config.js';
import { isConnectionLost } from './errors.js';
import { Periodic, type Timers } from './lib/periodic.js';
import type { Logger } from './logger.js';
import { registry } from './metrics/metrics.js';

/** What a probe needs to log in. */
export interface NodeLogin {
  user: string;
  password: string;
  /** How long a node has to accept a connection and answer the probe. */
  timeoutMs: number;
}

/** What a probe found: whether the node can take writes (else why not), and whether it is Galera's. */
type Health = { ok: true; galera: boolean } | { ok: false; galera?: boolean; why: string };

/** After an error, the soonest the next check may come (errors come in bursts). */
const RECHECK_AFTER_ERROR_MS = 250;

/** Timers that do not keep a process alive: the checks run as long as the process does. */
const UNREF_TIMERS: Timers = {
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
  now: () => performance.now(),
};

const writerMoves = new Counter({
  name: 'wrs_db_writer_moves_total',
  help: 'Times the database writer moved to another node (DATABASE_NODES)',
  registers: [registry],
});

export const nodeName = (node: DbNode) =>
  node.host.includes(':') ? `[${node.host}]:${node.port}` : `${node.host}:${node.port}`;

/** Whether an error may mean the writer is gone or cannot take writes: check it now. */
export function mayBeWriterTrouble(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as Error & { code?: unknown };
  return (
    isConnectionLost(err) ||
    // 1047: the node is outside the primary component.
    e.code === 'ER_UNKNOWN_COM_ERROR' ||
    e.code === 'ER_ERROR_DURING_COMMIT' ||
    e.name === 'KnexTimeoutError' ||
    e.name === 'TimeoutError'
  );
}

export class DbNodes {
  private writerIndex = 0;
  /** Whether a check has found a writer yet. */
  private chosen = false;
  /** Whether each node was a Galera node when last probed. */
  private readonly galera = new Map<number, boolean>();
  private readonly loop: Periodic;
  private first: Promise<void> | undefined;
  private lastCheckEnded = -Infinity;
  /** Pools following the writer (attach/detach). */
  private users = 0;
  /** Why no node could take writes at the last check; undefined when one could. */
  private trouble: string | undefined;
  /** When an error first pointed at the writer since it last checked healthy. */
  private troubleSince: number | undefined;

  constructor(
    readonly nodes: readonly DbNode[],
    private readonly login: NodeLogin,
    intervalMs: number,
    private readonly log: Logger,
  ) {
    if (nodes.length === 0) throw new Error('DbNodes needs at least one node');
    this.loop = new Periodic(() => this.check(), {
      intervalMs,
      timers: UNREF_TIMERS,
      onError: (err) => log.warn('database node check failed', { err }),
    });
  }

  get writer(): DbNode {
    return this.nodes[this.writerIndex]!;
  }

  /** Resolves once the first check has chosen a writer (or found none). */
  ready(): Promise<void> {
    this.first ??= this.check();
    return this.first;
  }

  /** A pool follows the writer: the checks run while one does. */
  attach(): void {
    this.users++;
    this.loop.start();
  }

  /** A pool was closed; resolves true when it was the last (the checks have stopped). */
  async detach(): Promise<boolean> {
    if (--this.users > 0) return false;
    await this.loop.stop();
    return true;
  }

  /** An error on a connection to the writer, or a pool's: checks the writer soon if it may be its. */
  report(err: unknown): void {
    if (!mayBeWriterTrouble(err)) return;
    this.troubleSince ??= performance.now();
    this.loop.wake(Math.max(0, this.lastCheckEnded + RECHECK_AFTER_ERROR_MS - performance.now()));
  }

  /**
   * Knex's connection provider: settings for new connections, to the writer. Knex asks again
   * once they have expired: when the writer has moved.
   */
  provider<S extends object>(
    base: S,
  ): () => Promise<S & { host: string; port: number; expirationChecker: () => boolean }> {
    return async () => {
      await this.ready();
      const index = this.writerIndex;
      const { host, port } = this.writer;
      return { ...base, host, port, expirationChecker: () => this.writerIndex !== index };
    };
  }

  /** Whether a pooled connection is to the writer (else the pool drops it and makes another). */
  isToWriter(conn: Connection): boolean {
    const { host, port } = this.writer;
    return conn.config.host === host && conn.config.port === port;
  }

  /** Prepares a new connection: on a Galera node, reads that wait for the cluster's writes. */
  afterCreate(conn: Connection, done: (err: Error | null, conn: Connection) => void): void {
    const index = this.nodes.findIndex(
      (n) => n.host === conn.config.host && n.port === conn.config.port,
    );
    if (this.galera.get(index) !== true) return done(null, conn);
    conn.query('SET SESSION wsrep_sync_wait = 1', (err) => done(err, conn));
  }

  /** Picks the writer: the first healthy node of the list. */
  async check(): Promise<void> {
    try {
      const reasons: string[] = [];
      for (let i = 0; i < this.nodes.length; i++) {
        const health = await probe(this.nodes[i]!, this.login);
        if (health.galera !== undefined) this.galera.set(i, health.galera);
        if (health.ok) {
          this.moveTo(i);
          return;
        }
        reasons.push(`${nodeName(this.nodes[i]!)}: ${health.why}`);
      }
      const trouble = reasons.join('; ');
      if (this.trouble === undefined) {
        this.log.error('no database node can take writes', { nodes: trouble });
      }
      this.trouble = trouble;
    } finally {
      this.lastCheckEnded = performance.now();
    }
  }

  private moveTo(index: number): void {
    const since = this.troubleSince;
    this.troubleSince = undefined;
    if (this.trouble !== undefined) {
      this.log.warn('a database node can take writes again', {
        writer: nodeName(this.nodes[index]!),
      });
      this.trouble = undefined;
    }
    const first = !this.chosen;
    this.chosen = true;
    if (first) this.log.info('database writer', { writer: nodeName(this.nodes[index]!) });
    if (index === this.writerIndex) return;
    const from = this.writer;
    this.writerIndex = index;
    if (first) return;
    writerMoves.inc();
    this.log.warn('database writer moved', {
      from: nodeName(from),
      to: nodeName(this.writer),
      ...(since !== undefined ? { afterMs: Math.round(performance.now() - since) } : {}),
    });
  }
}

/** Asks a node whether it can take writes, on a connection of its own. */
function probe(node: DbNode, login: NodeLogin): Promise<Health> {
  return new Promise<Health>((resolve) => {
    const conn = createConnection({
      host: node.host,
      port: node.port,
      user: login.user,
      password: login.password,
      connectTimeout: login.timeoutMs,
      // The probe's own two statements, in one round trip.
      multipleStatements: true,
    });
    let settled = false;
    const finish = (health: Health) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy();
      resolve(health);
    };
    const timer = setTimeout(
      () => finish({ ok: false, why: `no answer within ${login.timeoutMs} ms` }),
      login.timeoutMs,
    );
    conn.on('error', (err) => finish({ ok: false, why: err.message }));
    conn.query(
      "SHOW GLOBAL VARIABLES WHERE Variable_name = 'wsrep_on'; " +
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_status', " +
        "'wsrep_local_state', 'wsrep_local_state_comment')",
      (err, results) => {
        if (err) return finish({ ok: false, why: err.message });
        finish(
          healthOf(results as unknown as Array<Array<{ Variable_name: string; Value: string }>>),
        );
      },
    );
  });
}

/** A node's health from its wsrep variables and status. */
export function healthOf(
  results: ReadonlyArray<ReadonlyArray<{ Variable_name: string; Value: string }>>,
): Health {
  const values = new Map(results.flat().map((row) => [row.Variable_name, row.Value]));
  // A server without Galera: it takes writes if it answers.
  if (values.get('wsrep_on') !== 'ON') return { ok: true, galera: false };
  const not = (why: string): Health => ({ ok: false, galera: true, why });
  if (values.get('wsrep_ready') !== 'ON') return not('not ready (wsrep_ready OFF)');
  const status = values.get('wsrep_cluster_status');
  if (status !== 'Primary') {
    return not(`not in the primary component (wsrep_cluster_status ${status})`);
  }
  if (values.get('wsrep_local_state') !== '4') {
    return not(`not synced (${values.get('wsrep_local_state_comment') ?? 'unknown'})`);
  }
  return { ok: true, galera: true };
}
