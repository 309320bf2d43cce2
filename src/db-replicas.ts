// Reads from MariaDB replicas, with read-your-writes (DATABASE_REPLICA_URLS).
//
// The rule: a read goes to a replica only once that replica has applied everything the primary
// had written when the read began. At the read, the primary is asked its binlog position
// (`SELECT @@gtid_binlog_pos`: no table is touched); the replica then waits for it
// (`MASTER_GTID_WAIT(pos, REPLICA_WAIT_MS)`). Caught up: the read runs there. Not within the
// bound, or any error: the read runs on the primary. Every write a client was told succeeded
// was committed before the read began, so its GTID is in that position, whichever API process
// made it: no read misses a write that was answered before it was sent.
//
// Replicas that lag (cannot reach the primary's position within REPLICA_MAX_LAG_MS, or time out
// on REPLICA_TIMEOUTS_OUT reads in a row) or do not answer are taken out of service; the
// periodic check puts one back once it reaches the primary's position within REPLICA_WAIT_MS.
// No request fails because of a replica: a read that fails there is run again on the primary.
import { Counter } from 'prom-client';
import type { Config, ReplicaConfig } from './config.js';
import { createDb, type Db } from './db.js';
import type { Logger } from './logger.js';
import { registry } from './metrics/metrics.js';

/** Runs a read on the connection pool chosen for it (a replica, or the primary). */
export type Reader = <T>(work: (db: Db) => Promise<T>) => Promise<T>;

/** Every read on the given pool: the path without replicas. */
export function onPool(db: Db): Reader {
  return (work) => work(db);
}

/** Per-read timeouts in a row that take a replica out of service until the check puts it back. */
const REPLICA_TIMEOUTS_OUT = 3;

const replicaReads = new Counter({
  name: 'wrs_replica_reads_total',
  help: 'Reads that could go to a replica, by where they were served and why',
  labelNames: ['served', 'reason'] as const,
  registers: [registry],
});

/** A GTID position: the highest sequence number of each replication domain. */
type Position = Map<string, bigint>;

export function parsePosition(text: string): Position {
  const position: Position = new Map();
  for (const part of text.split(',')) {
    const match = /^\s*(\d+)-\d+-(\d+)\s*$/.exec(part);
    if (!match) continue;
    const [, domain, seq] = match;
    const known = position.get(domain!);
    const value = BigInt(seq!);
    if (known === undefined || value > known) position.set(domain!, value);
  }
  return position;
}

/** Whether `have` includes every transaction of `want` (GTID strict mode: in order per domain). */
export function covers(have: Position, want: Position): boolean {
  for (const [domain, seq] of want) {
    const known = have.get(domain);
    if (known === undefined || known < seq) return false;
  }
  return true;
}

function merge(into: Position, from: Position): void {
  for (const [domain, seq] of from) {
    const known = into.get(domain);
    if (known === undefined || seq > known) into.set(domain, seq);
  }
}

class Replica {
  inService = false;
  timeoutsInARow = 0;
  /** A position this replica is known to have applied (a wait for it answered 0). */
  readonly applied: Position = new Map();

  constructor(
    readonly name: string,
    readonly db: Db,
  ) {}
}

export class ReplicaReads {
  private readonly replicas: Replica[];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /** The primary's position read for the reads that arrived before it was asked (see position). */
  private pendingPosition: Promise<string> | undefined;
  /** Whether the primary writes a binary log: without one, no replica can be trusted. */
  private primaryLogs = false;

  constructor(
    private readonly primary: Db,
    private readonly settings: ReplicaConfig,
    private readonly log: Logger,
    config: Pick<Config, 'dbAcquireTimeoutMs'>,
  ) {
    this.replicas = settings.urls.map((url) => {
      const parsed = new URL(url);
      const name = `${parsed.hostname}:${parsed.port || '3306'}`;
      // Own small pools; a replica that does not answer is given up on quickly.
      const db = createDb(
        {
          databaseUrl: url,
          dbPoolMax: settings.poolMax,
          dbAcquireTimeoutMs: Math.min(config.dbAcquireTimeoutMs, 1000),
        },
        log.child({ replica: name }),
      );
      return new Replica(name, db);
    });
  }

  /** The reader the stores are given. */
  readonly read: Reader = async (work) => {
    const replica = this.pick();
    if (!replica) return this.onPrimary(work, 'out_of_service');
    let position: string;
    try {
      position = await this.position();
    } catch {
      // The primary will say what is wrong with it, if anything, when the read runs there.
      return this.onPrimary(work, 'no_position');
    }
    if (!covers(replica.applied, parsePosition(position))) {
      let waited: number | null;
      try {
        waited = await this.wait(replica, position, this.settings.waitMs);
      } catch (err) {
        this.takeOut(replica, 'replica error', err);
        return this.onPrimary(work, 'replica_error');
      }
      if (waited !== 0) {
        if (++replica.timeoutsInARow >= REPLICA_TIMEOUTS_OUT) this.takeOut(replica, 'lagging');
        return this.onPrimary(work, 'behind');
      }
    }
    replica.timeoutsInARow = 0;
    try {
      const result = await work(replica.db);
      replicaReads.inc({ served: 'replica', reason: 'caught_up' });
      return result;
    } catch (err) {
      this.takeOut(replica, 'replica error', err);
      return this.onPrimary(work, 'replica_error');
    }
  };

  /** Checks the replicas now and every REPLICA_CHECK_INTERVAL_MS. */
  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), this.settings.checkIntervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
    await Promise.all(this.replicas.map((replica) => replica.db.destroy()));
  }

  /** The replicas' state, for tests and logs. */
  state(): Array<{ name: string; inService: boolean }> {
    return this.replicas.map(({ name, inService }) => ({ name, inService }));
  }

  private async onPrimary<T>(work: (db: Db) => Promise<T>, reason: string): Promise<T> {
    replicaReads.inc({ served: 'primary', reason });
    return work(this.primary);
  }

  /** The next replica in service, round robin; undefined when none is. */
  private pick(): Replica | undefined {
    if (!this.primaryLogs) return undefined;
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.next + i) % this.replicas.length]!;
      if (replica.inService) {
        this.next = (this.next + i + 1) % this.replicas.length;
        return replica;
      }
    }
    return undefined;
  }

  /**
   * The primary's binlog position, read after the caller asked: reads that arrive in the same
   * turn of the event loop share one SELECT, sent after the last of them arrived; a read that
   * arrives once it is sent waits for the next one.
   */
  private position(): Promise<string> {
    this.pendingPosition ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.pendingPosition = undefined;
      return this.primaryPosition();
    });
    return this.pendingPosition;
  }

  private async primaryPosition(): Promise<string> {
    const [rows] = (await this.primary.raw('SELECT @@gtid_binlog_pos AS pos')) as [
      Array<{ pos: string | null }>,
    ];
    return rows[0]?.pos ?? '';
  }

  /** MASTER_GTID_WAIT on the replica: 0 once it applied the position, -1 after timeoutMs. */
  private async wait(replica: Replica, position: string, timeoutMs: number): Promise<number> {
    if (position.trim() === '') return 0;
    const [rows] = (await replica.db
      .raw('SELECT MASTER_GTID_WAIT(?, ?) AS waited', [position, timeoutMs / 1000])
      .timeout(timeoutMs + 1000)) as [Array<{ waited: number | string | null }>];
    const waited = Number(rows[0]?.waited ?? -1);
    if (waited === 0) merge(replica.applied, parsePosition(position));
    return waited;
  }

  private takeOut(replica: Replica, why: string, err?: unknown): void {
    replica.timeoutsInARow = 0;
    replica.applied.clear();
    if (!replica.inService) return;
    replica.inService = false;
    this.log.warn('replica out of service', {
      replica: replica.name,
      why,
      ...(err ? { error: err instanceof Error ? err.message : String(err) } : {}),
    });
  }

  private check(): Promise<void> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    let position: string;
    try {
      const [rows] = (await this.primary.raw('SELECT @@log_bin AS log_bin')) as [
        Array<{ log_bin: number | string }>,
      ];
      const logs = Number(rows[0]?.log_bin) === 1;
      if (logs !== this.primaryLogs && !logs) {
        this.log.error('the primary writes no binary log: every read stays on the primary');
      }
      this.primaryLogs = logs;
      position = await this.primaryPosition();
    } catch (err) {
      this.log.warn('replica check: primary not answering', {
        error: err instanceof Error ? err.message : String(err),
      });
      return;
    }
    await Promise.all(
      this.replicas.map(async (replica) => {
        // In service: kept while it reaches the primary within the lag bound. Out of service:
        // back once it reaches the primary within a read's bound (caught up, not just close).
        const bound = replica.inService ? this.settings.maxLagMs : this.settings.waitMs;
        try {
          const waited = await this.wait(replica, position, bound);
          if (waited !== 0) return this.takeOut(replica, `lagging more than ${bound} ms`);
        } catch (err) {
          return this.takeOut(replica, 'not answering', err);
        }
        if (!replica.inService && this.primaryLogs) {
          replica.inService = true;
          replica.timeoutsInARow = 0;
          this.log.info('replica in service', { replica: replica.name });
        }
      }),
    );
  }
}
