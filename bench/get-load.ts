// A closed-loop GET load, run as a child process (the replica phase): a fixed number of
// connections against one URL for a fixed time, with autocannon.
import autocannon from 'autocannon';
import { childOptions, emitResult, runChild } from './child.js';

export interface GetLoadOptions {
  url: string;
  key: string;
  connections: number;
  seconds: number;
}

export interface GetLoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Answers that were not 2xx, and connection errors and timeouts. */
  failed: number;
}

runChild(async () => {
  const o = childOptions<GetLoadOptions>();
  const result = await autocannon({
    url: o.url,
    method: 'GET',
    headers: { authorization: o.key },
    connections: o.connections,
    duration: o.seconds,
    timeout: 10,
  });
  emitResult({
    requestsPerSecond: Math.round(result['2xx'] / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors + result.timeouts,
  } satisfies GetLoadResult);
});
