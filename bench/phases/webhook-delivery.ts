// Phase 5: webhooks. One endpoint subscribed to run.created, pointed at a receiver in this
// process that answers 200 at once, and a bare HTTP POST loop to the same receiver as the
// baseline (a body of the same size, a Standard Webhooks signature made per request, the same
// concurrency as the service's delivery workers):
//   - throughput: a backlog of events (runs created while no worker runs), then one worker
//     started; deliveries per second from its "worker ready" line (it takes jobs from then
//     on) to the last arrival. That worker also starts every run of the backlog (a worker
//     that was down comes back to both); the same backlog is then delivered again by a new
//     worker with its runs already started (its events made undispatched again, its
//     deliveries gone), which is the webhooks' own throughput. Against them, the bare loop
//     posts as many bodies from a process started for it, as each worker is
//     (bench/bare-poster.ts), timed from its first post, once before the drains and once
//     after; run again in the same process, warm, it is reported too;
//   - latency: creates at a fixed rate with the worker running; from the event's time (the
//     change) to its arrival at the receiver, against the loop's send-to-arrival at that rate.
import { createServer, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '../../src/db.js';
import { barePost, inPool } from '../bare-post.js';
import type { BareOptions, BareResult } from '../bare-poster.js';
import { CpuMeter, cpuList, storagePids } from '../cpu.js';
import { createBody, type Tenant } from '../fixtures.js';
import { RequestChild, startScript, sleep, waitForWorker } from '../processes.js';
import { BENCH_REDIS_URL, PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { summarize, type LatencySummary } from '../stats.js';

export interface WebhookPhaseResult {
  /** Events in the backlog, and deliveries per second: the service's and the bare loop's. */
  backlog: number;
  deliveriesPerSecond: number;
  barePerSecond: number;
  /** The same backlog delivered again, its runs already started: deliveries per second. */
  startedPerSecond: number;
  /** CPU µs per delivery of that drain, by process (as cpuUsPerDelivery). */
  startedCpuUsPerDelivery: Record<string, number>;
  /** Events per second of the latency run, and change → receipt (service) / send → receipt. */
  rate: number;
  latency: LatencySummary;
  bareLatency: LatencySummary;
  /** Events of the latency run that never arrived. */
  missing: number;
  /**
   * CPU µs per delivery of the latency run, by process (as cpuUsPerDelivery, and the API):
   * what a service under a steady flow pays for each run created, started and announced.
   */
  rateCpuUsPerDelivery: Record<string, number>;
  /**
   * CPU µs per delivery of the backlog, by process: the worker, MariaDB (mariadbd or mysqld),
   * Redis (redis-server), and this process (the receiver).
   */
  cpuUsPerDelivery: Record<string, number>;
  /** CPU µs per post of the bare loop: its process (sender) and this one (receiver). */
  bareCpuUsPerPost: { sender: number; receiver: number };
  /** The bare loop run again in the same process, warm: posts per second, sender CPU µs. */
  warmPerSecond: number;
  warmCpuUsPerPost: number;
}

/** The service's delivery concurrency (WEBHOOK_CONCURRENCY's default), for the bare loop too. */
const CONCURRENCY = 32;

class Receiver {
  /** Arrival time (ms since the epoch) and the body's timestamp, by webhook-id. */
  readonly arrivals = new Map<string, { at: number; sentAt: number }>();
  private readonly server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const id = String(req.headers['webhook-id']);
      if (!this.arrivals.has(id)) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
        this.arrivals.set(id, { at, sentAt: Date.parse(body.timestamp) });
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async waitFor(count: number, timeoutMs: number): Promise<number> {
    const end = Date.now() + timeoutMs;
    while (this.arrivals.size < count && Date.now() < end) await sleep(5);
    return Date.now();
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * How a drain's pace went: the ms each fifth of its arrivals took, from `started` (its worker's
 * readiness). A first fifth far slower than the rest is the worker warming up (and the relay
 * making the deliveries), which a short backlog's mean carries in full.
 */
function pace(receiver: Receiver, started: number): string {
  const times = [...receiver.arrivals.values()].map((a) => a.at).sort((a, b) => a - b);
  const fifths: number[] = [];
  let from = started;
  for (let k = 1; k <= 5; k++) {
    const at = times[Math.ceil((times.length * k) / 5) - 1];
    if (at === undefined) break;
    fifths.push(at - from);
    from = at;
  }
  const each = Math.round(times.length / 5);
  return `ms per fifth (${each} deliveries each): ${fifths.join(' / ')}`;
}

async function postCreate(apiUrl: string, tenant: Tenant): Promise<void> {
  const res = await fetch(`${apiUrl}/create-workflow-run`, {
    method: 'POST',
    headers: { authorization: tenant.key, 'content-type': 'application/json' },
    body: createBody(tenant),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`create answered ${res.status}`);
}

/** Calls `task(i)` at `rate` per second for `seconds`, without waiting for one to end. */
async function paced(rate: number, seconds: number, task: (i: number) => Promise<void>) {
  const start = Date.now();
  const total = Math.round(rate * seconds);
  const pending: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    pending.push(task(i));
  }
  await Promise.all(pending);
}

/**
 * Owes an endpoint's deliveries again from its events: removes its deliveries and their
 * attempts and marks its organization's events since the endpoint was made undispatched, so
 * that the next worker relays and delivers them as it did the first time (a bench fixture).
 */
async function rewindOutbox(db: Db, endpointId: string, organizationId: string): Promise<void> {
  await db.raw(
    `DELETE a FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.endpoint_id = ?`,
    [endpointId],
  );
  await db('webhook_deliveries').where({ endpoint_id: endpointId }).delete();
  await db.raw(
    `UPDATE run_events SET dispatched = 0
      WHERE organization_id = ? AND id > (SELECT from_event_id FROM webhook_endpoints WHERE id = ?)`,
    [organizationId, endpointId],
  );
}

export async function measureWebhooks(deps: {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  apiUrl: string;
  /** The API's process, for the latency run's CPU. */
  apiPid: number;
  log: (line: string) => void;
}): Promise<WebhookPhaseResult> {
  const { settings, tenant, apiUrl } = deps;
  const receiver = new Receiver();
  const url = await receiver.listen();
  const made = await fetch(`${apiUrl}/create-webhook-endpoint`, {
    method: 'POST',
    headers: { authorization: tenant.key, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events: ['run.created'] }),
  });
  if (made.status !== 200) throw new Error(`create-webhook-endpoint answered ${made.status}`);
  const endpoint = (await made.json()) as { id: string; secret: string };
  const backlog = settings.webhookBacklog;
  const workerEnv = { ...serviceEnv(PREFIXES.api) };
  let worker: ReturnType<typeof startScript> | undefined;
  try {
    /** Starts a worker and times its delivery of the backlog, from its readiness to the last. */
    const drain = async (label: string) => {
      receiver.arrivals.clear();
      worker = startScript('worker-phase5', 'workers/main.js', { env: workerEnv });
      await waitForWorker(worker, 'workers/main.js');
      const meter = new CpuMeter(
        new Map([
          ['worker', worker.pid],
          ...storagePids(BENCH_REDIS_URL),
          ['receiver', process.pid],
        ]),
      );
      const started = Date.now();
      const done = await receiver.waitFor(backlog, 120_000);
      const cpu = meter.usPer(receiver.arrivals.size);
      const perSecond = (receiver.arrivals.size * 1000) / (done - started);
      deps.log(
        `  ${label}: ${receiver.arrivals.size} of ${backlog} deliveries in ${done - started} ms (${Math.round(perSecond)}/s); CPU µs/delivery ${cpuList(cpu)}`,
      );
      deps.log(`    ${pace(receiver, started)}`);
      return { perSecond, cpu };
    };

    const sample = JSON.stringify({
      type: 'run.created',
      timestamp: new Date().toISOString(),
      data: { filler: 'x'.repeat(400) },
    });
    /**
     * The bare loop posting as many bodies as the backlog holds, from a process of its own
     * started for it, as each drain's worker is: once cold (timed from its first post, as a
     * drain is timed from its worker's start), then once more warm.
     */
    const bare = async (label: string) => {
      const poster = new RequestChild(`bare-poster-${label}`, 'bench/bare-poster.js');
      const options = (count: number, run: string): BareOptions => ({
        url,
        secret: endpoint.secret,
        count,
        concurrency: CONCURRENCY,
        label: `${label}_${run}`,
        body: sample,
      });
      try {
        await poster.request<BareResult>(options(0, 'ready'), 20_000);
        const timed = async (run: 'cold' | 'warm') => {
          receiver.arrivals.clear();
          const meter = new CpuMeter(
            new Map([
              ['sender', poster.pid],
              ['receiver', process.pid],
            ]),
          );
          const { ms } = await poster.request<BareResult>(options(backlog, run), 120_000);
          const cpu = meter.usPer(backlog);
          const sender = cpu.sender ?? 0;
          const receiverUs = cpu.receiver ?? 0;
          deps.log(
            `  bare POST loop (${label}, ${run}): ${backlog} in ${ms} ms (${Math.round((backlog * 1000) / ms)}/s); CPU µs/post sender ${sender}, receiver ${receiverUs}`,
          );
          return { ms, sender, receiver: receiverUs };
        };
        return { cold: await timed('cold'), warm: await timed('warm') };
      } finally {
        await poster.close();
      }
    };

    // Throughput: the backlog is made while no worker runs, then one worker starts its runs
    // and delivers it. The bare loop runs before the drains and after them, and the two
    // together are the baseline: on a shared machine whose speed drifts, a baseline on one
    // side only would favour or handicap the service by the drift.
    await inPool(backlog, 16, () => postCreate(apiUrl, tenant));
    const bareBefore = await bare('before');
    const first = await drain('service, runs and deliveries');
    const deliveriesPerSecond = first.perSecond;
    const cpuUsPerDelivery = first.cpu;

    // Again with the runs already started: the worker stopped, the backlog's deliveries gone
    // and its events undispatched, as they were before the first drain.
    await worker!.stop();
    await rewindOutbox(deps.db, endpoint.id, tenant.orgId);
    const again = await drain('service, deliveries only (runs started)');
    const bareAfter = await bare('after');
    const perSecond = (a: { ms: number }, b: { ms: number }) =>
      (2 * backlog * 1000) / (a.ms + b.ms);
    const mean = (a: number, b: number) => Math.round((a + b) / 2);
    const barePerSecond = perSecond(bareBefore.cold, bareAfter.cold);
    const bareCpuUsPerPost = {
      sender: mean(bareBefore.cold.sender, bareAfter.cold.sender),
      receiver: mean(bareBefore.cold.receiver, bareAfter.cold.receiver),
    };
    const warmPerSecond = perSecond(bareBefore.warm, bareAfter.warm);
    const warmCpuUsPerPost = mean(bareBefore.warm.sender, bareAfter.warm.sender);

    // Latency: creates at a fixed rate, the worker running.
    receiver.arrivals.clear();
    const rate = settings.webhookRate;
    const rateMeter = new CpuMeter(
      new Map([
        ['api', deps.apiPid],
        ['worker', worker!.pid],
        ...storagePids(BENCH_REDIS_URL),
        ['receiver', process.pid],
      ]),
    );
    await paced(rate, settings.webhookSeconds, () => postCreate(apiUrl, tenant));
    const expected = Math.round(rate * settings.webhookSeconds);
    await receiver.waitFor(expected, 30_000);
    const rateCpuUsPerDelivery = rateMeter.usPer(receiver.arrivals.size);
    const latency = summarize([...receiver.arrivals.values()].map((a) => a.at - a.sentAt));
    const missing = expected - receiver.arrivals.size;

    receiver.arrivals.clear();
    const bareAgent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    await paced(rate, settings.webhookSeconds, (i) => {
      const body = JSON.stringify({
        type: 'run.created',
        timestamp: new Date().toISOString(),
        data: { filler: 'x'.repeat(400) },
      });
      return barePost(url, bareAgent, endpoint.secret, `bare_latency_${i}`, body);
    });
    const bareLatency = summarize([...receiver.arrivals.values()].map((a) => a.at - a.sentAt));
    bareAgent.destroy();
    return {
      backlog,
      deliveriesPerSecond,
      barePerSecond,
      startedPerSecond: again.perSecond,
      startedCpuUsPerDelivery: again.cpu,
      rate,
      latency,
      bareLatency,
      missing,
      rateCpuUsPerDelivery,
      cpuUsPerDelivery,
      bareCpuUsPerPost,
      warmPerSecond,
      warmCpuUsPerPost,
    };
  } finally {
    await worker?.stop();
    await receiver.close();
    await fetch(`${apiUrl}/delete-webhook-endpoint`, {
      method: 'POST',
      headers: { authorization: tenant.key, 'content-type': 'application/json' },
      body: JSON.stringify({ id: endpoint.id }),
    }).catch(() => undefined);
  }
}
