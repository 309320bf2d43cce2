// Where webhooks may not go, with the operator's defaults: http, credentials and literal
// internal addresses are refused when the endpoint is made; a name that resolves inside is
// refused when it is resolved for an attempt, which fails with a clear reason, and the
// receiver behind it gets nothing.
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { expect } from 'chai';
import { isInternalAddress } from '../../src/webhooks/url-policy.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from '../support/webhook-receiver.js';

describe('webhooks: server-side request forgery', function () {
  this.timeout(60000);

  let strict: ApiProcess;
  let httpOnly: ApiProcess;
  let worker: ServiceProcess;
  let receiver: WebhookReceiver;
  let tenant: Tenant;

  before(async () => {
    receiver = await WebhookReceiver.start();
    const fast = {
      ...WEBHOOK_TEST_ENV,
      WEBHOOK_ALLOW_HTTP: 'false',
      WEBHOOK_ALLOW_PRIVATE: 'false',
    };
    // http allowed (the receiver has no TLS), internal addresses not.
    const http = { ...fast, WEBHOOK_ALLOW_HTTP: 'true' };
    [strict, httpOnly, worker] = await Promise.all([
      startApi(fast),
      startApi(http),
      startWorker(http),
    ]);
    tenant = await createTenant(testDb());
  });

  after(async () => {
    await Promise.all([strict?.stop(), httpOnly?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  it('refuses http, credentials and internal literal addresses when the endpoint is made', async () => {
    const client = new Client(strict.url, tenant.key);
    for (const [url, reason] of [
      ['http://hooks.example.com/x', /https/],
      ['https://user:secret@hooks.example.com/x', /credentials/],
      ['https://localhost/x', /local host/],
      ['https://127.0.0.1/x', /internal address/],
      ['https://10.1.2.3/x', /internal address/],
      ['https://192.168.0.10/x', /internal address/],
      ['https://169.254.169.254/latest/meta-data/', /internal address/],
      ['https://[::1]/x', /internal address/],
      ['https://[::ffff:127.0.0.1]/x', /internal address/],
      ['https://[fd00:ec2::254]/x', /internal address/],
    ] as const) {
      const res = await client.call<{ message: string; code: string }>('/create-webhook-endpoint', {
        url,
      });
      expect(res.status, url).to.equal(400);
      expect(res.body.message, url).to.match(reason);
      expect(res.body.code).to.equal('invalid_url');
    }
    const ok = await client.call<{ id: string }>('/create-webhook-endpoint', {
      url: 'https://hooks.example.com/x',
    });
    expect(ok.status).to.equal(200);
    await client.call('/delete-webhook-endpoint', { id: ok.body.id });
  });

  it('refuses, at delivery, a name that resolves to an internal address', async function () {
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length === 0 || !addresses.some((a) => isInternalAddress(a.address))) {
      this.skip(); // this machine's name does not resolve inside: nothing to point at
    }
    const client = new Client(httpOnly.url, tenant.key);
    const created = await client.call<{ id: string }>('/create-webhook-endpoint', {
      url: receiver.url('/inside', name),
    });
    expect(created.status, 'a name is not refused when made').to.equal(200);
    const run = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: { item: 'x', amount: '1' },
    });
    expect(run.status).to.equal(200);
    const attempt = await waitFor('a refused attempt', async () => {
      const log = await client.call<
        Array<{ attempts: Array<{ error?: string; statusCode?: number }> }>
      >(`/get-webhook-deliveries?endpoint_id=${created.body.id}`);
      return log.body.flatMap((d) => d.attempts)[0];
    });
    expect(attempt.error).to.match(new RegExp(`refused: ${name} resolves to an internal address`));
    expect(attempt).not.to.have.property('statusCode');
    expect(receiver.at('/inside')).to.have.length(0);
    await client.call('/delete-webhook-endpoint', { id: created.body.id });
  });
});
