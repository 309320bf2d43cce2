// Phase 5: webhooks. One endpoint subscribed to run.created, pointed at a receiver in this
// process that answers 200 at once, and a bare HTTP POST loop to the same receiver as the
// baseline (a body of the same size, a Standard Webhooks signature made per request, the same
// concurrency as the service's delivery workers):
//   - throughput: a backlog of events (runs created while no worker runs), then one worker
//     started; deliveries per second from its start to the last arrival, against the loop
//     posting as many bodies;
//   - latency: creates at a fixed rate with the worker running; from the event's time (the
//     change) to its arrival at the receiver, against the loop's send-to-arrival at that rate.
import { createServer, request as httpRequest, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '../../src/db.js';
import { signDelivery } from '../../src/webhooks/signing.js';
import { CpuMeter, storagePids } from '../cpu.js';
import { createBody, type Tenant } from '../fixtures.js';
import { startScript, sleep } from '../processes.js';
import { BENCH_REDIS_URL, PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { summarize, type LatencySummary } from '../stats.js';

export interface WebhookPhaseResult {
  /** Events in the backlog, and deliveries per second: the service's and the bare loop's. */
  backlog: number;
  deliveriesPerSecond: number;
  barePerSecond: number;
  /** Events per second of the latency run, and change → receipt (service) / send → receipt. */
  rate: number;
  latency: LatencySummary;
  bareLatency: LatencySummary;
  /** Events of the latency run that never arrived. */
  missing: number;
  /**
   * CPU µs per delivery of the backlog, by process: the worker, MariaDB (mariadbd or mysqld),
   * Redis (redis-server), and this process (the receiver); for the bare loop, this process
   * (sender and receiver).
   */
  cpuUsPerDelivery: Record<string, number>;
  bareCpuUsPerPost: number;
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

/** A bare POST of a signed body the size of a delivery, the way the service sends one. */
function barePost(url: string, agent: Agent, secret: string, id: string, body: string) {
  const headers = signDelivery([secret], id, new Date(), body);
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
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

/** Runs `task(i)` for i < count, `concurrency` at a time. */
async function inPool(count: number, concurrency: number, task: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
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

export async function measureWebhooks(deps: {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  apiUrl: string;
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
    // Throughput: the backlog is made while no worker runs, then one worker delivers it.
    await inPool(backlog, 16, () => postCreate(apiUrl, tenant));
    worker = startScript('worker-phase5', 'workers/main.js', { env: workerEnv });
    await worker.waitForLog(/"msg":"worker started"/);
    const meter = new CpuMeter(
      new Map([['worker', worker.pid], ...storagePids(BENCH_REDIS_URL), ['receiver', process.pid]]),
    );
    const started = Date.now();
    const done = await receiver.waitFor(backlog, 120_000);
    const cpuUsPerDelivery = meter.usPer(receiver.arrivals.size);
    const deliveriesPerSecond = (receiver.arrivals.size * 1000) / (done - started);
    deps.log(
      `  service: ${receiver.arrivals.size} of ${backlog} deliveries in ${done - started} ms (${Math.round(deliveriesPerSecond)}/s); CPU µs/delivery ${Object.entries(
        cpuUsPerDelivery,
      )
        .map(([name, us]) => `${name} ${us}`)
        .join(', ')}`,
    );

    const bareAgent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const sample = JSON.stringify({
      type: 'run.created',
      timestamp: new Date().toISOString(),
      data: { filler: 'x'.repeat(400) },
    });
    receiver.arrivals.clear();
    const bareMeter = new CpuMeter(new Map([['bare', process.pid]]));
    const bareStart = Date.now();
    await inPool(backlog, CONCURRENCY, (i) =>
      barePost(url, bareAgent, endpoint.secret, `bare_${i}`, sample),
    );
    const barePerSecond = (backlog * 1000) / (Date.now() - bareStart);
    const bareCpuUsPerPost = bareMeter.usPer(backlog).bare ?? 0;
    deps.log(
      `  bare POST loop: ${backlog} in ${Date.now() - bareStart} ms (${Math.round(barePerSecond)}/s); CPU µs/post ${bareCpuUsPerPost}`,
    );

    // Latency: creates at a fixed rate, the worker running.
    receiver.arrivals.clear();
    const rate = settings.webhookRate;
    await paced(rate, settings.webhookSeconds, () => postCreate(apiUrl, tenant));
    const expected = Math.round(rate * settings.webhookSeconds);
    await receiver.waitFor(expected, 30_000);
    const latency = summarize([...receiver.arrivals.values()].map((a) => a.at - a.sentAt));
    const missing = expected - receiver.arrivals.size;

    receiver.arrivals.clear();
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
      rate,
      latency,
      bareLatency,
      missing,
      cpuUsPerDelivery,
      bareCpuUsPerPost,
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
