// GET /stream-run-events against real API and worker processes: the organization's events as
// they commit, each message's id the event's id, its data the webhook payload (checked against
// the served document's WebhookPayload); filters; resuming with Last-Event-ID across an API
// restart; a change made through one API process reaching a stream held by another; isolation
// between organizations; the cap per key; a slow reader cut off; heartbeats; shutdown; and the
// out-of-order commit: a lower id committed after a higher one is sent, in id order, once.
import { expect } from 'chai';
import type { Knex } from 'knex';
import { assertComponent, assertDescribed } from '../support/api-document.js';
import { createBody, createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { SseClient } from '../support/sse.js';
import { testEnv } from '../support/env.js';
import { eventsChannel } from '../../src/streams/event-signal.js';
import { Redis } from 'ioredis';
import { sleep, waitFor } from '../support/wait.js';
import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';

type Json = Record<string, unknown>;

const HEARTBEAT_MS = 300;
// The fallback poll out of the way: a stream is woken through Redis, or the test sees it late.
const env = {
  STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS),
  STREAM_MAX_PER_KEY: '3',
  STREAM_POLL_INTERVAL_MS: '60000',
};

let fakeRuns = 0;

/** An event row written straight to MySQL: a run.created of a run of its own. */
function eventRow(organizationId: string, workflowName = 'Direct') {
  return {
    run_id: `direct-${process.pid}-${++fakeRuns}`,
    organization_id: organizationId,
    seq: 1,
    type: 'run.created',
    at: new Date(),
    data: JSON.stringify({ templateId: 't', workflowName }),
    actor: JSON.stringify({ type: 'system' }),
  };
}

async function insertEvent(db: Knex | Knex.Transaction, organizationId: string, name?: string) {
  const [id] = (await db('run_events').insert(eventRow(organizationId, name))) as number[];
  if (!('commit' in db)) await signal(organizationId);
  return Number(id);
}

/** What a writer publishes after its commit (event-signal.ts), for events written here. */
async function signal(organizationId: string): Promise<void> {
  const redis = new Redis(testEnv.REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.publish(eventsChannel(testEnv.QUEUE_PREFIX!), JSON.stringify([organizationId]));
  } catch {
    // Redis away (a test of that): the fallback poll is what wakes the stream then.
  } finally {
    redis.disconnect();
  }
}

/** The organization's event ids in MySQL after `after`, ascending. */
async function eventIds(organizationId: string, after = 0): Promise<number[]> {
  const rows = (await testDb()('run_events')
    .select('id')
    .where('organization_id', organizationId)
    .andWhere('id', '>', after)
    .orderBy('id')) as Array<{ id: number }>;
  return rows.map((r) => Number(r.id));
}

const ids = (stream: SseClient) => stream.events.map((m) => Number(m.id));

describe('GET /stream-run-events', () => {
  let one: ApiProcess;
  let two: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let other: Tenant;
  const open: SseClient[] = [];

  async function stream(
    api: ApiProcess,
    query = '',
    key = tenant.key,
    headers: Record<string, string> = {},
  ): Promise<SseClient> {
    const client = await SseClient.open(`${api.url}/stream-run-events${query}`, key, headers);
    open.push(client);
    return client;
  }

  async function createRun(api: ApiProcess, who = tenant): Promise<string> {
    const res = await request<Json>(`${api.url}/create-workflow-run`, {
      key: who.key,
      body: createBody(who),
    });
    expect(res.status, res.text).to.equal(200);
    return res.body.id as string;
  }

  before(async () => {
    [one, two, worker] = await Promise.all([startApi(env), startApi(env), startWorker()]);
    tenant = await createTenant(testDb());
    other = await createTenant(testDb());
  });

  afterEach(() => {
    for (const client of open.splice(0)) client.close();
  });

  after(() => Promise.all([one?.stop(), two?.stop(), worker?.stop()]));

  it('sends each committed event: id the event id, event its type, data the webhook payload', async () => {
    const events = await stream(one);
    expect(events.status).to.equal(200);
    expect(events.headers['content-type']).to.match(/^text\/event-stream/);
    expect(events.headers['cache-control']).to.equal('no-cache');
    expect(events.headers['x-accel-buffering']).to.equal('no');
    // The opening message: no data, the starting position as its id.
    await events.until('the opening message', () => events.messages.length > 0);
    expect(events.messages[0]!.data).to.equal('');
    const start = Number(events.messages[0]!.id);

    const runId = await createRun(one);
    await events.until('run.created and run.started', () => events.events.length >= 2);
    const stored = await eventIds(tenant.orgId, start);
    expect(ids(events)).to.deep.equal(stored.slice(0, events.events.length));
    const [created, started] = events.events;
    expect(created!.event).to.equal('run.created');
    expect(started!.event).to.equal('run.started');
    for (const message of events.events) {
      const payload = JSON.parse(message.data) as Json;
      await assertComponent(one.url, 'WebhookPayload', payload);
      expect(payload.type).to.equal(message.event);
      const data = payload.data as Json;
      expect(data.runId).to.equal(runId);
      expect(data.organizationId).to.equal(tenant.orgId);
    }
    const startedData = JSON.parse(started!.data).data as Json;
    expect(startedData.seq).to.equal(2);
    expect((startedData.run as Json).status).to.equal('active');
    expect(startedData.step).to.equal('Request');
    // The document describes the operation's answer as an event stream.
    const document = (await request<Json>(`${one.url}/openapi.json`)).body;
    const op = (document.paths as Record<string, Record<string, Json>>)['/stream-run-events']!.get!;
    const ok = (op.responses as Record<string, Json>)['200']!;
    expect(ok.content).to.have.property('text/event-stream');
    expect(op['x-scope']).to.equal('runs:read');
  });

  it('sends both events of each run soon, run after run: no wake is lost while the watermark moves', async () => {
    // A create wakes the stream twice (the API's own commit, then the worker's start), and the
    // second wake may come while the first is still being read. A pass that forgot a wake it
    // had not seen would leave the run's last event to the fallback poll, a minute away here.
    const events = await stream(one);
    await events.until('the opening message', () => events.messages.length > 0);
    const runs = 12;
    for (let i = 1; i <= runs; i++) {
      await createRun(one);
      await events.until(
        `run ${i}: run.created and run.started`,
        () => events.events.length >= 2 * i,
        2000,
      );
    }
    const start = Number(events.messages[0]!.id);
    expect(ids(events)).to.deep.equal(await eventIds(tenant.orgId, start));
  });

  it('filters by type (comma list) and by run', async () => {
    const startedOnly = await stream(one, '?type=run.started');
    const both = await stream(one, '?type=run.created,run.started');
    const runA = await createRun(one);
    const runB = await createRun(one);
    const ofA = await stream(one, `?run_id=${runA}&last_event_id=0`);
    await startedOnly.until('two run.started', () => startedOnly.events.length >= 2);
    await both.until('four events', () => both.events.length >= 4);
    await ofA.until("run A's two events", () => ofA.events.length >= 2);
    await sleep(300);
    expect(startedOnly.events.map((m) => m.event)).to.deep.equal(['run.started', 'run.started']);
    expect(both.events).to.have.length(4);
    expect(ofA.events.map((m) => (JSON.parse(m.data).data as Json).runId)).to.deep.equal([
      runA,
      runA,
    ]);
    expect(runB).to.not.equal(runA);
  });

  it('refuses bad filters and positions with 400, an unknown run with 404, as described', async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['?type=run.exploded', {}, 400, 'invalid_query'],
      ['?type=run.created,', {}, 400, 'invalid_query'],
      ['?colour=blue', {}, 400, 'invalid_query'],
      ['?last_event_id=-1', {}, 400, 'invalid_query'],
      ['', { 'last-event-id': 'abc' }, 400, 'invalid_last_event_id'],
      ['?run_id=nope', {}, 404, 'run_not_found'],
    ];
    for (const [query, headers, status, code] of cases) {
      const res = await request<Json>(`${one.url}/stream-run-events${query}`, {
        key: tenant.key,
        headers,
      });
      expect(res.status, `${query} ${res.text}`).to.equal(status);
      expect(res.body.code).to.equal(code);
      await assertDescribed(one.url, 'GET', '/stream-run-events', res.status, res.body);
    }
  });

  it("never shows another organization's events, nor lets it name another's run", async () => {
    const mine = await stream(one);
    const theirs = await stream(one, '', other.key);
    const otherRun = await createRun(one, other);
    const myRun = await createRun(two);
    await mine.until('my two events', () => mine.events.length >= 2);
    await theirs.until('their two events', () => theirs.events.length >= 2);
    await sleep(500);
    for (const m of mine.events) expect((JSON.parse(m.data).data as Json).runId).to.equal(myRun);
    for (const m of theirs.events) {
      expect((JSON.parse(m.data).data as Json).runId).to.equal(otherRun);
    }
    const res = await request<Json>(`${one.url}/stream-run-events?run_id=${otherRun}`, {
      key: tenant.key,
    });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('run_not_found');
    // An early position shows only the organization's own events, however far back.
    const fromStart = await stream(one, '', other.key, { 'last-event-id': '0' });
    const theirIds = await eventIds(other.orgId);
    await fromStart.until('all of theirs', () => fromStart.events.length >= theirIds.length);
    await sleep(300);
    expect(ids(fromStart)).to.deep.equal(theirIds);
  });

  it('a change made through one API process reaches a stream held by another', async () => {
    const onOne = await stream(one);
    await onOne.until('open', () => onOne.messages.length > 0);
    const sentAt = Date.now();
    const runId = await createRun(two);
    await onOne.until('run.created', () => onOne.events.length >= 1, 3000);
    expect((JSON.parse(onOne.events[0]!.data).data as Json).runId).to.equal(runId);
    // Woken through Redis: the fallback poll is set a minute apart here (env above), so only
    // the wake can bring it this soon.
    expect(onOne.events[0]!.at - sentAt).to.be.below(900);
  });

  it('sends a heartbeat comment every STREAM_HEARTBEAT_MS', async () => {
    const events = await stream(one);
    await sleep(HEARTBEAT_MS * 4);
    expect(events.comments.filter((c) => c === 'heartbeat').length).to.be.within(2, 6);
  });

  it('caps the streams of a key: 429 too_many_streams beyond, a place again once one closes', async () => {
    const key = (await createKey(testDb(), tenant.orgId, { scopes: ['runs:read'] })).key;
    const held = [
      await stream(one, '', key),
      await stream(one, '', key),
      await stream(one, '', key),
    ];
    for (const s of held) expect(s.status).to.equal(200);
    const res = await request<Json>(`${one.url}/stream-run-events`, { key });
    expect(res.status).to.equal(429);
    expect(res.body.code).to.equal('too_many_streams');
    expect(res.body.message).to.be.a('string');
    await assertDescribed(one.url, 'GET', '/stream-run-events', res.status, res.body);
    // Other keys are not held back.
    expect((await stream(one)).status).to.equal(200);
    held[0]!.close();
    await waitFor('a place again', async () => {
      const again = await stream(one, '', key);
      if (again.status === 200) return true;
      return false;
    });
  });

  it('sends a lower id committed after a higher one, in id order, exactly once', async () => {
    const events = await stream(one);
    await events.until('open', () => events.messages.length > 0);
    const db = testDb();
    const held = await db.transaction();
    let low: number;
    let high: number;
    try {
      low = await insertEvent(held, tenant.orgId, 'held');
      high = await insertEvent(db, tenant.orgId, 'committed');
      expect(high).to.be.above(low);
      // The higher id is committed, the lower one is not: nothing may be sent past the lower.
      await sleep(1500);
      expect(ids(events)).to.not.include(high);
      await held.commit();
      await signal(tenant.orgId);
      await events.until('both', () => events.events.length >= 2);
      await sleep(500);
      expect(ids(events)).to.deep.equal([low, high]);
    } finally {
      if (!held.isCompleted()) await held.rollback();
    }
    // A gap that never fills (rolled back) is passed after its probe.
    const gone = await db.transaction();
    const lost = await insertEvent(gone, tenant.orgId, 'rolled back');
    const after = await insertEvent(db, tenant.orgId, 'after');
    await sleep(300);
    await gone.rollback();
    await events.until('the event after the gap', () => ids(events).includes(after));
    await sleep(300);
    expect(lost).to.be.below(after);
    expect(ids(events)).to.deep.equal([low, high, after]);
  });
});

describe('GET /stream-run-events: restarts, shutdown, slow readers, Redis away', () => {
  let worker: ServiceProcess;
  let tenant: Tenant;
  const processes: ServiceProcess[] = [];
  const clients: SseClient[] = [];

  async function api(extra: Record<string, string> = {}): Promise<ApiProcess> {
    const started = await startApi({ ...env, ...extra });
    processes.push(started);
    return started;
  }

  async function stream(target: ApiProcess, headers: Record<string, string> = {}) {
    const client = await SseClient.open(`${target.url}/stream-run-events`, tenant.key, headers);
    clients.push(client);
    return client;
  }

  before(async () => {
    worker = await startWorker();
    tenant = await createTenant(testDb());
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(processes.splice(0).map((p) => p.stop()));
  });

  after(() => worker?.stop());

  async function createRuns(target: ApiProcess, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const res = await request(`${target.url}/create-workflow-run`, {
        key: tenant.key,
        body: createBody(tenant),
      });
      expect(res.status, res.text).to.equal(200);
    }
  }

  it('ends its streams on shutdown; resumed with Last-Event-ID on a new process: no gap, no duplicate', async () => {
    const first = await api();
    const writer = await api();
    const before = await stream(first);
    await before.until('open', () => before.messages.length > 0);
    const start = Number(before.messages[0]!.id);
    await createRuns(writer, 3);
    await before.until('six events', () => before.events.length >= 6);

    // SIGTERM: the stream ends at once (not at SHUTDOWN_TIMEOUT_MS), and the process exits 0.
    const stoppedAt = Date.now();
    const code = await first.stop();
    expect(code).to.equal(0);
    await before.until('ended', () => before.ended, 5000);
    expect(Date.now() - stoppedAt).to.be.below(4000);
    expect(before.comments.join('\n')).to.match(/shutting down/);
    const last = before.lastEventId!;

    // Changes made while no stream is open.
    await createRuns(writer, 3);
    await waitFor(
      'the runs started',
      async () => (await eventIds(tenant.orgId, start)).length >= 12,
    );

    const second = await api();
    const after = await stream(second, { 'last-event-id': last });
    const owed = await eventIds(tenant.orgId, Number(last));
    await after.until('every later event', () => after.events.length >= owed.length);
    await sleep(500);
    expect(ids(after)).to.deep.equal(owed);
    const all = [...ids(before), ...ids(after)];
    expect(all).to.deep.equal(await eventIds(tenant.orgId, start)); // in order, each once
  });

  it('cuts off a client that stops reading; the process does not buffer the backlog', async () => {
    const target = await api({ STREAM_BUFFER_BYTES: '65536' });
    const from = (await eventIds(tenant.orgId)).at(-1) ?? 0;
    // About 24 MB of events, more than the socket buffers hold.
    const name = 'x'.repeat(8000);
    const db = testDb();
    for (let i = 0; i < 30; i++) {
      await db('run_events').insert(
        Array.from({ length: 100 }, () => eventRow(tenant.orgId, name)),
      );
    }
    const rss = () =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${target.pid}/status`, 'utf8'))![1]) * 1024;
    const rssBefore = rss();

    const socket = new Socket();
    await new Promise<void>((resolve) => socket.connect(target.port, '127.0.0.1', resolve));
    let received = 0;
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    const headersSeen = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > 0) resolve();
      }),
    );
    socket.write(
      `GET ${target.basePath}/stream-run-events HTTP/1.1\r\nHost: x\r\nAuthorization: ${tenant.key}\r\nLast-Event-ID: ${from}\r\n\r\n`,
    );
    await headersSeen;
    socket.pause(); // reads nothing more
    await target.waitForLine(/event stream cut off/, 15000);
    // It stopped reading once the buffer was full: at most a read (500 events) past it.
    const line = target.lines.find((l) => /event stream cut off/.test(l))!;
    const cutAt = (JSON.parse(line) as { cursor: number }).cursor;
    const read = (await eventIds(tenant.orgId, from)).filter((id) => id <= cutAt).length;
    expect(read, 'events read for the stalled stream').to.be.at.most(1500);
    const grown = rss() - rssBefore;
    expect(grown, `memory taken by the stalled stream: ${grown}`).to.be.below(128 * 1024 * 1024);
    socket.resume();
    await waitFor('the connection closed', () => closed, 10000);
    expect(received).to.be.below(30 * 100 * 8000);
  });

  it('with Redis away, streams still get every event through the fallback poll', async () => {
    const target = await api({ REDIS_URL: 'redis://127.0.0.1:1', STREAM_POLL_INTERVAL_MS: '500' });
    const events = await stream(target);
    await events.until('open', () => events.messages.length > 0);
    const id = await insertEvent(testDb(), tenant.orgId, 'no redis');
    await events.until('the event', () => ids(events).includes(id), 3000);
  });
});
