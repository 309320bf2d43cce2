// A MariaDB primary and a replica of its own, for the replica tests and bench: two mariadbd
// processes, each with its own data directory and port, the replica following the primary by
// GTID. The machine's MariaDB writes no binary log, so it cannot be a primary. Stopped by pid.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MariadbServer, mariadbMissing } from './mariadb-server.js';
import { freePort } from './processes.js';

/** Why the pair cannot be started here (a binary missing), or undefined when it can. */
export const mariadbPairMissing = (): string | undefined => mariadbMissing();

/** A server of the pair: a binary log by GTID, and settings for speed (tests, not durability). */
class Server extends MariadbServer {
  constructor(
    name: string,
    dir: string,
    port: number,
    readonly serverId: number,
  ) {
    super(name, dir, port);
  }

  override start(): Promise<void> {
    return super.start([
      `--server-id=${this.serverId}`,
      `--log-bin=${join(this.dir, 'data', 'bin')}`,
      '--gtid-strict-mode=1',
      '--binlog-format=ROW',
      '--innodb-buffer-pool-size=64M',
      '--innodb-log-file-size=48M',
      '--innodb-flush-log-at-trx-commit=2',
      '--sync-binlog=0',
    ]);
  }
}

export class MariadbPair {
  private constructor(
    readonly dir: string,
    readonly primary: Server,
    readonly replica: Server,
    readonly database: string,
  ) {}

  /** Installs, starts and links the two servers; the database is created on the primary. */
  static async start(database = 'wrs'): Promise<MariadbPair> {
    const dir = mkdtempSync(join(tmpdir(), 'wrs-mariadb-pair-'));
    const primary = new Server('primary', join(dir, 'primary'), await freePort(), 1);
    const replica = new Server('replica', join(dir, 'replica'), await freePort(), 2);
    const pair = new MariadbPair(dir, primary, replica, database);
    try {
      primary.install();
      replica.install();
      await Promise.all([primary.start(), replica.start()]);
      // mariadb-install-db made root@127.0.0.1 (no password) on each: used over TCP.
      replica.sql(
        `CHANGE MASTER TO master_host = '127.0.0.1', master_port = ${primary.port}, ` +
          "master_user = 'root', master_password = '', master_use_gtid = slave_pos; START SLAVE",
      );
      primary.sql(`CREATE DATABASE \`${database}\``);
      await pair.waitCaughtUp();
      return pair;
    } catch (err) {
      await pair.stop();
      throw err;
    }
  }

  url(server: 'primary' | 'replica'): string {
    const port = server === 'primary' ? this.primary.port : this.replica.port;
    return `mysql://root@127.0.0.1:${port}/${this.database}`;
  }

  /** What an API process is given to read from the replica. */
  get env(): Record<string, string> {
    return { DATABASE_URL: this.url('primary'), DATABASE_REPLICA_URLS: this.url('replica') };
  }

  /** Waits until the replica applied everything the primary wrote. */
  async waitCaughtUp(timeoutS = 30): Promise<void> {
    const position = this.primary.sql('SELECT @@gtid_binlog_pos');
    const waited = this.replica.sql(`SELECT MASTER_GTID_WAIT('${position}', ${timeoutS})`);
    if (waited !== '0') throw new Error(`replica did not reach ${position} in ${timeoutS} s`);
  }

  /** A global status counter of the replica (Com_select: the SELECTs it was sent). */
  replicaStatus(name: string): number {
    const line = this.replica.sql(`SHOW GLOBAL STATUS LIKE '${name}'`);
    return Number(line.split('\t')[1]);
  }

  stopReplicaSql(): void {
    this.replica.sql('STOP SLAVE SQL_THREAD');
  }

  startReplicaSql(): void {
    this.replica.sql('START SLAVE');
  }

  /** kill -9 the replica. */
  async killReplica(): Promise<void> {
    await this.replica.stop('SIGKILL');
  }

  /** Starts the replica again on its data directory; it resumes replicating by itself. */
  async restartReplica(): Promise<void> {
    await this.replica.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.primary.stop('SIGTERM'), this.replica.stop('SIGTERM')]);
    if (!process.env.TEST_KEEP_DATA) rmSync(this.dir, { recursive: true, force: true });
  }
}
