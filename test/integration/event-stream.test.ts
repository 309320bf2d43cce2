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
import { sleep, waitFor } from '../support/wait.js';
import { Socket } from 'node:net';

type Json = Record<string, unknown>;

const HEARTBEAT_MS = 300;
const env = { STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS), STREAM_MAX_PER_KEY: '3' };

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
  return Number(id);
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
    // Woken through Redis, far sooner than the fallback poll (1 s).
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
    let low = 0;
    let high = 0;
    try {
      low = await insertEvent(held, tenant.orgId, 'held');
      high = await insertEvent(db, tenant.orgId, 'committed');
      expect(high).to.be.above(low);
      // The higher id is committed, the lower one is not: nothing may be sent past the lower.
      await sleep(1500);
      expect(ids(events)).to.not.include(high);
      await held.commit();
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
