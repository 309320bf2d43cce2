// The HTTP surface around the endpoints: base path, 404/405 bodies, health and readiness,
// request ids, and the per-key rate limit.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

describe('HTTP surface', () => {
  let api: ApiProcess;
  let tenant: Tenant;

  before(async () => {
    api = await startApi({
      BASE_PATH: '/api/v1',
      RATE_LIMIT_MAX: '5',
      RATE_LIMIT_WINDOW_MS: '60000',
    });
    tenant = await createTenant(testDb());
  });

  after(() => api?.stop());

  const root = () => `http://127.0.0.1:${api.port}`;

  it('serves every path under BASE_PATH and nothing outside it', async () => {
    expect((await request(`${root()}/api/v1/healthz`)).status).to.equal(200);
    const outside = await request(`${root()}/get-workflow-runs`, { key: tenant.key });
    expect(outside.status).to.equal(404);
    expect(outside.body).to.have.property('message');
  });

  it('answers an unknown path with 404 and a wrong method with 405, both JSON', async () => {
    const missing = await request(`${api.url}/nope`);
    expect(missing.status).to.equal(404);
    expect(missing.body).to.have.property('message').that.is.a('string');
    const wrong = await request(`${api.url}/create-workflow-run`, {
      method: 'GET',
      key: tenant.key,
    });
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.include('POST');
    expect(wrong.body).to.have.property('message').that.is.a('string');
    const del = await request(`${api.url}/get-workflow-runs`, { method: 'DELETE' });
    expect(del.status).to.equal(405);
    expect(del.body).to.have.property('message');
  });

  it('reports health and readiness', async () => {
    expect((await request(`${api.url}/healthz`)).body).to.deep.equal({ status: 'ok' });
    // 503 while the process warms up (readiness.test.ts), then 200.
    const ready = await waitFor('/readyz to answer 200', async () => {
      const reply = await request(`${api.url}/readyz`);
      return reply.status === 200 && reply;
    });
    expect(ready.body).to.include({ mysql: true, redis: true, warm: true });
  });

  it('echoes a request id, or makes one', async () => {
    const given = await request(`${api.url}/healthz`, { headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers.get('x-request-id')).to.equal('abc-123');
    const made = await request(`${api.url}/healthz`);
    expect(made.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    // Log lines go out asynchronously: the line comes shortly after the answer.
    await api.waitForLine(/"requestId":"abc-123"/, 5000);
  });

  it('limits requests per key with 429, Retry-After and a JSON message', async () => {
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof request>> | undefined;
    for (let i = 0; i < 7; i++) {
      const res = await request(`${api.url}/create-workflow-run`, {
        key: tenant.key,
        body: createBody(tenant),
      });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.slice(0, 5)).to.deep.equal([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).to.deep.equal([429, 429]);
    expect(Number(limited!.headers.get('retry-after'))).to.be.within(1, 60);
    expect(limited!.body)
      .to.have.property('message')
      .that.matches(/too many requests/);
    // Another key of another organization has its own budget.
    const other = await createTenant(testDb());
    expect((await request(`${api.url}/get-workflow-runs`, { key: other.key })).status).to.equal(
      200,
    );
  });

  it('logs a client that hangs up mid-body as a 400, not a failure of the service', async () => {
    const fresh = await createTenant(testDb());
    const socket = connect(api.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /api/v1/create-workflow-run HTTP/1.1\r\nHost: test\r\n' +
        `Authorization: ${fresh.key}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 1000\r\nX-Request-Id: hang-up-mid-body\r\n\r\n{"workflow_',
    );
    await sleep(100);
    socket.destroy();
    const line = await waitFor('the access log line', () =>
      api.lines.find((l) => l.includes('"hang-up-mid-body"') && l.includes('"msg":"request"')),
    );
    expect(JSON.parse(line)).to.include({ status: 400 });
    expect(api.lines.filter((l) => l.includes('"hang-up-mid-body"'))).to.have.length(1);
    expect(await testDb()('workflow_runs').where({ organization_id: fresh.orgId })).to.have.length(
      0,
    );
    expect((await request(`${api.url}/healthz`)).status).to.equal(200);
  });
});
