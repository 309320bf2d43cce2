// GET /count-workflow-runs: how many of the organization's runs match the list's filters, by
// status — what the console shows above the runs and before a bulk action. Each status is
// counted by a bounded scan, so a status past the bound is reported as the bound and named in
// `exceeded`. And GET /get-current-api-key: what any key reads of itself.
import { expect } from 'chai';
import { SYSTEM } from '../../src/audit/actor.js';
import { newId } from '../../src/lib/ids.js';
import { RUN_COUNT_LIMIT } from '../../src/runs/run-list.js';
import {
  eventRowsOf,
  insertEventsStatements,
  insertRunsStatements,
} from '../../src/runs/run-sql.js';
import { newRun } from '../../src/runs/run-state.js';
import { assertDescribed } from '../support/api-document.js';
import { createBody, createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

type Counts = {
  byStatus: Record<string, number>;
  total: number;
  limit: number;
  exceeded: string[];
};

describe('counts of runs by status, and the calling key', function () {
  this.timeout(120_000);

  let api: ApiProcess;
  let tenant: Tenant;
  let other: Tenant;

  const count = async (query: string, key = tenant.key) => {
    const res = await request<Counts>(`${api.url}/count-workflow-runs${query}`, { key });
    await assertDescribed(api.url, 'GET', '/count-workflow-runs', res.status, res.body);
    return res;
  };

  before(async () => {
    api = await startApi();
    [tenant, other] = await Promise.all([createTenant(testDb()), createTenant(testDb())]);
    const client = new Client(api.url, tenant.key);
    for (let i = 0; i < 5; i++) {
      const labels = { customer: i < 2 ? 'acme' : 'globex' };
      const res = await client.createRun(createBody(tenant, { labels }));
      expect(res.status).to.equal(200);
      if (i === 4) {
        const cancelled = await client.cancelRun({ workflow_run_id: res.body.id });
        expect(cancelled.status).to.equal(200);
      }
    }
    // Another organization's runs are never counted.
    await new Client(api.url, other.key).createRun(createBody(other));
  });

  after(() => api?.stop());

  it("counts the organization's runs by status, and only its own", async () => {
    const res = await count('');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      byStatus: { pending: 4, active: 0, completed: 0, failed: 0, cancelled: 1 },
      total: 5,
      limit: RUN_COUNT_LIMIT,
      exceeded: [],
    });
  });

  it("takes the list's filters: statuses, template, labels, times", async () => {
    expect((await count('?status=cancelled')).body.total).to.equal(1);
    const some = await count('?status=pending,cancelled&label=customer:globex');
    expect(some.body.byStatus).to.deep.equal({
      pending: 2,
      active: 0,
      completed: 0,
      failed: 0,
      cancelled: 1,
    });
    expect((await count('?label=customer:acme')).body.total).to.equal(2);
    expect((await count(`?template_id=${tenant.template.id}`)).body.total).to.equal(5);
    expect((await count('?template_id=nope')).body.total).to.equal(0);
    expect((await count('?created_after=2999-01-01T00:00:00Z')).body.total).to.equal(0);
  });

  it('refuses a bad filter with a 400 naming it', async () => {
    const res = await count('?status=sleeping');
    expect(res.status).to.equal(400);
    expect(res.body).to.include({ code: 'invalid_query' });
    const date = await count('?created_after=2026-02-30T00:00:00Z');
    expect(date.status).to.equal(400);
  });

  it('counts a status past the bound as the bound, and names it in exceeded', async () => {
    const big = await createTenant(testDb());
    const db = testDb();
    for (let done = 0; done <= RUN_COUNT_LIMIT; done += 2000) {
      const now = new Date();
      const runs = Array.from({ length: Math.min(2000, RUN_COUNT_LIMIT + 1 - done) }, () =>
        newRun(newId(), big.orgId, big.template, { item: 'x', amount: '1' }, {}, now, SYSTEM),
      );
      await db.transaction(async (trx) => {
        for (const sql of insertRunsStatements(runs)) await trx.raw(sql);
        for (const sql of insertEventsStatements(eventRowsOf(runs))) await trx.raw(sql);
      });
    }
    const res = await count('', big.key);
    expect(res.body.byStatus.pending).to.equal(RUN_COUNT_LIMIT);
    expect(res.body.exceeded).to.deep.equal(['pending']);
  });

  it('describes the calling key to itself, whatever its scopes, never with its secret', async () => {
    const narrow = await createKey(testDb(), tenant.orgId, {
      name: 'dashboard',
      scopes: ['audit:read'],
      expiresAt: new Date('2099-01-01T00:00:00Z'),
    });
    const res = await request<Record<string, unknown>>(`${api.url}/get-current-api-key`, {
      key: narrow.key,
    });
    expect(res.status).to.equal(200);
    await assertDescribed(api.url, 'GET', '/get-current-api-key', res.status, res.body);
    expect(res.body).to.include({ id: narrow.id, name: 'dashboard', prefix: narrow.prefix });
    expect(res.body.scopes).to.deep.equal(['audit:read']);
    expect(res.body.expiresAt).to.equal('2099-01-01T00:00:00.000Z');
    expect(JSON.stringify(res.body)).to.not.include(narrow.key);
    const none = await request<{ code: string }>(`${api.url}/get-current-api-key`, {
      key: 'wrs_nope',
    });
    expect([none.status, none.body.code]).to.deep.equal([403, 'forbidden']);
  });
});
