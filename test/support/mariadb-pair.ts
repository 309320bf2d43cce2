// A MariaDB primary and a replica of its own, for the replica tests and bench: two mariadbd
// processes, each with its own data directory and port, the replica following the primary by
// GTID. The machine's MariaDB writes no binary log, so it cannot be a primary. Stopped by pid.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';

const MARIADBD = process.env.MARIADBD_BIN || 'mariadbd';
const INSTALL_DB = process.env.MARIADB_INSTALL_DB_BIN || 'mariadb-install-db';
const CLIENT = process.env.MARIADB_CLIENT_BIN || 'mariadb';

const running = new Set<ChildProcess>();
// A test run that ends abruptly must not leave servers behind.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Why the pair cannot be started here (a binary missing), or undefined when it can. */
export function mariadbPairMissing(): string | undefined {
  for (const bin of [MARIADBD, INSTALL_DB, CLIENT]) {
    if (spawnSync(bin, ['--version']).error) return `${bin} not found`;
  }
  return undefined;
}

class Server {
  child: ChildProcess | undefined;
  exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly port: number,
    readonly serverId: number,
  ) {}

  get socket(): string {
    return join(this.dir, 'mysqld.sock');
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  install(): void {
    const result = spawnSync(
      INSTALL_DB,
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        '--user=root',
      ],
      { encoding: 'utf8' },
    );
    if (result.status !== 0) {
      throw new Error(`${this.name}: mariadb-install-db failed\n${result.stdout}${result.stderr}`);
    }
  }

  async start(): Promise<void> {
    const child = spawn(
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--socket=${this.socket}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--server-id=${this.serverId}`,
        `--log-bin=${join(this.dir, 'data', 'bin')}`,
        '--gtid-strict-mode=1',
        '--binlog-format=ROW',
        '--skip-name-resolve',
        '--user=root',
        `--pid-file=${join(this.dir, 'mysqld.pid')}`,
        `--log-error=${join(this.dir, 'error.log')}`,
        '--innodb-buffer-pool-size=64M',
        '--innodb-log-file-size=48M',
        '--innodb-flush-log-at-trx-commit=2',
        '--sync-binlog=0',
        '--max-connections=500',
        '--performance-schema=OFF',
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    running.add(child);
    this.exited = new Promise((resolve) =>
      child.on('exit', () => {
        running.delete(child);
        resolve();
      }),
    );
    const deadline = Date.now() + 30000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${this.name}: mariadbd exited at start (see ${this.dir}/error.log)`);
      }
      const ping = spawnSync(CLIENT, [
        '--no-defaults',
        '-uroot',
        `--socket=${this.socket}`,
        '-e',
        'SELECT 1',
      ]);
      if (ping.status === 0) return;
      if (Date.now() > deadline) throw new Error(`${this.name}: mariadbd did not answer in 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Runs SQL through the socket as root; returns the tab-separated output. */
  sql(statement: string): string {
    const result = spawnSync(
      CLIENT,
      ['--no-defaults', '-uroot', `--socket=${this.socket}`, '-N', '-B', '-e', statement],
      { encoding: 'utf8' },
    );
    if (result.status !== 0) throw new Error(`${this.name}: ${statement}: ${result.stderr}`);
    return result.stdout.trim();
  }

  async stop(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await this.exited;
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
