// API keys: 403 on every endpoint without a live key, "Bearer" accepted, revocation seen by a
// running API within its cache time, and no key in any log line.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import { runAdmin, startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

describe('authentication', () => {
  let api: ApiProcess;
  let tenant: Tenant;

  before(async () => {
    api = await startApi({ KEY_CACHE_TTL_MS: '1000' });
    tenant = await createTenant(testDb());
  });

  after(() => api?.stop());

  const endpoints = (t: Tenant): Array<[string, string, unknown]> => [
    ['POST', '/create-workflow-run', createBody(t)],
    ['POST', '/complete-workflow-step', { workflow_run_id: 'x' }],
    ['GET', '/get-workflow-runs', undefined],
    ['GET', '/get-workflow-templates', undefined],
  ];

  for (const [label, header] of [
    ['no Authorization header', undefined],
    ['an empty key', ''],
    ['an unknown key', 'wrs_unknownunknownunknownunknown'],
    ['an unknown Bearer key', 'Bearer wrs_unknownunknownunknown'],
    ['garbage', 'Basic dXNlcjpwYXNz'],
  ] as const) {
    it(`answers 403 with a message to ${label}, on every endpoint`, async () => {
      const before = await testDb()('workflow_runs').count({ n: '*' });
      for (const [method, path, body] of endpoints(tenant)) {
        const res = await request(`${api.url}${path}`, { method, key: header, body });
        expect(res.status, `${method} ${path}`).to.equal(403);
        expect(res.body).to.have.property('message').that.is.a('string');
      }
      expect(await testDb()('workflow_runs').count({ n: '*' })).to.deep.equal(before);
    });
  }

  it('accepts the key itself and "Bearer <key>"', async () => {
    expect((await request(`${api.url}/get-workflow-runs`, { key: tenant.key })).status).to.equal(
      200,
    );
    expect(
      (await request(`${api.url}/get-workflow-runs`, { key: `Bearer ${tenant.key}` })).status,
    ).to.equal(200);
  });

  it('refuses a revoked key within a few seconds, also in a running API that cached it', async () => {
    const t = await createTenant(testDb());
    expect((await request(`${api.url}/get-workflow-runs`, { key: t.key })).status).to.equal(200);
    const revoked = await runAdmin(['revoke-api-key', '--id', t.keyId]);
    expect(revoked.code, revoked.stderr).to.equal(0);
    const revokedAt = Date.now();
    await waitFor(
      'revoked key to be refused',
      async () => (await request(`${api.url}/get-workflow-runs`, { key: t.key })).status === 403,
      5000,
    );
    expect(Date.now() - revokedAt).to.be.below(5000);
  });

  it('stores only the SHA-256 of a key and never writes a key or Authorization header to the log', async () => {
    const row = await testDb()('api_keys').where({ id: tenant.keyId }).first();
    expect(JSON.stringify(row)).to.not.include(tenant.key);
    expect(row.key_hash).to.match(/^[0-9a-f]{64}$/);
    await request(`${api.url}/get-workflow-runs`, { key: `Bearer ${tenant.key}` });
    await request(`${api.url}/nope`, { key: tenant.key });
    await new Promise((r) => setTimeout(r, 200));
    const logs = api.lines.join('\n');
    expect(logs).to.include('"msg":"request"');
    expect(logs).to.not.include(tenant.key);
    expect(logs.toLowerCase()).to.not.include('authorization');
    expect(logs).to.not.include('wrs_unknown');
  });
});
