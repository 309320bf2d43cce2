// Starts the real API and worker processes (built output) for a test, and stops them.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { testEnv } from './env.js';
import { waitFor } from './wait.js';

const root = fileURLToPath(new URL('../../', import.meta.url)); // dist/

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export class ServiceProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly waiters: Array<{ re: RegExp; resolve: () => void }> = [];

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        this.lines.push(line);
        if (process.env.TEST_VERBOSE) process.stderr.write(`[${name}] ${line}\n`);
        for (const w of [...this.waiters]) {
          if (w.re.test(line)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve();
          }
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves when a log line matches (or one already did). */
  waitForLine(re: RegExp, timeoutMs = 15000): Promise<void> {
    if (this.lines.some((l) => re.test(l))) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `${this.name}: no line matching ${re} in ${timeoutMs} ms\n${this.lines.slice(-20).join('\n')}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({ re, resolve: () => (clearTimeout(timer), resolve()) });
      this.exited.then(() =>
        reject(new Error(`${this.name} exited before ${re}\n${this.lines.slice(-20).join('\n')}`)),
      );
    });
  }

  /** Sends a signal and waits for the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }
}

function start(name: string, script: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [root + script], {
    env: { ...process.env, ...testEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new ServiceProcess(name, child);
}

export class ApiProcess extends ServiceProcess {
  constructor(
    child: ChildProcess,
    readonly port: number,
    readonly basePath: string,
  ) {
    super('api', child);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}${this.basePath}`;
  }

  /**
   * Polls /readyz, as a load balancer does, until it answers 200 (the process has warmed up);
   * resolves with that answer's body. For tests whose traffic must meet a warm process.
   */
  async ready(timeoutMs = 30000): Promise<Record<string, unknown>> {
    return waitFor(
      'the API ready',
      async () => {
        const res = await fetch(`${this.url}/readyz`);
        return res.status === 200 && ((await res.json()) as Record<string, unknown>);
      },
      timeoutMs,
    );
  }
}

/** Starts an API process: on env.PORT when given (to restart one in place), else a free port. */
export async function startApi(env: Record<string, string> = {}): Promise<ApiProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = start('api', 'src/server.js', { ...env, PORT: String(port) }).child;
  const api = new ApiProcess(child, port, env.BASE_PATH ?? '');
  // Several API processes: ready once the supervisor has seen each of them listen.
  const several = Number(env.API_PROCESSES ?? '1') > 1;
  await api.waitForLine(
    several ? /"msg":"api processes listening"/ : /"msg":"listening"/,
    several ? 30000 : 15000,
  );
  return api;
}

export async function startWorker(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const worker = start('worker', 'workers/main.js', env);
  await worker.waitForLine(/"msg":"worker started"/);
  return worker;
}

/** Runs the admin CLI to completion. */
export function runAdmin(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [root + 'src/admin/cli.js', ...args], {
      env: { ...process.env, ...testEnv, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
