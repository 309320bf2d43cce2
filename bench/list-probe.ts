// The list probe, run as a child process: sequential GETs over keep-alive, taking the URLs in
// turn so that any noise on the machine falls on all of them alike. Times are taken with the
// high-resolution clock (autocannon rounds to whole milliseconds, too coarse for a 3 ms page).
import { Agent } from 'node:http';
import { httpRequest } from './http-request.js';
import { performance } from 'node:perf_hooks';
import { childOptions, emitResult, runChild } from './child.js';
import { summarize, type LatencySummary } from './stats.js';

export interface ListProbeOptions {
  targets: Array<{ name: string; url: string; key: string }>;
  samples: number;
  warmup: number;
}

/**
 * Each target's latencies, rows, and `blockP99`: the median of the p99s of five consecutive
 * blocks of its samples. The targets take turns within each block, so a burst of noise on the
 * machine (another process, a GC) falls on one block of every target; one block's p99 no
 * longer decides the tail of one target and not of another.
 */
export type ListProbeResult = Record<string, LatencySummary & { rows: number; blockP99: number }>;

const BLOCKS = 5;

runChild(async () => {
  const o = childOptions<ListProbeOptions>();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times = new Map<string, number[]>(o.targets.map((t) => [t.name, []]));
  const rows = new Map<string, number>();
  for (let i = 0; i < o.warmup + o.samples; i++) {
    for (const target of o.targets) {
      const started = performance.now();
      const reply = await httpRequest(agent, target.url, 'GET', { authorization: target.key });
      const ms = performance.now() - started;
      if (reply.status !== 200) throw new Error(`${target.name}: HTTP ${reply.status}`);
      if (i === 0) rows.set(target.name, (JSON.parse(reply.body) as unknown[]).length);
      if (i >= o.warmup) times.get(target.name)!.push(ms);
    }
  }
  agent.destroy();
  const result: ListProbeResult = {};
  for (const target of o.targets) {
    const all = times.get(target.name)!;
    const size = Math.ceil(all.length / BLOCKS);
    const p99s = Array.from(
      { length: BLOCKS },
      (_, b) => summarize(all.slice(b * size, (b + 1) * size)).p99,
    ).sort((a, b) => a - b);
    result[target.name] = {
      ...summarize(all),
      rows: rows.get(target.name)!,
      blockP99: p99s[Math.floor(BLOCKS / 2)]!,
    };
  }
  emitResult(result);
});
