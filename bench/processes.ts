// The processes a bench run starts: the built service (API, worker), the baselines and the
// load generators. Every one is registered, so stopAll() ends them all even when a phase fails.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  createReadStream,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESULT_MARK } from './child.js';
import { LOG_DIR } from './settings.js';

/** The build output (dist/), where every script is started from. */
const DIST = fileURLToPath(new URL('../', import.meta.url));
/**
 * Where the service's own scripts (src/, workers/) come from: this build, or another one
 * named by BENCH_SERVICE_DIST (to compare two versions of the service with the same bench).
 */
const SERVICE_DIST = process.env.BENCH_SERVICE_DIST || DIST;
const scriptPath = (script: string) =>
  join(script.startsWith('bench/') ? DIST : SERVICE_DIST, script);

const running = new Set<BenchProcess>();
/** Node flags of the worker processes (BENCH_WORKER_NODE_ARGS, e.g. --cpu-prof). */
export const WORKER_NODE_ARGS = (process.env.BENCH_WORKER_NODE_ARGS ?? '')
  .split(' ')
  .filter(Boolean);

export class BenchProcess {
  readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logPath: string | undefined,
    /**
     * Where this process's lines begin in its log: a name used again (a round's worker, the
     * next drain's) appends to the same file, and the lines before are another process's.
     */
    private readonly logStart = 0,
  ) {
    running.add(this);
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? -1 : null);
        running.delete(this);
        resolve(this.exitCode);
      }),
    );
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`${this.name} did not start`);
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /**
   * What this process has logged so far (service processes log to a file, not to the bench's
   * pipes): not what an earlier process of the same name left in the file.
   */
  log(): string {
    if (!this.logPath) return '';
    try {
      return readFileSync(this.logPath).subarray(this.logStart).toString('utf8');
    } catch {
      return '';
    }
  }

  /** How many lines of the log contain the text (read as a stream: the API's log is large). */
  async countInLog(text: string): Promise<number> {
    if (!this.logPath) return 0;
    let count = 0;
    let carry = '';
    const stream = createReadStream(this.logPath, { encoding: 'utf8', start: this.logStart });
    for await (const chunk of stream) {
      const lines = (carry + (chunk as string)).split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) if (line.includes(text)) count++;
    }
    return count + (carry.includes(text) ? 1 : 0);
  }

  tail(lines = 15): string {
    return this.log().trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Resolves once a log line matches; rejects on timeout or if the process exits first. */
  async waitForLog(re: RegExp, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (re.test(this.log())) return;
      if (!this.running) throw new Error(`${this.name} exited before ${re}:\n${this.tail()}`);
      await sleep(50);
    }
    throw new Error(`${this.name}: no log line matching ${re} in ${timeoutMs} ms:\n${this.tail()}`);
  }

  /** SIGTERM, then SIGKILL if it has not exited within the grace period. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * Starts a built script (path relative to dist/) with node. Service processes log to a file
 * under LOG_DIR; bench children keep a stdin pipe (they exit when it closes) and report on
 * stdout.
 */
export function startScript(
  name: string,
  script: string,
  options: { env?: Record<string, string>; args?: string[]; nodeArgs?: string[] } = {},
): BenchProcess {
  const logPath = join(LOG_DIR, `${name}.log`);
  const fd = openSync(logPath, 'a');
  const logStart = fstatSync(fd).size;
  // For profiling: BENCH_WORKER_NODE_ARGS="--cpu-prof" for the worker processes.
  const nodeArgs = options.nodeArgs ?? (script.includes('worker') ? WORKER_NODE_ARGS : []);
  try {
    const child = spawn(
      process.execPath,
      [...nodeArgs, scriptPath(script), ...(options.args ?? [])],
      {
        env: { ...process.env, ...options.env },
        stdio: ['pipe', fd, fd],
        cwd: LOG_DIR,
      },
    );
    return new BenchProcess(name, child, logPath, logStart);
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the service build says when its worker takes jobs ("worker ready"); a build from
 * before that line (an A/B against an older one) says only "worker started".
 */
const SAYS_READY = existsSync(join(SERVICE_DIST, 'workers/readiness.js'));

/**
 * Resolves once a worker started with startScript takes jobs: the service's at its "worker
 * ready" line (its connections up, its scripts loaded, MySQL answering), a baseline's at its
 * "worker started" (written once it works). A phase's clock starts here, as the create phases'
 * start at the API's /readyz.
 */
export async function waitForWorker(worker: BenchProcess, script: string): Promise<void> {
  const service = !script.startsWith('bench/');
  await worker.waitForLog(
    service && SAYS_READY ? /"msg":"worker ready"/ : /"msg":"worker started"/,
  );
}

/** Runs a bench child to completion and returns the result it reported. */
export async function runChildScript<T>(
  name: string,
  script: string,
  options: unknown,
  timeoutMs: number,
): Promise<T> {
  const child = spawn(process.execPath, [join(DIST, script), JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    cwd: LOG_DIR,
  });
  const proc = new BenchProcess(name, child, undefined);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await proc.exited;
  clearTimeout(timer);
  const line = stdout
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(RESULT_MARK));
  if (code !== 0 || !line) {
    throw new Error(`${name} failed (exit ${code}):\n${stderr.slice(-2000)}${stdout.slice(-500)}`);
  }
  return JSON.parse(line.slice(RESULT_MARK.length)) as T;
}

/**
 * A long-lived bench child that takes one JSON request per stdin line and answers each with a
 * RESULT line (the load generator), so a series of runs starts node only once.
 */
export class RequestChild {
  private readonly proc: BenchProcess;
  private buffer = '';
  private stderr = '';
  private waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];

  constructor(
    readonly name: string,
    script: string,
  ) {
    const child = spawn(process.execPath, [join(DIST, script)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      cwd: LOG_DIR,
    });
    this.proc = new BenchProcess(name, child, undefined);
    child.stdout?.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('utf8');
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (line.startsWith(RESULT_MARK)) this.waiting.shift()?.resolve(line);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    void this.proc.exited.then((code) => {
      const err = new Error(`${name} exited (${code}):\n${this.stderr.slice(-2000)}`);
      for (const w of this.waiting.splice(0)) w.reject(err);
    });
  }

  get pid(): number {
    return this.proc.pid;
  }

  async request<T>(options: unknown, timeoutMs: number): Promise<T> {
    if (!this.proc.running) throw new Error(`${this.name} is not running`);
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${this.name}: no answer in ${timeoutMs} ms`));
        this.proc.child.kill('SIGKILL');
      }, timeoutMs);
      this.waiting.push({
        resolve: (l) => (clearTimeout(timer), resolve(l)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.proc.child.stdin?.write(JSON.stringify(options) + '\n');
    });
    const result = JSON.parse(line.slice(RESULT_MARK.length)) as T | { error: string };
    if (result && typeof result === 'object' && 'error' in result) {
      throw new Error(`${this.name}: ${result.error}`);
    }
    return result as T;
  }

  /** Closes its stdin (it exits when done) and waits for it. */
  async close(): Promise<void> {
    this.proc.child.stdin?.end();
    const timer = setTimeout(() => this.proc.child.kill('SIGKILL'), 5000);
    await this.proc.exited;
    clearTimeout(timer);
  }
}

/** Ends every process still running (on success, failure or interruption). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop(5000)));
}

/** Kills everything at once, without waiting (used when the bench itself is exiting). */
export function killAllNow(): void {
  for (const p of running) p.child.kill('SIGKILL');
}

/** Resident memory of a process, in MiB, from /proc/<pid>/status (VmRSS). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) / 1024;
}

export function freePort(): Promise<number> {
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

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls a URL until it answers 200 (a server is up). */
export async function waitForHttp(url: string, proc: BenchProcess, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!proc.running) throw new Error(`${proc.name} exited:\n${proc.tail()}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`${proc.name}: ${url} did not answer in ${timeoutMs} ms:\n${proc.tail()}`);
}
