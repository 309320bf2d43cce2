// A private redis-server for one test: the fault tests flush, kill and restart it, which they
// must never do to the machine's shared Redis. It keeps nothing on disk, like the test
// machines' Redis, so a restart comes back empty.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { freePort } from './processes.js';

const running = new Set<ChildProcess>();
// A test run that ends abruptly must not leave servers behind.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class RedisServer {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'wrs-redis-'));

  private constructor(
    readonly port: number,
    private readonly extraArgs: string[],
  ) {}

  static async start(port?: number, extraArgs: string[] = []): Promise<RedisServer> {
    const server = new RedisServer(port ?? (await freePort()), extraArgs);
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** What a service process is given to use this Redis. */
  get env(): Record<string, string> {
    return { REDIS_URL: this.url };
  }

  /** BullMQ connection options for the test's own queues. */
  connection(): ConnectionOptions {
    return { url: this.url, maxRetriesPerRequest: 1 };
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** The server's pid while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the server (again) on its port, empty. */
  async launch(): Promise<void> {
    if (this.child) throw new Error('redis-server already running');
    const child = spawn(
      process.env.REDIS_SERVER_BIN || 'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        // As the BullMQ production guide asks: never evict job data.
        '--maxmemory-policy',
        'noeviction',
        ...this.extraArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    running.add(child);
    child.on('exit', () => {
      running.delete(child);
      if (this.child === child) this.child = undefined;
    });
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/.test(output)) resolve();
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) =>
        reject(new Error(`redis-server exited with ${code} before it was ready:\n${output}`)),
      );
      child.once('error', reject);
    });
  }

  /** Kills the server at once (kill -9 by pid): every connection drops, every key is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid, 'SIGKILL');
    await exited;
  }

  /** Runs one command on a short-lived connection of the test's own. */
  async command<T = unknown>(name: string, ...args: Array<string | number>): Promise<T> {
    const redis = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      return (await redis.call(name, ...args)) as T;
    } finally {
      redis.disconnect();
    }
  }

  flushAll(): Promise<unknown> {
    return this.command('FLUSHALL');
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
