// The stream phase's second part: a live event stream while a worker drains a backlog, which is
// when a stream is most behind and most watched (a worker back from an outage). The backlog is
// stored and its turn enqueued as the API does it (seedBacklog), then a worker starts, while a
// stream of the tenant's run.started events is open on an API process. Each event is timed from
// its own `timestamp` (the worker's clock as it applied the change, before its batch was
// written: so the figure includes the batch's write) to its arrival. Every run must arrive
// once: a run missing or twice is reported.
//
// This is where gaps in run_events' ids would show: a stream holds back past a gap for its
// grace (src/streams/event-watermark.ts), and a worker's batch that took ids it did not use
// left one per batch.
import type { Db } from '../../src/db.js';
import { seedBacklog } from '../backlog.js';
import { openEventStream } from '../event-stream-client.js';
import { clearQueue, clearRuns, type Tenant } from '../fixtures.js';
import { sleep, startScript, waitForWorker } from '../processes.js';
import { PREFIXES, serviceEnv } from '../settings.js';
import { summarize, type LatencySummary } from '../stats.js';

export interface DrainStreamResult {
  runs: number;
  received: number;
  missing: number;
  duplicates: number;
  /** The run's start applied (its event's timestamp) → the event received on the stream. */
  latency: LatencySummary;
  /** Seconds from the first start applied to the last. */
  drainSeconds: number;
}

/** Seconds to wait, after the worker is ready, for every run's event. */
const DEADLINE_SECONDS = 120;

export async function measureDrainStream(deps: {
  db: Db;
  tenant: Tenant;
  /** The API process holding the stream. */
  streamUrl: string;
  runs: number;
}): Promise<DrainStreamResult> {
  const { tenant } = deps;
  // Arrival (ms since the epoch, sub-millisecond) and the event's own timestamp, by run.
  const arrivals = new Map<string, { arrived: number; at: number }>();
  let duplicates = 0;
  const stream = await openEventStream(deps.streamUrl, tenant.key, 'run.started', (event, at) => {
    if (arrivals.has(event.data.runId)) duplicates++;
    // performance.now() as ms since the epoch, to compare with the event's timestamp.
    else {
      arrivals.set(event.data.runId, {
        arrived: performance.timeOrigin + at,
        at: Date.parse(event.timestamp),
      });
    }
  });

  const ids = await seedBacklog(deps.db, tenant, PREFIXES.api, deps.runs, 'as-api');
  const worker = startScript('stream-drain-worker', 'workers/main.js', {
    env: serviceEnv(PREFIXES.api),
  });
  try {
    await waitForWorker(worker, 'workers/main.js');
    const deadline = Date.now() + DEADLINE_SECONDS * 1000;
    while (ids.some((id) => !arrivals.has(id)) && Date.now() < deadline) await sleep(50);
    await sleep(500); // a duplicate would come now
  } finally {
    stream.destroy();
    await worker.stop();
  }
  const latency: number[] = [];
  let first = Infinity;
  let last = -Infinity;
  let missing = 0;
  for (const id of ids) {
    const arrival = arrivals.get(id);
    if (!arrival) {
      missing++;
      continue;
    }
    latency.push(arrival.arrived - arrival.at);
    first = Math.min(first, arrival.at);
    last = Math.max(last, arrival.at);
  }
  if (process.env.BENCH_DRAIN_STREAM_TRACE) {
    const lines = [...arrivals.values()].map((a) => `${a.at} ${(a.arrived - a.at).toFixed(1)}`);
    (await import('node:fs')).writeFileSync(process.env.BENCH_DRAIN_STREAM_TRACE, lines.join('\n'));
  }
  await clearRuns(deps.db);
  await clearQueue(PREFIXES.api);
  return {
    runs: ids.length,
    received: arrivals.size,
    missing,
    duplicates,
    latency: summarize(latency),
    drainSeconds: Number(((last - first) / 1000).toFixed(2)),
  };
}
