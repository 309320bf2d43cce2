// Labels on runs: given on create, returned in run_json and in the run in full, filtered on
// with label=key:value (repeatable, all must match), keyset pages without gaps or duplicates
// while runs are created, never another organization's runs, and a 400 naming each bad label.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, nextLink } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

describe('run labels', () => {
  let api: ApiProcess;
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

  after(async () => {
    await api?.stop();
  });

  const create = async (c: Client, t: Tenant, labels?: Record<string, string>) => {
    const res = await c.createRun(createBody(t, labels ? { labels } : {}));
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  /** Every id of a filtered list, following Link rel="next". */
  async function allPages(c: Client, query: string): Promise<string[]> {
    const ids: string[] = [];
    let next: string | undefined = `?${query}`;
    while (next) {
      const res = await c.listRuns(next.startsWith('?') ? next : next.slice(next.indexOf('?')));
      expect(res.status, res.text).to.equal(200);
      ids.push(...res.body.map((r) => r.id as string));
      next = nextLink(res.headers);
    }
    return ids;
  }

  it('keeps labels in run_json and in the run in full; a run without labels has none', async () => {
    const made = await create(client, tenant, { env: 'prod', 'team.a-b_c': 'Payments Ω' });
    expect((made.run_json as Record<string, unknown>).labels).to.deep.equal({
      env: 'prod',
      'team.a-b_c': 'Payments Ω',
    });
    const detail = (await client.getRun(made.id as string)).body;
    expect(detail.labels).to.deep.equal({ env: 'prod', 'team.a-b_c': 'Payments Ω' });
    const plain = await create(client, tenant);
    expect(plain.run_json as Record<string, unknown>).not.to.have.property('labels');
    expect((await client.getRun(plain.id as string)).body.labels).to.deep.equal({});
    const rows = await testDb()('run_labels').where({ run_id: plain.id as string });
    expect(rows).to.have.length(0);
  });

  it('filters by one label, by several (all must match), exactly, and with the other filters', async () => {
    const a = await create(client, tenant, { app: 'alpha', tier: 'gold' });
    const b = await create(client, tenant, { app: 'alpha', tier: 'silver' });
    const c = await create(client, tenant, { app: 'Alpha', tier: 'gold' });
    await create(client, tenant, { app: 'beta' });
    expect(await allPages(client, 'label=app:alpha')).to.deep.equal([b.id, a.id]);
    expect(await allPages(client, 'label=app:alpha&label=tier:gold')).to.deep.equal([a.id]);
    expect(await allPages(client, 'label=tier:gold&label=app:Alpha')).to.deep.equal([c.id]);
    expect(await allPages(client, 'label=app:alpha&status=pending,active')).to.have.members([
      a.id,
      b.id,
    ]);
    expect(await allPages(client, 'label=app:alpha&status=completed')).to.deep.equal([]);
    expect(await allPages(client, 'label=app:gamma')).to.deep.equal([]);
    // A value with a colon: the first colon ends the key.
    const d = await create(client, tenant, { url: 'https://x.example:8443/a' });
    expect(await allPages(client, 'label=url:https%3A%2F%2Fx.example%3A8443%2Fa')).to.deep.equal([
      d.id,
    ]);
  });

  it('pages a label filter with no gaps or duplicates while runs are created', async () => {
    const before: string[] = [];
    for (let i = 0; i < 60; i++) {
      before.push((await create(client, tenant, { batch: 'paged' })).id as string);
      if (i % 3 === 0) await create(client, tenant, { batch: 'other' });
    }
    // Walk the pages (7 a page) while 40 more labelled runs are created concurrently.
    const creating = (async () => {
      for (let i = 0; i < 40; i++) await create(client, tenant, { batch: 'paged' });
    })();
    const seen: string[] = [];
    let next: string | undefined = '?label=batch:paged&limit=7';
    while (next) {
      const res = await client.listRuns(next.slice(next.indexOf('?')));
      expect(res.status).to.equal(200);
      seen.push(...res.body.map((r) => r.id as string));
      next = nextLink(res.headers);
      expect(next === undefined || next.includes('label=batch%3Apaged')).to.equal(true);
    }
    await creating;
    expect(new Set(seen).size, 'no duplicates').to.equal(seen.length);
    // Every run that existed when the walk began is on some page (the newest may be too).
    for (const id of before) expect(seen, `run ${id}`).to.include(id);
    const seqs = await testDb()('workflow_runs').whereIn('id', seen).select('id', 'seq');
    const seqOf = new Map(seqs.map((r: { id: string; seq: number }) => [r.id, Number(r.seq)]));
    const order = seen.map((id) => seqOf.get(id)!);
    expect(order).to.deep.equal(
      [...order].sort((x, y) => y - x),
      'newest first',
    );
  });

  it("never shows another organization's runs, though they carry the same labels", async () => {
    const mine = await create(client, tenant, { shared: 'yes' });
    const theirs = await create(otherClient, other, { shared: 'yes' });
    expect(await allPages(client, 'label=shared:yes')).to.deep.equal([mine.id]);
    expect(await allPages(otherClient, 'label=shared:yes')).to.deep.equal([theirs.id]);
  });

  it('refuses 17 labels, a bad key, a long value, a non-string value, and a malformed label filter', async () => {
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    const cases: Array<[Record<string, unknown>, string]> = [
      [many, '/labels'],
      [{ Env: 'prod' }, '/labels/Env'],
      [{ 'a b': 'x' }, '/labels/a b'],
      [{ ['k'.repeat(64)]: 'x' }, `/labels/${'k'.repeat(64)}`],
      [{ env: 'v'.repeat(256) }, '/labels/env'],
      [{ env: 5 }, '/labels/env'],
    ];
    for (const [labels, field] of cases) {
      const res = await client.createRun(createBody(tenant, { labels }));
      expect(res.status, JSON.stringify(labels).slice(0, 60)).to.equal(400);
      expect(res.body).to.include({ code: 'invalid_body', field });
    }
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    expect((await client.createRun(createBody(tenant, { labels: sixteen }))).status).to.equal(200);
    for (const query of [
      'label=env',
      'label=:prod',
      'label=Env:prod',
      `label=env:${'v'.repeat(256)}`,
      'label=env:a&label=env',
    ]) {
      const res = await client.listRuns(`?${query}`);
      expect(res.status, query).to.equal(400);
      const error = res.body as unknown as { code: string; field: string };
      expect(error.code, query).to.equal('invalid_query');
      expect(error.field, query).to.match(/^\/label/);
    }
  });
});
