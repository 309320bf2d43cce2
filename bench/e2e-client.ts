// The end-to-end probe, run as a child process: sends creates at a fixed rate (open loop, so a
// slow answer does not slow the schedule) and keeps reading the newest page of the list. The
// latency of a run is the time from its create response to the first list response that
// shows it no longer pending (started by a worker).
import { Agent } from 'node:http';
import { httpRequest } from './http-request.js';
import { performance } from 'node:perf_hooks';
import { childOptions, emitResult, runChild } from './child.js';
import { summarize, type LatencySummary } from './stats.js';

export interface E2eOptions {
  baseUrl: string;
  key: string;
  body: string;
  rate: number;
  seconds: number;
  /**
   * Largest page of the list reads. A page reaches back as far as the oldest run still
   * waiting (at the create rate, with a margin), up to this size. A run older than the largest
   * page covers can no longer be seen: it is counted as unseen, with its age at that moment as
   * its latency (a lower bound).
   */
  pollLimit: number;
  /** Least time between the starts of two list reads (they run one at a time). */
  pollIntervalMs: number;
  /** How long to keep reading for runs not yet seen after the last create. */
  settleMs: number;
}

export interface E2eResult {
  sent: number;
  created: number;
  createErrors: number;
  achievedRate: number;
  createLatency: LatencySummary;
  endToEnd: LatencySummary;
  /** Runs never seen started (fell off the page or never started): counted as failures. */
  unseen: number;
  polls: number;
  pollLatency: LatencySummary;
}

runChild(async () => {
  const o = childOptions<E2eOptions>();
  const createUrl = new URL(`${o.baseUrl}/create-workflow-run`);
  const pageFor = (age: number) =>
    Math.max(50, Math.min(o.pollLimit, Math.ceil((age * o.rate * 1.2) / 1000) + 20));
  const listUrl = (limit: number) => new URL(`${o.baseUrl}/get-workflow-runs?limit=${limit}`);
  // Runs of this age may have more than pollLimit newer runs above them: out of sight.
  const visibleMs = ((o.pollLimit - 20) * 1000) / (o.rate * 1.2);
  let unseen = 0;
  const createAgent = new Agent({ keepAlive: true, maxSockets: 64 });
  const listAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const createHeaders = {
    authorization: o.key,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(o.body)),
  };

  const waiting = new Map<string, number>(); // run id -> time of its create response
  const endToEnd: number[] = [];
  const createLatency: number[] = [];
  const pollLatency: number[] = [];
  let sent = 0;
  let created = 0;
  let createErrors = 0;
  let inFlight = 0;
  let polls = 0;

  const createOne = async () => {
    sent++;
    inFlight++;
    const started = performance.now();
    try {
      const reply = await httpRequest(createAgent, createUrl, 'POST', createHeaders, o.body);
      const now = performance.now();
      if (reply.status !== 200) {
        createErrors++;
        return;
      }
      createLatency.push(now - started);
      created++;
      waiting.set((JSON.parse(reply.body) as { id: string }).id, now);
    } catch {
      createErrors++;
    } finally {
      inFlight--;
    }
  };

  // The schedule: at every tick, send every create that is due by now.
  const start = performance.now();
  const total = Math.round(o.rate * o.seconds);
  const pacing = new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * o.rate) / 1000));
      while (sent < due) void createOne();
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });

  let pacingDone = false;
  let pacedSeconds = o.seconds;
  void pacing.then(() => {
    pacingDone = true;
    pacedSeconds = (performance.now() - start) / 1000;
  });
  let settleDeadline = Number.POSITIVE_INFINITY;
  let lastPoll = 0;
  const listHeaders = { authorization: o.key };
  for (;;) {
    if (pacingDone && inFlight === 0 && settleDeadline === Number.POSITIVE_INFINITY) {
      settleDeadline = performance.now() + o.settleMs;
    }
    if (pacingDone && inFlight === 0 && (waiting.size === 0 || performance.now() > settleDeadline))
      break;
    const wait = lastPoll + o.pollIntervalMs - performance.now();
    if (waiting.size === 0 || wait > 0) {
      await new Promise((r) => setTimeout(r, Math.max(1, wait)));
      continue;
    }
    const asked = performance.now();
    lastPoll = asked;
    for (const [id, at] of waiting) {
      if (asked - at <= visibleMs) break; // the map is in order of creation
      endToEnd.push(asked - at);
      waiting.delete(id);
      unseen++;
    }
    if (waiting.size === 0) continue;
    const oldest = waiting.values().next().value ?? asked;
    const reply = await httpRequest(
      listAgent,
      listUrl(pageFor(asked - oldest)),
      'GET',
      listHeaders,
    );
    const now = performance.now();
    polls++;
    pollLatency.push(now - asked);
    if (reply.status !== 200) continue;
    for (const run of JSON.parse(reply.body) as Array<{ id: string; status: string }>) {
      if (run.status === 'pending') continue;
      const at = waiting.get(run.id);
      if (at === undefined) continue;
      endToEnd.push(now - at);
      waiting.delete(run.id);
    }
  }
  const end = performance.now();
  for (const at of waiting.values()) endToEnd.push(end - at);
  unseen += waiting.size;
  createAgent.destroy();
  listAgent.destroy();
  const result: E2eResult = {
    sent,
    created,
    createErrors,
    achievedRate: Math.round(created / pacedSeconds),
    createLatency: summarize(createLatency),
    endToEnd: summarize(endToEnd),
    unseen,
    polls,
    pollLatency: summarize(pollLatency),
  };
  emitResult(result);
});
