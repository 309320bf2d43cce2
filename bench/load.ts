// The load generator of the create benchmark, run as a child process so it does not share an
// event loop with anything it measures: a fixed number of connections against one URL for a
// fixed time, closed loop (a connection sends its next request when the last is answered).
// wrk where it is installed (Debian's `wrk`: one thread in C, so the generator takes little of
// the cores it shares with what it measures), autocannon otherwise. It stays up for the whole
// phase and takes one run per line of stdin (JSON LoadOptions), answering each with a RESULT
// line. It ends when its stdin closes.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { serveRequests } from './child.js';

export interface LoadOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

export type LoadGenerator = 'wrk' | 'autocannon';

export interface LoadResult {
  generator: LoadGenerator;
  requestsPerSecond: number;
  ok: number;
  /** Latency percentiles and maximum, milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}

/** wrk when the machine has it (BENCH_LOAD=autocannon forces autocannon). */
export function loadGenerator(): LoadGenerator {
  if (process.env.BENCH_LOAD === 'autocannon') return 'autocannon';
  return spawnSync('wrk', ['-v']).error ? 'autocannon' : 'wrk';
}

async function withAutocannon(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    timeout: 10,
  });
  return {
    generator: 'autocannon',
    requestsPerSecond: result['2xx'] / result.duration,
    ok: result['2xx'],
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  };
}

/** A Lua string literal of any text (a long bracket whose level the text does not close). */
function luaString(text: string): string {
  let level = '';
  while (text.includes(`]${level}]`)) level += '=';
  return `[${level}[${text}]${level}]`;
}

interface WrkSummary {
  requests: number;
  duration: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

// wrk's done() hook prints the figures as one JSON line (latencies in microseconds).
const WRK_DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"duration":%d,"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;

async function withWrk(options: LoadOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'wrs-load-'));
  const script = join(dir, 'request.lua');
  const headers = { 'content-type': 'application/json', ...options.headers };
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = ${luaString(options.body)}`,
      ...Object.entries(headers).map(
        ([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`,
      ),
      WRK_DONE,
    ].join('\n'),
  );
  try {
    const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '10s'];
    const child = spawn('wrk', [...args, '-s', script, options.url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = out.split('\n').find((l) => l.startsWith('WRK '));
    if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${out}`);
    const s = JSON.parse(line.slice(4)) as WrkSummary;
    // wrk counts an answer outside 2xx/3xx as a status error; the service answers 200 or 202.
    const ok = s.requests - s.status;
    return {
      generator: 'wrk',
      requestsPerSecond: ok / (s.duration / 1e6),
      ok,
      p50: s.p50 / 1000,
      p90: s.p90 / 1000,
      p99: s.p99 / 1000,
      max: s.max / 1000,
      errors: s.connect + s.read + s.write,
      timeouts: s.timeout,
      non2xx: s.status,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const generator = loadGenerator();
const runLoad = generator === 'wrk' ? withWrk : withAutocannon;

serveRequests<LoadOptions>(runLoad);
process.stdout.write('ready\n');
