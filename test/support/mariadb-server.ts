// One mariadbd of a test's own, in a directory of its own (data, socket, pid file, error log)
// on a port of its own: installed, started with the options its user adds, asked SQL through
// its socket as root, stopped by pid. The replica pair (mariadb-pair.ts) and the Galera
// cluster (galera-cluster.ts) are made of these.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

const MARIADBD = process.env.MARIADBD_BIN || 'mariadbd';
const INSTALL_DB = process.env.MARIADB_INSTALL_DB_BIN || 'mariadb-install-db';
const CLIENT = process.env.MARIADB_CLIENT_BIN || 'mariadb';

const running = new Set<ChildProcess>();
// A test run that ends abruptly must not leave servers behind.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Why a server cannot be started here (a binary missing, of these or `more`), or undefined. */
export function mariadbMissing(more: readonly string[] = []): string | undefined {
  for (const bin of [MARIADBD, INSTALL_DB, CLIENT, ...more]) {
    if (spawnSync(bin, ['--version']).error) return `${bin} not found`;
  }
  return undefined;
}

export class MariadbServer {
  child: ChildProcess | undefined;
  exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly port: number,
    /** The user mariadbd runs as (its --user); the directory is made theirs. */
    readonly user = 'root',
  ) {}

  get socket(): string {
    return join(this.dir, 'mysqld.sock');
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    const child = this.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  install(): void {
    mkdirSync(this.dir, { recursive: true });
    if (this.user !== userInfo().username) {
      const chown = spawnSync('chown', ['-R', `${this.user}:`, this.dir], { encoding: 'utf8' });
      if (chown.status !== 0) throw new Error(`${this.name}: chown failed: ${chown.stderr}`);
    }
    const result = spawnSync(
      INSTALL_DB,
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        `--user=${this.user}`,
      ],
      { encoding: 'utf8' },
    );
    if (result.status !== 0) {
      throw new Error(`${this.name}: mariadb-install-db failed\n${result.stdout}${result.stderr}`);
    }
  }

  /**
   * Starts mariadbd on its directory and port with `options` beside the common ones, and
   * resolves once `started()` says so (asked every 100 ms, for up to `timeoutMs`).
   */
  async start(
    options: readonly string[],
    started: () => boolean = () => this.answers(),
    timeoutMs = 30000,
  ): Promise<void> {
    const child = spawn(
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--socket=${this.socket}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        '--skip-name-resolve',
        `--user=${this.user}`,
        `--pid-file=${join(this.dir, 'mysqld.pid')}`,
        `--log-error=${join(this.dir, 'error.log')}`,
        '--max-connections=500',
        '--performance-schema=OFF',
        ...options,
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
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.alive) {
        throw new Error(`${this.name}: mariadbd exited at start (see ${this.dir}/error.log)`);
      }
      if (started()) return;
      if (Date.now() > deadline) {
        throw new Error(
          `${this.name}: not started in ${timeoutMs / 1000} s (see ${this.dir}/error.log)`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Whether it answers a query. */
  answers(): boolean {
    try {
      this.sql('SELECT 1');
      return true;
    } catch {
      return false;
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
    if (!this.alive) return;
    this.child!.kill(signal);
    await this.exited;
  }
}
