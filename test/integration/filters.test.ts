// Filters on GET /get-workflow-runs: each alone and combined, kept in the Link of the next
// page, a 400 naming the parameter for each bad value, and never another organization's runs.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, nextLink, request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { sleep, waitFor } from '../support/wait.js';
import { TemplateStore } from '../../src/templates/template-store.js';

describe('filters on GET /get-workflow-runs', () => {
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;
  let secondTemplate: string;
  const runs: Record<string, string[]> = {};

  async function rowsOf(id: string) {
    return testDb()('workflow_runs').where({ id }).first();
  }

  before(async () => {
    [api, worker] = await Promise.all([startApi(), startWorker()]);
    tenant = await createTenant(testDb());
    other = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    secondTemplate = (
      await new TemplateStore(testDb()).insert(tenant.orgId, {
        name: 'Second',
        pages: [{ name: 'Only', inputFields: [] }],
      })
    ).id;
    const make = async (label: string, body: unknown) => {
      const res = await client.createRun(body);
      expect(res.status).to.equal(200);
      (runs[label] ??= []).push(res.body.id as string);
      await sleep(3); // creation times apart, for the time filters
      return res.body.id as string;
    };
    for (let i = 0; i < 3; i++) await make('alice', createBody(tenant));
    for (let i = 0; i < 2; i++)
      await make('carol', createBody(tenant, { user_assignments: { Request: 'carol' } }));
    for (let i = 0; i < 2; i++)
      await make('second', { workflow_template_id: secondTemplate, input_fields: {} });
    const all = Object.values(runs).flat();
    for (const id of all)
      await waitFor('start', async () => (await rowsOf(id)).status === 'active');
    // One cancelled, one completed.
    await client.cancelRun({ workflow_run_id: runs.alice![0] });
    await client.completeStep({ workflow_run_id: runs.second![0], step_name: 'Only' });
    await waitFor(
      'completion',
      async () => (await rowsOf(runs.second![0]!)).status === 'completed',
    );
    // The other organization has runs that match every filter too.
    const otherClient = new Client(api.url, other.key);
    for (let i = 0; i < 2; i++) await otherClient.createRun(createBody(other));
    await sleep(300);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  async function ids(query: string): Promise<string[]> {
    const res = await client.listRuns(query);
    expect(res.status, `${query}: ${res.text}`).to.equal(200);
    return res.body.map((r) => r.id as string);
  }

  const newestFirst = (list: string[]) => [...list].reverse();

  it('filters by status, one or several', async () => {
    expect(await ids('?status=cancelled')).to.deep.equal([runs.alice![0]]);
    expect(await ids('?status=completed')).to.deep.equal([runs.second![0]]);
    expect(await ids('?status=completed,cancelled')).to.deep.equal([
      runs.second![0],
      runs.alice![0],
    ]);
    expect(await ids('?status=active')).to.have.length(5);
    expect(await ids('?status=failed')).to.deep.equal([]);
  });

  it('filters by template, by the current step’s assignee, and by overdue', async () => {
    expect(await ids(`?template_id=${secondTemplate}`)).to.deep.equal(newestFirst(runs.second!));
    expect(await ids('?assignee=carol')).to.deep.equal(newestFirst(runs.carol!));
    expect(await ids('?assignee=alice')).to.deep.equal(newestFirst(runs.alice!.slice(1)));
    expect(await ids('?overdue=true')).to.deep.equal([]);
    expect(await ids('?overdue=false')).to.have.length(7);
  });

  it('filters by time of last activity and of creation', async () => {
    const all = (await client.listRuns()).body;
    const created = await testDb()('workflow_runs')
      .whereIn(
        'id',
        all.map((r) => r.id as string),
      )
      .select('id', 'created_at');
    const secondCreated = created.find((r) => r.id === runs.second![1])!.created_at as Date;
    expect(await ids(`?created_after=${secondCreated.toISOString()}`)).to.deep.equal([]);
    expect(
      await ids(`?created_before=${secondCreated.toISOString()}&template_id=${secondTemplate}`),
    ).to.deep.equal([runs.second![0]]);
    const last = Math.max(...all.map((r) => Date.parse(r.lastActivity as string)));
    expect(await ids(`?updated_after=${new Date(last + 1).toISOString()}`)).to.deep.equal([]);
    expect(await ids(`?updated_before=${new Date(last + 1).toISOString()}`)).to.have.length(7);
  });

  it('combines filters, and keeps them in the Link of the next page', async () => {
    expect(
      await ids(`?status=active&template_id=${tenant.template.id}&assignee=alice`),
    ).to.deep.equal(newestFirst(runs.alice!.slice(1)));
    const seen: string[] = [];
    let path: string | undefined = '/get-workflow-runs?status=active&limit=2';
    while (path) {
      const res: Awaited<ReturnType<Client['listRuns']>> = await request(
        `http://127.0.0.1:${api.port}${path}`,
        { key: tenant.key },
      );
      expect(res.status).to.equal(200);
      seen.push(...res.body.map((r) => r.id as string));
      path = nextLink(res.headers);
      if (path) expect(path).to.include('status=active');
    }
    expect(seen).to.have.length(5);
    expect(new Set(seen).size).to.equal(5);
  });

  it('answers each bad value with a 400 naming the parameter', async () => {
    for (const [query, name] of [
      ['?status=done', 'status'],
      ['?status=active,', 'status'],
      ['?overdue=yes', 'overdue'],
      ['?updated_after=yesterday', 'updated_after'],
      ['?created_before=2026-13-45T00:00:00Z', 'created_before'],
      ['?template_id=', 'template_id'],
      ['?assignee=', 'assignee'],
      ['?status=active&status=failed', 'status'],
      ['?colour=red', 'colour'],
    ] as const) {
      const res = await client.listRuns(query);
      expect(res.status, query).to.equal(400);
      expect((res.body as unknown as { message: string }).message, query).to.include(name);
    }
  });

  it('never shows another organization’s runs, whatever the filter', async () => {
    const mine = new Set(Object.values(runs).flat());
    for (const query of [
      '?status=active',
      '?assignee=alice',
      `?template_id=${other.template.id}`,
      '?overdue=false',
      '?created_after=2000-01-01T00:00:00Z',
    ]) {
      for (const id of await ids(query)) expect(mine.has(id), query).to.equal(true);
    }
    expect(await ids(`?template_id=${other.template.id}`)).to.deep.equal([]);
  });
});
