// Bulk cancel and retry by filter: the runs the list's filter matches are changed as a single
// cancel or retry would change them, each exactly once, with its event; runs created later and
// other organizations' runs are left alone; progress is read with get-bulk-action; a worker
// SIGKILLed midway is taken over by another, which resumes where the last batch committed.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

type Json = Record<string, unknown>;

interface BulkView {
  id: string;
  action: string;
  status: string;
  matched: number;
  done: number;
  skipped: Record<string, number>;
  filter: Json;
  reason?: string;
  startedAt: string;
  finishedAt?: string;
}

describe('bulk cancel and retry', () => {
  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;
  let otherClient: Client;

  before(async () => {
    api = await startApi();
    tenant = await createTenant(testDb());
    other = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    otherClient = new Client(api.url, other.key);
  });

  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });

  after(async () => {
    await api?.stop();
  });

  async function createMany(c: Client, t: Tenant, n: number, labels: Record<string, string>) {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 25) {
      const replies = await Promise.all(
        Array.from({ length: Math.min(25, n - i) }, () => c.createRun(createBody(t, { labels }))),
      );
      for (const r of replies) {
        expect(r.status, r.text).to.equal(200);
        ids.push(r.body.id as string);
      }
    }
    return ids;
  }

  const bulk = (c: Client, action: 'cancel' | 'retry', body: unknown, headers = {}) =>
    c.call<BulkView>(`/bulk-${action}-workflow-runs`, body, headers);
  const progress = (c: Client, id: string) =>
    c.call<BulkView>(`/get-bulk-action?id=${encodeURIComponent(id)}`);
  const completed = (c: Client, id: string, timeoutMs = 30000) =>
    waitFor(
      'bulk action to complete',
      async () => {
        const view = (await progress(c, id)).body;
        return view.status === 'completed' ? view : undefined;
      },
      timeoutMs,
    );

  /** run.cancelled (or another type) events per run, straight from run_events. */
  async function eventCounts(ids: string[], type: string): Promise<Map<string, number>> {
    const rows = (await testDb()('run_events')
      .whereIn('run_id', ids)
      .andWhere({ type })
      .groupBy('run_id')
      .select('run_id')
      .count({ n: '*' })) as Array<{ run_id: string; n: number | string }>;
    return new Map(rows.map((r) => [r.run_id, Number(r.n)]));
  }

  it('cancels the runs a filter matches, skips ended ones, leaves later and foreign runs alone', async () => {
    const ids = await createMany(client, tenant, 30, { job: 'nightly' });
    const untouched = await createMany(client, tenant, 5, { job: 'daily' });
    const foreign = await createMany(otherClient, other, 5, { job: 'nightly' });
    // Two already ended.
    for (const id of ids.slice(0, 2)) {
      expect((await client.cancelRun({ workflow_run_id: id })).status).to.equal(200);
    }
    const started = await bulk(client, 'cancel', {
      filter: { label: ['job:nightly'], status: 'pending,active,cancelled' },
      reason: 'nightly job withdrawn',
    });
    expect(started.status, started.text).to.equal(202);
    expect(started.body).to.include({ action: 'cancel', status: 'running', matched: 0, done: 0 });
    expect(started.body.filter).to.deep.equal({
      label: ['job:nightly'],
      status: 'pending,active,cancelled',
    });
    // Created after the request: not matched.
    const later = await createMany(client, tenant, 3, { job: 'nightly' });

    worker = await startWorker();
    const view = await completed(client, started.body.id);
    expect(view).to.include({ matched: 30, done: 28, reason: 'nightly job withdrawn' });
    expect(view.skipped).to.deep.equal({ run_not_cancellable: 2 });
    expect(view.finishedAt).to.be.a('string');

    const cancels = await eventCounts(
      [...ids, ...untouched, ...foreign, ...later],
      'run.cancelled',
    );
    for (const id of ids) expect(cancels.get(id), id).to.equal(1);
    for (const id of [...untouched, ...foreign, ...later])
      expect(cancels.get(id), id).to.equal(undefined);
    const detail = (await client.getRun(ids[10]!)).body;
    expect(detail.status).to.equal('cancelled');
    const event = (detail.history as Json[]).find((e) => e.type === 'run.cancelled')!;
    expect(event.data).to.deep.include({ reason: 'nightly job withdrawn' });
    expect(event.actor).to.deep.include({ type: 'api_key', id: tenant.keyId });

    // The audit log holds one entry for the bulk action.
    const audit = await client.call<Json[]>('/get-audit-log?type=bulk_action.created');
    expect(audit.status).to.equal(200);
    expect(audit.body.map((e) => e.targetId)).to.include(started.body.id);
  });

  it('retries the failed runs a filter matches; they are then applied by a worker', async () => {
    const failed = await createMany(client, tenant, 8, { batch: 'retry-me' });
    const fine = await createMany(client, tenant, 2, { batch: 'retry-me' });
    // As a worker marks a run that cannot be applied: failed, its start still owed.
    await testDb()('workflow_runs')
      .whereIn('id', failed)
      .update({ status: 'failed', pending_since: null });
    const started = await bulk(client, 'retry', { filter: { label: ['batch:retry-me'] } });
    expect(started.status, started.text).to.equal(202);
    worker = await startWorker();
    const view = await completed(client, started.body.id);
    expect(view).to.include({ action: 'retry', matched: 10, done: 8 });
    expect(view.skipped).to.deep.equal({ run_not_retryable: 2 });
    const retried = await eventCounts([...failed, ...fine], 'run.retried');
    for (const id of failed) expect(retried.get(id), id).to.equal(1);
    for (const id of fine) expect(retried.get(id), id).to.equal(undefined);
    for (const id of failed) {
      await waitFor('retried run to start', async () => {
        const row = await testDb()('workflow_runs').where({ id }).first();
        return row.status === 'active';
      });
    }
  });

  it('refuses a request without a filter, bad filter values, and unknown or foreign ids', async () => {
    for (const body of [{}, { filter: {} }, { reason: 'x' }]) {
      const res = await bulk(client, 'cancel', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body).to.deep.include({ code: 'filter_required', field: '/filter' });
    }
    const bad: Array<[Json, string]> = [
      [{ status: 'sleeping' }, '/filter/status'],
      [{ label: ['Env:prod'] }, '/filter/label/0'],
      [{ label: 'env:prod' }, '/filter/label'],
      [{ overdue: 'yes' }, '/filter/overdue'],
      [{ created_after: '2026-02-30T00:00:00Z' }, '/filter/created_after'],
      [{ limit: 5 }, '/filter/limit'],
    ];
    for (const [filter, field] of bad) {
      const res = await bulk(client, 'retry', { filter });
      expect(res.status, JSON.stringify(filter)).to.equal(400);
      expect(res.body).to.deep.include({ code: 'invalid_body', field });
    }
    expect((await progress(client, 'nope')).status).to.equal(404);
    const mine = await bulk(client, 'cancel', { filter: { template_id: 'no-such-template' } });
    expect(mine.status).to.equal(202);
    const foreign = await progress(otherClient, mine.body.id);
    expect(foreign.status).to.equal(404);
    expect((foreign.body as unknown as Json).code).to.equal('bulk_action_not_found');
  });

  it('answers a replayed Idempotency-Key with the same bulk action, and makes only one', async () => {
    const headers = { 'Idempotency-Key': `bulk-${Date.now()}` };
    const body = { filter: { label: ['idem:1'] } };
    const first = await bulk(client, 'cancel', body, headers);
    const again = await bulk(client, 'cancel', body, headers);
    expect(first.status).to.equal(202);
    expect(again.status).to.equal(202);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.id).to.equal(first.body.id);
    const rows = await testDb()('bulk_actions').where({ organization_id: tenant.orgId });
    expect(
      rows.filter((r: { filter: string }) => r.filter === JSON.stringify(body.filter)),
    ).to.have.length(1);
  });

  it('moves its cursor and counts in the transaction of the runs it changes: no moment shows one without the other', async function () {
    // What makes a resumed action exact: a worker that dies after a batch's commit leaves the
    // cursor past that batch, never behind it. Read as consistent snapshots while the action
    // runs, the runs cancelled always equal `done`, and the runs at or above the cursor always
    // equal `matched`; a cursor written after the commit shows the gap between the two.
    this.timeout(120_000);
    const own = await createTenant(testDb());
    const ownClient = new Client(api.url, own.key);
    const total = 600;
    await createMany(ownClient, own, total, { drill: 'atomic' });
    const started = await bulk(ownClient, 'cancel', { filter: { label: ['drill:atomic'] } });
    expect(started.status).to.equal(202);
    worker = await startWorker({ BULK_BATCH_SIZE: '5' });
    const seen: Array<{
      cursor: string | null;
      matched: number;
      done: number;
      above: number;
      cancelled: number;
    }> = [];
    let status = 'running';
    while (status === 'running') {
      await testDb().transaction(async (trx) => {
        // One snapshot for both reads (REPEATABLE READ, taken at the first read).
        const [[action]] = (await trx.raw(
          'SELECT status, cursor_seq, matched, done FROM bulk_actions WHERE id = ?',
          [started.body.id],
        )) as [Array<{ status: string; cursor_seq: string | null; matched: number; done: number }>];
        const [[counts]] = (await trx.raw(
          "SELECT COALESCE(SUM(status = 'cancelled'), 0) AS cancelled, " +
            'COALESCE(SUM(seq >= ?), 0) AS above FROM workflow_runs WHERE organization_id = ?',
          [action!.cursor_seq ?? Number.MAX_SAFE_INTEGER, own.orgId],
        )) as [Array<{ cancelled: number | string; above: number | string }>];
        status = action!.status;
        seen.push({
          cursor: action!.cursor_seq,
          matched: Number(action!.matched),
          done: Number(action!.done),
          above: Number(counts!.above),
          cancelled: Number(counts!.cancelled),
        });
      });
    }
    const during = seen.filter((s) => s.done > 0 && s.done < total);
    expect(during.length, 'snapshots taken while the action ran').to.be.above(10);
    for (const s of seen) {
      expect(s.cancelled, `runs cancelled vs done at ${JSON.stringify(s)}`).to.equal(s.done);
      expect(s.above, `runs at or above the cursor vs matched at ${JSON.stringify(s)}`).to.equal(
        s.matched,
      );
    }
    expect(seen.at(-1)).to.include({ matched: total, done: total, cancelled: total });
  });

  it('cancels a few thousand runs exactly once each though its worker is SIGKILLed midway', async function () {
    this.timeout(180_000);
    const total = 2500;
    const ids = await createMany(client, tenant, total, { drill: 'kill' });
    const started = await bulk(client, 'cancel', { filter: { label: ['drill:kill'] } });
    expect(started.status).to.equal(202);
    const env = { BULK_BATCH_SIZE: '25' };
    worker = await startWorker(env);
    await waitFor(
      'some batches done',
      async () => {
        const view = (await progress(client, started.body.id)).body;
        return view.done >= 100 ? view : undefined;
      },
      60_000,
      10,
    );
    await worker.stop('SIGKILL');
    const atKill = (await progress(client, started.body.id)).body;
    expect(atKill.status, 'killed before the end').to.equal('running');
    expect(atKill.done).to.be.below(total);
    worker = await startWorker(env);
    const view = await completed(client, started.body.id, 120_000);
    expect(view).to.include({ matched: total, done: total });
    expect(view.skipped).to.deep.equal({});
    const cancels = await eventCounts(ids, 'run.cancelled');
    expect(cancels.size).to.equal(total);
    for (const id of ids) expect(cancels.get(id), id).to.equal(1);
    const statuses = (await testDb()('workflow_runs')
      .whereIn('id', ids)
      .groupBy('status')
      .select('status')
      .count({ n: '*' })) as Array<{ status: string; n: number | string }>;
    expect(statuses.map((r) => [r.status, Number(r.n)])).to.deep.equal([['cancelled', total]]);
  });
});
