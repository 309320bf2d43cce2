// GET /get-workflow-runs and /get-workflow-templates: the spec's shapes, bounded pages with a
// Link to the next one, newest first, and only the caller's organization.
import { expect } from 'chai';
import { createBody, createTenant, TWO_STEP_TEMPLATE, type Tenant } from '../support/fixtures.js';
import { Client, nextLink, request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { TemplateStore } from '../../src/templates/template-store.js';

describe('list endpoints', () => {
  let api: ApiProcess;
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;
  const created: string[] = [];

  before(async () => {
    api = await startApi();
    tenant = await createTenant(testDb());
    other = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    for (let i = 0; i < 7; i++) {
      const res = await client.createRun(createBody(tenant));
      created.push(res.body.id as string);
    }
    await new Client(api.url, other.key).createRun(createBody(other));
  });

  after(() => api?.stop());

  it('lists runs newest first with the WorkflowRunSummary fields in camelCase', async () => {
    const res = await client.listRuns();
    expect(res.status).to.equal(200);
    expect(res.body.map((r) => r.id)).to.deep.equal([...created].reverse());
    for (const run of res.body) {
      // No field is null; those without a value are left out (runs may not have started yet).
      for (const key of Object.keys(run)) {
        expect([
          'currentStepAssignee',
          'currentStepDueDate',
          'currentStepName',
          'id',
          'lastActivity',
          'status',
          'workflowName',
        ]).to.include(key);
        expect(run[key], key).to.be.a('string');
      }
      expect(run.workflowName).to.equal('Purchase request');
      expect(new Date(run.lastActivity as string).toISOString()).to.equal(run.lastActivity);
    }
    expect(res.headers.get('link')).to.equal(null);
  });

  it('pages through runs with limit and the Link rel="next" cursor, each run once', async () => {
    const seen: string[] = [];
    let path: string | undefined = '/get-workflow-runs?limit=3';
    let pages = 0;
    while (path) {
      const res: Awaited<ReturnType<Client['listRuns']>> = await request(
        `http://127.0.0.1:${api.port}${path}`,
        { key: tenant.key },
      );
      expect(res.status).to.equal(200);
      expect(res.body.length).to.be.at.most(3);
      seen.push(...res.body.map((r) => r.id as string));
      path = nextLink(res.headers);
      pages++;
    }
    expect(pages).to.equal(3);
    expect(seen).to.deep.equal([...created].reverse());
  });

  it('refuses a bad limit or cursor with 400', async () => {
    for (const query of [
      '?limit=0',
      '?limit=1001',
      '?limit=abc',
      '?limit=-1',
      '?limit=1.5',
      '?cursor=%%%',
      '?cursor=eyJ4IjoxfQ',
      '?cursor=',
      '?limit=1&limit=2',
      '?foo=1',
    ]) {
      const res = await client.listRuns(query);
      expect(res.status, query).to.equal(400);
      expect(res.body).to.have.property('message').that.is.a('string');
    }
  });

  it("never returns another organization's runs, whatever the cursor", async () => {
    const theirs = await new Client(api.url, other.key).listRuns('?limit=1000');
    expect(theirs.body).to.have.length(1);
    expect(created).to.not.include(theirs.body[0]!.id);
    // A cursor taken from our listing gives the other organization only its own rows.
    const first = await client.listRuns('?limit=2');
    const cursor = new URL(nextLink(first.headers)!, 'http://x').searchParams.get('cursor')!;
    const crossed = await new Client(api.url, other.key).listRuns(`?cursor=${cursor}`);
    expect(crossed.status).to.equal(200);
    for (const run of crossed.body) expect(created).to.not.include(run.id);
  });

  it('lists templates with their inputFields flattened by page', async () => {
    const second = await new TemplateStore(testDb()).insert(tenant.orgId, {
      name: 'Empty',
      pages: [{ name: 'Only', inputFields: [] }],
    });
    const res = await client.listTemplates();
    expect(res.status).to.equal(200);
    expect(res.body.map((t) => t.id)).to.deep.equal([second.id, tenant.template.id]);
    expect(res.body[1]).to.deep.equal({
      id: tenant.template.id,
      name: 'Purchase request',
      inputFields: TWO_STEP_TEMPLATE.pages.flatMap((p) =>
        p.inputFields.map((f) => ({
          pageName: p.name,
          inputId: f.inputId,
          fieldName: f.fieldName,
        })),
      ),
    });
    expect(res.body[0]!.inputFields).to.deep.equal([]);
    const paged = await client.listTemplates('?limit=1');
    expect(paged.body).to.have.length(1);
    expect(nextLink(paged.headers)).to.match(/^\/get-workflow-templates\?limit=1&cursor=/);
    const theirs = await new Client(api.url, other.key).listTemplates();
    expect(theirs.body.map((t) => t.id)).to.deep.equal([other.template.id]);
  });

  it('answers an empty array to an organization with nothing', async () => {
    const empty = await createTenant(testDb());
    await testDb()('workflow_templates').where({ organization_id: empty.orgId }).delete();
    const c = new Client(api.url, empty.key);
    expect((await c.listRuns()).body).to.deep.equal([]);
    expect((await c.listTemplates()).body).to.deep.equal([]);
  });
});
