// Run deletion and retention, with real API and worker processes and a real webhook receiver:
// a deleted run is gone everywhere (its history, deliveries and Idempotency-Key answers with
// it) and leaves only its run.deleted event, which is delivered with nothing personal in it;
// a deletion racing a worker's change stays a deletion; finished runs past their
// organization's retention are deleted by the worker's retention job (the clock is the test's:
// runs are made to have finished long ago), with the delivery log and audit entries as old.
import { expect } from 'chai';
import { SYSTEM } from '../../src/audit/actor.js';
import { SettingsStore } from '../../src/retention/settings-store.js';
import { WebhookPayloadSchema } from '../../src/webhooks/webhook-schemas.js';
import { createBody, createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { assertServiceSchema } from '../support/spec-schemas.js';
import { sleep, waitFor } from '../support/wait.js';
import {
  bodyOf,
  verifySignature,
  WEBHOOK_TEST_ENV,
  WebhookReceiver,
} from '../support/webhook-receiver.js';

const DAY_MS = 86_400_000;
const ENV = {
  ...WEBHOOK_TEST_ENV,
  RUN_RETENTION_INTERVAL_MS: '200',
  RUN_RETENTION_BATCH: '2',
  // The race test holds a run's row locked for a moment: writes may wait that long.
  WRITE_TIMEOUT_MS: '20000',
};

type Json = Record<string, unknown>;

describe('run deletion and retention', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let receiver: WebhookReceiver;
  let a: Tenant;
  let b: Tenant;
  let clientA: Client;
  let clientB: Client;

  before(async () => {
    receiver = await WebhookReceiver.start();
    [api, worker] = await Promise.all([startApi(ENV), startWorker(ENV)]);
    [a, b] = await Promise.all([createTenant(testDb()), createTenant(testDb())]);
    clientA = new Client(api.url, a.key);
    clientB = new Client(api.url, b.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  const row = (id: string) => testDb()('workflow_runs').where({ id }).first();
  const eventTypes = async (id: string) =>
    (await testDb()('run_events').where({ run_id: id }).orderBy('seq')).map(
      (e: { type: string }) => e.type,
    );
  const deleteRun = (client: Client, id: unknown, headers: Record<string, string> = {}) =>
    client.call<Json>('/delete-workflow-run', { workflow_run_id: id }, headers);

  async function subscribe(client: Client, path: string) {
    const res = await client.call<{ id: string; secret: string }>('/create-webhook-endpoint', {
      url: receiver.url(path),
    });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  async function activeRun(
    client = clientA,
    tenant = a,
    headers: Record<string, string> = {},
    extra: Record<string, unknown> = {},
  ) {
    const res = await client.call<Json>('/create-workflow-run', createBody(tenant, extra), headers);
    expect(res.status, res.text).to.equal(200);
    const id = String(res.body.id);
    await waitFor('run to start', async () => (await row(id))?.status === 'active');
    return id;
  }

  it('deletes a run with its history, deliveries and keys: 404 everywhere, run.deleted delivered', async () => {
    const endpoint = await subscribe(clientA, '/a');
    const other = await subscribe(clientB, '/b');
    const id = await activeRun(
      clientA,
      a,
      { 'Idempotency-Key': 'create-deleted' },
      { labels: { customer: 'c-deleted' } },
    );
    const labelled = () =>
      testDb()('run_labels').where({ organization_id: a.orgId, label_value: 'c-deleted' });
    expect(await labelled()).to.have.length(1);
    const cancel = await clientA.cancelRun(
      { workflow_run_id: id, reason: 'gone' },
      { 'Idempotency-Key': 'cancel-deleted' },
    );
    expect(cancel.status).to.equal(200);
    await waitFor('3 events delivered', () => receiver.accepted('/a').length >= 3);
    expect(await testDb()('idempotency_keys').where({ run_id: id })).to.have.length(2);

    const res = await deleteRun(clientA, id, { 'Idempotency-Key': 'delete-1' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ id, deleted: true });

    // Gone from MySQL, but for its run.deleted event.
    expect(await row(id)).to.equal(undefined);
    expect(await eventTypes(id)).to.deep.equal(['run.deleted']);
    const tombstone = await testDb()('run_events').where({ run_id: id }).first();
    expect(tombstone).to.include({ organization_id: a.orgId, seq: 4, type: 'run.deleted' });
    expect(JSON.parse(tombstone.data)).to.deep.equal({
      workflowName: a.template.name,
      status: 'cancelled',
    });
    expect(
      await testDb()('idempotency_keys').whereIn('idem_key', ['create-deleted', 'cancel-deleted']),
    ).to.have.length(0);
    expect(await testDb()('idempotency_keys').where({ idem_key: 'delete-1' })).to.have.length(1);
    // Its labels (the caller's own identifiers) went with it.
    expect(await labelled()).to.have.length(0);

    // 404 everywhere, and in no list.
    const notFound = (r: { status: number; body: unknown }) => {
      expect(r.status).to.equal(404);
      expect((r.body as Json).code).to.equal('run_not_found');
    };
    notFound(await clientA.getRun(id));
    notFound(await clientA.completeStep({ workflow_run_id: id }));
    notFound(await clientA.cancelRun({ workflow_run_id: id }));
    notFound(await clientA.retryRun({ workflow_run_id: id }));
    notFound(await deleteRun(clientA, id));
    for (const query of ['', '?status=cancelled', `?template_id=${a.template.id}`]) {
      expect((await clientA.listRuns(query)).body.map((r) => r.id)).not.to.include(id);
    }

    // The run.deleted event reaches the endpoint, signed, with nothing personal in it; the
    // run's earlier deliveries left the log with the run.
    const deleted = await waitFor('run.deleted delivered', () =>
      receiver.accepted('/a').find((r) => bodyOf(r).type === 'run.deleted'),
    );
    const body = verifySignature(endpoint.secret, deleted);
    assertServiceSchema(WebhookPayloadSchema, body);
    expect(body.data).to.deep.include({
      runId: id,
      organizationId: a.orgId,
      seq: 4,
      workflowName: a.template.name,
      status: 'cancelled',
      actor: { type: 'api_key', id: a.keyId, name: 'test' },
    });
    expect(body.data.run).to.deep.equal({
      id,
      lastActivity: body.timestamp,
      workflowName: a.template.name,
      status: 'cancelled',
    });
    for (const personal of ['Laptop', '1200', 'alice', 'bob', 'gone']) {
      expect(deleted.body).not.to.include(personal);
    }
    const log = await waitFor('the deletion delivered in the log', async () => {
      const r = await clientA.call<Array<{ eventType: string; status: string }>>(
        `/get-webhook-deliveries?run_id=${id}`,
      );
      return r.body.length === 1 && r.body[0]!.status === 'delivered' ? r.body : undefined;
    });
    expect(log.map((d) => d.eventType)).to.deep.equal(['run.deleted']);
    // Another organization hears nothing of it.
    await sleep(300);
    expect(receiver.at('/b').map((r) => bodyOf(r).data.runId)).not.to.include(id);
    void other;
  });

  it('replays a deletion with its Idempotency-Key, and refuses what it cannot delete', async () => {
    const id = await activeRun();
    const first = await deleteRun(clientA, id, { 'Idempotency-Key': 'delete-2' });
    expect(first.status).to.equal(200);
    const replay = await deleteRun(clientA, id, { 'Idempotency-Key': 'delete-2' });
    expect(replay.status).to.equal(200);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.body).to.deep.equal(first.body);
    expect(await eventTypes(id)).to.deep.equal(['run.deleted']);
    const reused = await clientA.call<Json>(
      '/delete-workflow-run',
      { workflow_run_id: 'another' },
      { 'Idempotency-Key': 'delete-2' },
    );
    expect(reused.status).to.equal(422);

    // Unknown, and another organization's run: the same 404; B's run is untouched.
    const unknown = await deleteRun(clientA, 'no-such-run');
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('run_not_found');
    const ofB = await activeRun(clientB, b);
    const cross = await deleteRun(clientA, ofB);
    expect(cross.status).to.equal(404);
    expect(cross.body.code).to.equal('run_not_found');
    expect((await row(ofB))?.status).to.equal('active');
    expect(await eventTypes(ofB)).to.deep.equal(['run.created', 'run.started']);

    for (const bad of [
      {},
      { workflow_run_id: 5 },
      { workflow_run_id: '' },
      { workflow_run_id: null },
      { workflow_run_id: ofB, reason: 'x' },
    ]) {
      const res = await clientA.call<Json>('/delete-workflow-run', bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(res.body.code).to.equal('invalid_body');
    }
    expect((await row(ofB))?.status).to.equal('active');
  });

  it('keeps runs deleted when a worker applies their changes at the same moment', async () => {
    // Runs whose start is queued while no worker runs: their jobs find nothing once deleted.
    await worker!.stop();
    worker = undefined;
    const queued = await Promise.all(
      [1, 2, 3].map(async () => String((await clientA.createRun(createBody(a))).body.id)),
    );
    for (const id of queued) expect((await deleteRun(clientA, id)).status).to.equal(200);
    worker = await startWorker(ENV);

    // Runs deleted while the worker starts them, and active runs deleted while a completion
    // waits for the worker: every deletion lands before, during or after a worker's write.
    const racing: string[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const id = String((await clientA.createRun(createBody(a))).body.id);
        racing.push(id);
        await sleep(i * 3);
        expect((await deleteRun(clientA, id)).status).to.equal(200);
      }),
    );
    const active = await Promise.all([1, 2, 3, 4].map(() => activeRun()));
    await Promise.all(
      active.map(async (id) => {
        expect((await clientA.completeStep({ workflow_run_id: id })).status).to.equal(202);
        expect((await deleteRun(clientA, id)).status).to.equal(200);
      }),
    );

    // The workers' guarded writes found nothing: no row made again, no event of their changes.
    await sleep(1500);
    for (const id of [...queued, ...racing, ...active]) {
      expect(await row(id), id).to.equal(undefined);
      expect(await eventTypes(id), id).to.deep.equal(['run.deleted']);
    }
    // And the worker goes on with other runs.
    await activeRun();
  });

  it('deletes finished runs past their retention, and the delivery log and audit entries as old', async () => {
    const c = await createTenant(testDb());
    const d = await createTenant(testDb());
    const clientC = new Client(api.url, c.key);
    await subscribe(clientC, '/c');

    const set = await clientC.call<Json>('/update-organization-settings', {
      run_retention_days: 30,
    });
    expect(set.status, set.text).to.equal(200);
    expect(set.body).to.deep.equal({
      timeZone: 'UTC',
      runRetentionDays: 30,
      effectiveRunRetentionDays: 30,
    });

    const cancelled = async (client: Client, tenant: Tenant) => {
      const id = await activeRun(client, tenant);
      expect((await client.cancelRun({ workflow_run_id: id })).status).to.equal(200);
      return id;
    };
    // The test's clock: runs that finished (or last changed) that many days ago.
    const finishedAgo = (id: string, days: number) =>
      testDb()('workflow_runs')
        .where({ id })
        .update({ last_activity: new Date(Date.now() - days * DAY_MS) });

    const expired = await Promise.all([1, 2, 3].map(() => cancelled(clientC, c)));
    const recent = await cancelled(clientC, c);
    const stillActive = await activeRun(clientC, c);
    const otherOrg = await cancelled(new Client(api.url, d.key), d);
    await waitFor('deliveries made', async () => {
      const n = await testDb()('webhook_deliveries').where({ run_id: recent }).count('* as n');
      return Number(n[0]!.n) >= 3;
    });
    // The recent run's deliveries, and the settings' audit entry, made 40 days ago.
    await testDb()('webhook_deliveries')
      .where({ run_id: recent })
      .update({ created_at: new Date(Date.now() - 40 * DAY_MS) });
    await waitFor('deliveries delivered', async () => {
      const rows = await testDb()('webhook_deliveries').where({ run_id: recent });
      return rows.every((r: { status: string }) => r.status === 'delivered');
    });
    // Every audit entry so far made 40 days ago (the log is in time order), then a new one.
    await testDb()('audit_log')
      .where({ organization_id: c.orgId })
      .update({ at: new Date(Date.now() - 40 * DAY_MS) });
    await subscribe(clientC, '/c-later');
    for (const id of expired) await finishedAgo(id, 31);
    await finishedAgo(recent, 20);
    await finishedAgo(stillActive, 400);
    await finishedAgo(otherOrg, 400);

    await waitFor(
      'expired runs deleted',
      async () => (await Promise.all(expired.map(row))).every((r) => r === undefined),
      10000,
    );
    for (const id of expired) {
      // A retention sends no run.deleted: nothing of the run is left.
      expect(await eventTypes(id), id).to.deep.equal([]);
      expect(await testDb()('webhook_deliveries').where({ run_id: id })).to.have.length(0);
      expect((await clientC.getRun(id)).status).to.equal(404);
    }
    const auditTypes = async () =>
      (await testDb()('audit_log').where({ organization_id: c.orgId }).orderBy('seq')).map(
        (x: { type: string }) => x.type,
      );
    await waitFor('old log entries purged', async () => {
      const deliveries = await testDb()('webhook_deliveries').where({ run_id: recent });
      return deliveries.length === 0 && (await auditTypes()).length === 1;
    });
    // The recent entry is kept.
    expect(await auditTypes()).to.deep.equal(['webhook_endpoint.created']);
    // Kept: a run finished 20 days ago, an active run, another organization's (no retention).
    expect((await row(recent))?.status).to.equal('cancelled');
    expect((await row(stillActive))?.status).to.equal('active');
    expect((await row(otherOrg))?.status).to.equal('cancelled');
    expect(await eventTypes(recent)).to.include('run.cancelled');
    const listed = (await clientC.listRuns()).body.map((r) => r.id);
    expect(listed).to.include.members([recent, stillActive]);
    expect(listed).not.to.include.members(expired);
  });

  it('reads and updates the settings: scoped to the organization, audited, refusals', async () => {
    const e = await createTenant(testDb());
    const clientE = new Client(api.url, e.key);
    const read = async (client: Client) => {
      const r = await client.call<Json>('/get-organization-settings');
      expect(r.status).to.equal(200);
      return r.body;
    };
    expect(await read(clientE)).to.deep.equal({ timeZone: 'UTC' });

    const set = (body: unknown, headers: Record<string, string> = {}) =>
      clientE.call<Json>('/update-organization-settings', body, headers);
    expect((await set({ run_retention_days: 7 }, { 'Idempotency-Key': 's1' })).body).to.deep.equal({
      timeZone: 'UTC',
      runRetentionDays: 7,
      effectiveRunRetentionDays: 7,
    });
    const replay = await set({ run_retention_days: 7 }, { 'Idempotency-Key': 's1' });
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect((await set({ run_retention_days: 7 })).status).to.equal(200); // the same: no entry
    expect(await read(clientE)).to.deep.equal({
      timeZone: 'UTC',
      runRetentionDays: 7,
      effectiveRunRetentionDays: 7,
    });
    expect(await read(clientB)).to.deep.equal({ timeZone: 'UTC' }); // another organization's own
    expect((await set({ run_retention_days: 'default' })).body).to.deep.equal({ timeZone: 'UTC' });
    const entries = await testDb()('audit_log')
      .where({ organization_id: e.orgId, type: 'organization.settings_updated' })
      .orderBy('seq');
    expect(entries.map((x: { data: string }) => JSON.parse(x.data))).to.deep.equal([
      { runRetentionDays: 7 },
      {},
    ]);
    expect(entries.every((x: { target_id: string }) => x.target_id === e.orgId)).to.equal(true);

    for (const bad of [
      {},
      { run_retention_days: 0 },
      { run_retention_days: 3651 },
      { run_retention_days: 1.5 },
      { run_retention_days: 'forever' },
      { run_retention_days: null },
      { run_retention_days: 5, other: 1 },
    ]) {
      const res = await set(bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(res.body.code).to.equal('invalid_body');
    }
    // A key that may read runs but not manage the organization.
    const reader = await createKey(testDb(), e.orgId, { scopes: ['runs:read'] });
    const asReader = new Client(api.url, reader.key);
    expect((await asReader.call<Json>('/get-organization-settings')).status).to.equal(200);
    const refused = await asReader.call<Json>('/update-organization-settings', {
      run_retention_days: 1,
    });
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('insufficient_scope');
    expect(await read(clientE)).to.deep.equal({ timeZone: 'UTC' });
  });

  it('sets the time zone: read back, audited, a name it does not know refused and nothing changed', async () => {
    const f = await createTenant(testDb());
    const clientF = new Client(api.url, f.key);
    const set = (body: unknown) => clientF.call<Json>('/update-organization-settings', body);
    const read = async () => {
      const r = await clientF.call<Json>('/get-organization-settings');
      expect(r.status).to.equal(200);
      return r.body;
    };
    const entries = async () =>
      (
        await testDb()('audit_log')
          .where({ organization_id: f.orgId, type: 'organization.settings_updated' })
          .orderBy('seq')
      ).map((x: { data: string }) => JSON.parse(x.data) as Json);
    const store = new SettingsStore(testDb(), 5000);

    // Naming UTC where nothing is set is no change: no entry.
    expect((await set({ time_zone: 'UTC' })).body).to.deep.equal({ timeZone: 'UTC' });
    expect(await entries()).to.deep.equal([]);

    expect((await set({ run_retention_days: 7 })).status).to.equal(200);
    // A setting left out stays as it is.
    const berlin = await set({ time_zone: 'Europe/Berlin' });
    expect(berlin.status, berlin.text).to.equal(200);
    const withBerlin = {
      timeZone: 'Europe/Berlin',
      runRetentionDays: 7,
      effectiveRunRetentionDays: 7,
    };
    expect(berlin.body).to.deep.equal(withBerlin);
    expect(await read()).to.deep.equal(withBerlin);
    expect(await store.timeZone(f.orgId)).to.equal('Europe/Berlin');
    expect(await entries()).to.deep.equal([
      { runRetentionDays: 7 },
      { runRetentionDays: 7, timeZone: 'Europe/Berlin' },
    ]);

    // A name that is no IANA zone of this runtime: its own code, pointing at the field; the
    // retention asked for in the same body is not set either.
    for (const zone of ['Mars/Olympus', 'UTC+1', '+01:00', 'Berlin']) {
      const res = await set({ run_retention_days: 9, time_zone: zone });
      expect(res.status, zone).to.equal(400);
      expect(res.body, zone).to.deep.include({ code: 'invalid_time_zone', field: '/time_zone' });
    }
    // What the schema refuses is invalid_body.
    for (const zone of ['', 'x'.repeat(65), 5, null]) {
      const res = await set({ time_zone: zone });
      expect(res.status, JSON.stringify(zone)).to.equal(400);
      expect(res.body, JSON.stringify(zone)).to.deep.include({
        code: 'invalid_body',
        field: '/time_zone',
      });
    }
    expect(await read()).to.deep.equal(withBerlin);
    expect(await entries()).to.have.length(2);
    expect(await store.timeZone(f.orgId)).to.equal('Europe/Berlin');

    // Both at once, then "default" back to UTC (stored as NULL).
    expect(
      (await set({ run_retention_days: 'default', time_zone: 'America/New_York' })).body,
    ).to.deep.equal({ timeZone: 'America/New_York' });
    expect((await set({ time_zone: 'default' })).body).to.deep.equal({ timeZone: 'UTC' });
    const row = await testDb()('organizations').where({ id: f.orgId }).first('time_zone');
    expect(row.time_zone).to.equal(null);
    expect((await entries()).slice(2)).to.deep.equal([{ timeZone: 'America/New_York' }, {}]);
    expect(await store.timeZone(f.orgId)).to.equal('UTC');
  });

  it('answers time zones for new runs, concurrent callers sharing one SELECT', async () => {
    const g = await createTenant(testDb());
    const h = await createTenant(testDb());
    const set = await new Client(api.url, g.key).call<Json>('/update-organization-settings', {
      time_zone: 'Asia/Tokyo',
    });
    expect(set.status, set.text).to.equal(200);

    const store = new SettingsStore(testDb(), 5000);
    const selects: string[] = [];
    const count = (q: { sql: string }) => {
      if (q.sql.includes('time_zone')) selects.push(q.sql);
    };
    testDb().on('query', count);
    try {
      const ids = [g.orgId, h.orgId, 'no-such-organization', g.orgId, h.orgId, g.orgId];
      const zones = await Promise.all(ids.map((id) => store.timeZone(id)));
      expect(zones).to.deep.equal(['Asia/Tokyo', 'UTC', 'UTC', 'Asia/Tokyo', 'UTC', 'Asia/Tokyo']);
    } finally {
      testDb().off('query', count);
    }
    expect(selects).to.have.length(1);

    // For new runs the zone read is kept for a while: asked again, no SELECT; changed through
    // this store, read again at once.
    selects.length = 0;
    testDb().on('query', count);
    try {
      expect(await store.cachedTimeZone(g.orgId)).to.equal('Asia/Tokyo');
      expect(await store.cachedTimeZone(g.orgId)).to.equal('Asia/Tokyo');
      expect(selects).to.have.length(1);
      await store.update(
        g.orgId,
        { timeZone: 'Europe/Paris' },
        SYSTEM,
        new Date(),
        () => undefined,
      );
      expect(await store.cachedTimeZone(g.orgId)).to.equal('Europe/Paris');
    } finally {
      testDb().off('query', count);
    }
  });
});
