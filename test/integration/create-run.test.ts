// POST /create-workflow-run: the stored run it answers with, and every refusal, each leaving
// MySQL unchanged.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

describe('POST /create-workflow-run @cluster', () => {
  let api: ApiProcess;
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;

  before(async () => {
    api = await startApi({
      BODY_LIMIT_BYTES: '4096',
      MAX_INPUT_FIELDS: '5',
      MAX_FIELD_LENGTH: '100',
    });
    tenant = await createTenant(testDb());
    other = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(() => api?.stop());

  const runCount = async (orgId: string) =>
    Number(
      (await testDb()('workflow_runs').where({ organization_id: orgId }).count({ n: '*' }))[0]!.n,
    );

  it('stores the run and answers 200 with it, status pending, in snake_case', async () => {
    const res = await client.createRun(createBody(tenant));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    const body = res.body;
    expect(body).to.include({
      organization_id: tenant.orgId,
      template_id: tenant.template.id,
      status: 'pending',
    });
    expect(body.id).to.be.a('string');
    expect(body.last_activity).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const doc = body.run_json as Record<string, unknown>;
    expect(doc.input_fields).to.deep.equal({ item: 'Laptop', amount: '1200' });
    expect(doc.user_assignments).to.deep.equal({ Request: 'alice', Approval: 'bob' });
    expect(doc.template).to.deep.equal({
      id: tenant.template.id,
      name: 'Purchase request',
      version: 1,
      pages: tenant.template.pages,
    });
    const row = await testDb()('workflow_runs').where({ id: body.id }).first();
    expect(row).to.include({
      organization_id: tenant.orgId,
      status: 'pending',
      requested_seq: 1,
      applied_seq: 0,
    });
    // Stored with its template by id, name and version only: the pages are the version's.
    expect(JSON.parse(row.run_json)).to.deep.equal({
      ...doc,
      template: { id: tenant.template.id, name: 'Purchase request', version: 1 },
    });
    expect(row.template_version).to.equal(1);
  });

  it('accepts a run without user_assignments and with empty input_fields', async () => {
    const res = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    expect(res.status).to.equal(200);
    expect((res.body.run_json as { user_assignments: unknown }).user_assignments).to.deep.equal({});
  });

  const refusals: Array<[string, unknown, RegExp]> = [
    ['a missing workflow_template_id', { input_fields: {} }, /workflow_template_id/],
    [
      'a numeric workflow_template_id',
      { workflow_template_id: 42, input_fields: {} },
      /workflow_template_id must be a string/,
    ],
    ['missing input_fields', { workflow_template_id: 'T' }, /input_fields/],
    [
      'input_fields that is an array',
      { workflow_template_id: 'T', input_fields: ['a'] },
      /input_fields must be an object/,
    ],
    [
      'input_fields that is a string',
      { workflow_template_id: 'T', input_fields: 'x' },
      /input_fields must be an object/,
    ],
    [
      'a non-string input value',
      { workflow_template_id: 'T', input_fields: { item: 5 } },
      /input_fields\.item must be a string/,
    ],
    [
      'a null input value',
      { workflow_template_id: 'T', input_fields: { item: null } },
      /input_fields\.item must be a string/,
    ],
    [
      'an unknown inputId',
      { workflow_template_id: 'T', input_fields: { nope: 'x' } },
      /'nope'.*not an inputId/,
    ],
    [
      'user_assignments that is not an object',
      { workflow_template_id: 'T', input_fields: {}, user_assignments: 'bob' },
      /user_assignments must be an object/,
    ],
    [
      'user_assignments null',
      { workflow_template_id: 'T', input_fields: {}, user_assignments: null },
      /user_assignments must not be null/,
    ],
    [
      'a non-string assignee',
      { workflow_template_id: 'T', input_fields: {}, user_assignments: { Request: 1 } },
      /user_assignments\.Request must be a string/,
    ],
    [
      'an unknown page',
      { workflow_template_id: 'T', input_fields: {}, user_assignments: { Nope: 'bob' } },
      /page 'Nope'/,
    ],
    [
      'an unexpected top-level field',
      { workflow_template_id: 'T', input_fields: {}, extra: 1 },
      /unexpected field 'extra'/,
    ],
    [
      'a caller-set organization_id',
      { workflow_template_id: 'T', input_fields: {}, organization_id: 'x' },
      /unexpected field 'organization_id'/,
    ],
    [
      'a caller-set status',
      { workflow_template_id: 'T', input_fields: {}, status: 'completed' },
      /unexpected field 'status'/,
    ],
    [
      'a caller-set id',
      { workflow_template_id: 'T', input_fields: {}, id: 'x' },
      /unexpected field 'id'/,
    ],
    [
      'too many input fields',
      { workflow_template_id: 'T', input_fields: { a: '', b: '', c: '', d: '', e: '', f: '' } },
      /at most 5/,
    ],
    [
      'a too long input value',
      { workflow_template_id: 'T', input_fields: { item: 'x'.repeat(101) } },
      /at most 100 characters/,
    ],
  ];

  for (const [what, body, message] of refusals) {
    it(`refuses ${what} with 400 and writes nothing`, async () => {
      const before = await runCount(tenant.orgId);
      const withTemplate = { ...(body as object) } as Record<string, unknown>;
      if (withTemplate.workflow_template_id === 'T')
        withTemplate.workflow_template_id = tenant.template.id;
      const res = await client.createRun(withTemplate);
      expect(res.status, res.text).to.equal(400);
      expect(res.body).to.have.property('message').that.matches(message);
      expect(await runCount(tenant.orgId)).to.equal(before);
    });
  }

  it("gives the same 400 for an unknown template and for another organization's template", async () => {
    const unknown = await client.createRun({
      workflow_template_id: '01a1fe60-0000-7000-8000-000000000000',
      input_fields: {},
    });
    const foreign = await client.createRun({
      workflow_template_id: other.template.id,
      input_fields: {},
    });
    expect(unknown.status).to.equal(400);
    expect(foreign.status).to.equal(400);
    expect(foreign.body)
      .to.have.property('message')
      .that.matches(/not found/);
    expect(Object.keys(foreign.body)).to.deep.equal(Object.keys(unknown.body));
    expect(await runCount(other.orgId)).to.equal(0);
  });

  it('refuses a body that is not JSON, not an object, or of the wrong type', async () => {
    const url = `${api.url}/create-workflow-run`;
    const notJson = await request(url, {
      key: tenant.key,
      raw: '{"workflow_template_id":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).to.equal(400);
    expect(notJson.body)
      .to.have.property('message')
      .that.matches(/not valid JSON/);
    for (const raw of ['[]', '"x"', '42', 'null']) {
      const res = await request(url, {
        key: tenant.key,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, raw).to.equal(400);
      expect(res.body)
        .to.have.property('message')
        .that.matches(/must be a JSON object/);
    }
    const text = await request(url, {
      key: tenant.key,
      raw: JSON.stringify(createBody(tenant)),
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).to.equal(415);
    expect(text.body).to.have.property('message');
    const none = await request(url, { key: tenant.key, raw: JSON.stringify(createBody(tenant)) });
    expect([400, 415]).to.include(none.status);
  });

  it('answers 413 to an oversized body and writes nothing', async () => {
    const before = await runCount(tenant.orgId);
    const res = await client.createRun({
      ...createBody(tenant),
      input_fields: { item: 'x'.repeat(5000) },
    });
    expect(res.status).to.equal(413);
    expect(res.body)
      .to.have.property('message')
      .that.matches(/larger than 4096 bytes/);
    expect(await runCount(tenant.orgId)).to.equal(before);
  });

  it('keeps deeply nested input bounded: a 400, not a crash', async () => {
    const deep = '['.repeat(2000) + ']'.repeat(2000);
    const res = await request(`${api.url}/create-workflow-run`, {
      key: tenant.key,
      raw: `{"workflow_template_id":"${tenant.template.id}","input_fields":{"item":${deep}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).to.equal(400);
    expect((await request(`${api.url}/healthz`)).status).to.equal(200);
  });
});
