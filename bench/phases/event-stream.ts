// Phase "stream": a change committed through one API process reaches a live event stream held
// by another. Two API processes over the same MySQL and Redis: a stream of the tenant's events
// is opened on the first (GET /stream-run-events, read here), and creates are sent to the
// second at a fixed rate (open loop). Each run.created is matched to its create: latency is
// from the create being sent (an upper bound of its commit, which comes before the answer)
// to the event's arrival on the stream, and from the create's answer (after the commit, so a
// lower bound; it can be below 0 when the stream is faster than the answer). The flow runs a
// second before it is measured (a steady flow, not its ramp: the client's connections opening,
// both processes' first turns at this rate). Beside it, a quiet echo: a bare HTTP endpoint sent
// a request every 20 ms, whose p99 says how much of a tail the machine itself put there.
import { Agent } from 'node:http';
import { openEventStream } from '../event-stream-client.js';
import { httpRequest } from '../http-request.js';
import type { Db } from '../../src/db.js';
import { clearQueue, clearRuns, createBody, type Tenant } from '../fixtures.js';
import { sleep } from '../processes.js';
import { PREFIXES } from '../settings.js';
import { summarize, type LatencySummary } from '../stats.js';

export interface StreamResult {
  rate: number;
  seconds: number;
  created: number;
  received: number;
  missing: number;
  duplicates: number;
  /** Create sent → event received on the other process's stream. */
  fromSent: LatencySummary;
  /** Create answered → event received. */
  fromAnswered: LatencySummary;
  /** The quiet echo's round trips over the measured seconds. */
  echo: LatencySummary;
}

/** Seconds the flow runs before it is measured. */
const LEAD_IN_SECONDS = 1;
/** The quiet echo's pace. */
const ECHO_EVERY_MS = 20;

export async function measureStream(deps: {
  db: Db;
  tenant: Tenant;
  /** The process holding the stream, and the one the changes go through. */
  streamUrl: string;
  writeUrl: string;
  /** A bare endpoint (the echo baseline), asked beside the flow. */
  echoUrl: string;
  rate: number;
  seconds: number;
  log: (line: string) => void;
}): Promise<StreamResult> {
  const { tenant, rate, seconds } = deps;
  const arrived = new Map<string, number>();
  let duplicates = 0;
  const stream = await openEventStream(deps.streamUrl, tenant.key, 'run.created', (event, at) => {
    if (arrived.has(event.data.runId)) duplicates++;
    else arrived.set(event.data.runId, at);
  });

  const body = createBody(tenant);
  // Kept-alive connections, as a client at this rate holds: without a bound, a slow answer
  // made the client open another connection, and the storm of new connections (each one
  // dear on a busy machine) was what the figures from the send measured.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const headers = {
    authorization: tenant.key,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  };
  const sent = new Map<string, { sentAt: number; answeredAt: number }>();
  const sends: Array<Promise<void>> = [];
  const lead = rate * LEAD_IN_SECONDS;
  const began = performance.now();
  let echoing = true;
  const echoTimes: number[] = [];
  const echoBody = '{}';
  const echoed = (async () => {
    const echoAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    const echoHeaders = {
      'content-type': 'application/json',
      'content-length': String(echoBody.length),
    };
    while (echoing) {
      const at = performance.now();
      await httpRequest(echoAgent, deps.echoUrl, 'POST', echoHeaders, echoBody).catch(
        () => undefined,
      );
      if (at >= began + LEAD_IN_SECONDS * 1000) echoTimes.push(performance.now() - at);
      await sleep(Math.max(0, ECHO_EVERY_MS - (performance.now() - at)));
    }
    echoAgent.destroy();
  })();
  for (let i = 0; i < lead + rate * seconds; i++) {
    const due = began + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const sentAt = performance.now();
    const measured = i >= lead;
    sends.push(
      httpRequest(agent, `${deps.writeUrl}/create-workflow-run`, 'POST', headers, body).then(
        (reply) => {
          const answeredAt = performance.now();
          const answer = (reply.status === 200 ? JSON.parse(reply.body) : {}) as { id?: string };
          if (answer.id && measured) sent.set(answer.id, { sentAt, answeredAt });
        },
        () => undefined,
      ),
    );
  }
  await Promise.all(sends);
  echoing = false;
  await echoed;
  agent.destroy();
  const deadline = Date.now() + 10_000;
  while ([...sent.keys()].some((id) => !arrived.has(id)) && Date.now() < deadline) {
    await sleep(50);
  }
  await sleep(500); // a duplicate would come now
  stream.destroy();

  // For finding where a tail comes from: BENCH_STREAM_TRACE=file writes each measured create
  // as "ms since the flow began, sent → answered ms, sent → received ms".
  if (process.env.BENCH_STREAM_TRACE) {
    const lines = [...sent].map(
      ([id, { sentAt, answeredAt }]) =>
        `${(sentAt - began).toFixed(1)} ${(answeredAt - sentAt).toFixed(1)} ${((arrived.get(id) ?? NaN) - sentAt).toFixed(1)}`,
    );
    (await import('node:fs')).writeFileSync(process.env.BENCH_STREAM_TRACE, lines.join('\n'));
  }
  const fromSent: number[] = [];
  const fromAnswered: number[] = [];
  let missing = 0;
  for (const [id, { sentAt, answeredAt }] of sent) {
    const at = arrived.get(id);
    if (at === undefined) {
      missing++;
      continue;
    }
    fromSent.push(at - sentAt);
    fromAnswered.push(at - answeredAt);
  }
  await clearRuns(deps.db);
  await clearQueue(PREFIXES.api);
  return {
    rate,
    seconds,
    created: sent.size,
    received: arrived.size,
    missing,
    duplicates,
    fromSent: summarize(fromSent),
    fromAnswered: summarize(fromAnswered),
    echo: summarize(echoTimes),
  };
}
