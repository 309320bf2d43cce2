// The load generator of the create benchmark, run as a child process so it does not share an
// event loop with anything it measures: autocannon against one URL, a fixed number of
// connections for a fixed time. It stays up for the whole phase and takes one run per line of
// stdin (JSON LoadOptions), answering each with a RESULT line, so no run pays for starting
// node and autocannon. It ends when its stdin closes.
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { emitResult } from './child.js';

export interface LoadOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  ok: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    timeout: 10,
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats)) statusCodes[code] = stat.count;
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    ok: result['2xx'],
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
  };
}

const lines = createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on('line', (line) => {
  if (line.trim() === '') return;
  queue = queue.then(async () => {
    try {
      emitResult(await runLoad(JSON.parse(line) as LoadOptions));
    } catch (err) {
      emitResult({ error: (err as Error)?.stack ?? String(err) });
    }
  });
});
lines.on('close', () => void queue.then(() => process.exit(0)));
process.stdout.write('ready\n');
