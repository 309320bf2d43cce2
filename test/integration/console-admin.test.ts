// The console's webhooks and API keys screens in a real browser, against a real API, a real
// worker and a real HTTP receiver: subscribing an endpoint (its secret shown once), a run's
// delivery in the endpoint's log, a redelivery reaching the receiver again and its new attempt
// showing without a reload, secret rotation; creating a key with scopes and an expiry (shown
// once, gone after leaving the screen), rolling and revoking keys, and keys whose scopes do not
// allow an action finding it disabled with the reason.
import { expect } from 'chai';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import {
  checkScreen,
  expectClean,
  openConsole,
  PHONE,
  signIn,
  type ConsolePage,
} from '../support/console.js';
import { createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';
import {
  bodyOf,
  verifySignature,
  WEBHOOK_TEST_ENV,
  WebhookReceiver,
} from '../support/webhook-receiver.js';

interface Endpoint {
  id: string;
  url: string;
  events: string[];
}

interface ApiKey {
  id: string;
  name?: string;
  prefix: string;
  scopes: string[];
  expiresAt?: string;
  revokedAt?: string;
  replacedBy?: string;
}

/** Waits until a locator's text matches (the screen updates by itself; no reload). */
async function textOf(locator: Locator, pattern: RegExp, what: string): Promise<string> {
  return waitFor(
    what,
    async () => {
      const text = await locator.innerText();
      return pattern.test(text) ? text : undefined;
    },
    15_000,
    100,
  );
}

/** Confirms the shared dialog with its confirm button. */
async function confirm(page: Page, button: string, expectText?: RegExp): Promise<void> {
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  if (expectText) expect(await dialog.innerText()).to.match(expectText);
  await dialog.getByRole('button', { name: button }).click();
  await dialog.waitFor({ state: 'hidden' });
}

describe('console: webhooks and API keys', function () {
  this.timeout(120_000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  const open: ConsolePage[] = [];

  const env = { ...WEBHOOK_TEST_ENV, BASE_PATH: '/wrs' };

  before(async () => {
    receiver = await WebhookReceiver.start();
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
    browser = await launchChromium();
    tenant = await createTenant(testDb(), {
      name: 'Hooked',
      pages: [{ name: 'Only', inputFields: [] }],
    });
    client = new Client(api.url, tenant.key);
  });

  afterEach(async () => {
    for (const page of open.splice(0)) await page.close();
  });

  after(async () => {
    await browser?.close();
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  async function consoleAs(
    key: string,
    options: Parameters<typeof openConsole>[2] = {},
  ): Promise<ConsolePage> {
    const c = await openConsole(browser, api, options);
    open.push(c);
    await c.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(api.url).origin,
    });
    await signIn(c.page, key);
    return c;
  }

  /** Copies the secret shown once with its button, and checks the clipboard holds it. */
  async function copyShown(page: Page, label: string): Promise<string> {
    const shown = page.locator('.shown-once');
    expect(await shown.innerText()).to.match(/Shown once/);
    const secret = (await shown.locator('.secret-value').innerText()).trim();
    await shown.getByRole('button', { name: `Copy ${label}` }).click();
    await shown.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(secret);
    return secret;
  }

  it('subscribes an endpoint, shows its delivery log, redelivers and rotates the secret', async () => {
    const c = await consoleAs(tenant.key);
    const { page } = c;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No endpoint is subscribed yet').waitFor();

    // Subscribe through the form: the signing secret is shown once, with a copy button.
    const path = '/console-hook';
    const url = receiver.url(path);
    await page.getByRole('button', { name: 'Subscribe an endpoint' }).click();
    await page.getByLabel('URL').fill(url);
    await page.getByLabel('Description (optional)').fill('console test');
    await page.getByLabel('run.created').check();
    await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
    await page.getByRole('heading', { name: `Endpoint subscribed: ${url}` }).waitFor();
    const secret = await copyShown(page, 'signing secret');
    expect(secret).to.match(/^whsec_/);
    const listed = await client.call<Endpoint[]>('/get-webhook-endpoints');
    expect(listed.body.map((e) => [e.url, e.events])).to.deep.equal([[url, ['run.created']]]);
    const endpoint = listed.body[0]!;
    const row = page.locator('table.endpoints tbody tr');
    expect(await row.innerText())
      .to.include(url)
      .and.include('run.created');

    // A run made through the API is delivered, signed with that secret.
    const run = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    expect(run.status).to.equal(200);
    const first = await waitFor('the delivery', () => receiver.at(path)[0]);
    expect(verifySignature(secret, first).data.runId).to.equal(run.body.id);

    // The endpoint's delivery log shows it: event, run, status code.
    await page.getByRole('link', { name: `Delivery log of ${url}` }).click();
    expect(new URL(page.url()).searchParams.get('endpoint')).to.equal(endpoint.id);
    const delivery = page.locator('table.deliveries tbody tr');
    const logged = await textOf(delivery, /HTTP 200/, 'the delivery logged with its status code');
    expect(logged)
      .to.include('run.created')
      .and.include(String(run.body.id))
      .and.include('delivered');
    await checkScreen(page, 'webhooks');

    // The status filter lives in the URL; no failed delivery here.
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No delivery matches this filter.').waitFor();
    expect(new URL(page.url()).searchParams.get('status')).to.equal('failed');
    await page.getByLabel('Status').selectOption('');
    await delivery.first().waitFor();

    // Redeliver: the receiver gets it again (same webhook-id), and the log shows the new attempt.
    await page.getByRole('button', { name: /^Redeliver run\.created/ }).click();
    await confirm(page, 'Redeliver', /sent to/);
    const second = await waitFor('the redelivery', () => receiver.at(path)[1]);
    expect(second.headers['webhook-id']).to.equal(first.headers['webhook-id']);
    expect(bodyOf(second).data.runId).to.equal(run.body.id);
    await waitFor('two attempts in the log', async () =>
      (await delivery.locator('.attempts li').count()) === 2 ? true : undefined,
    );
    const attempts = await textOf(delivery, /round 2[\s\S]*delivered/, 'the second round');
    expect(attempts.match(/HTTP 200/g)).to.have.length(2);

    // Rotate: a new secret, shown once; the next delivery verifies with it.
    await page.getByRole('button', { name: `Rotate secret of ${url}` }).click();
    await confirm(page, 'Rotate secret', /24 hours/);
    await page.getByRole('heading', { name: `New signing secret for ${url}` }).waitFor();
    const rotated = await copyShown(page, 'signing secret');
    expect(rotated)
      .to.match(/^whsec_/)
      .and.not.equal(secret);
    await textOf(row, /old secret signs too until/, 'the old secret noted on the endpoint');
    const another = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    const third = await waitFor('a delivery after the rotation', () =>
      receiver.at(path).find((r) => bodyOf(r).data.runId === another.body.id),
    );
    expect(verifySignature(rotated, third).type).to.equal('run.created');
    // …and the log picks the new delivery up by itself.
    await textOf(
      page.locator('table.deliveries'),
      new RegExp(String(another.body.id)),
      'the new delivery in the log',
    );

    // Delete another endpoint: gone from the list and from the API.
    const spare = await client.call<Endpoint>('/create-webhook-endpoint', {
      url: receiver.url('/spare'),
    });
    expect(spare.status).to.equal(200);
    await page.reload();
    await page.getByRole('button', { name: `Delete ${receiver.url('/spare')}` }).click();
    await confirm(page, 'Delete endpoint', /cannot be undone/);
    await waitFor('the endpoint gone from the list', async () =>
      (await row.count()) === 1 ? true : undefined,
    );
    const after = await client.call<Endpoint[]>('/get-webhook-endpoints');
    expect(after.body.map((e) => e.id)).to.deep.equal([endpoint.id]);
    await expectClean(c, api, [tenant.key]);
  });

  it('shows webhook write actions disabled to a key holding only webhooks:read, on a phone', async () => {
    const endpoints = await client.call<Endpoint[]>('/get-webhook-endpoints');
    let endpoint = endpoints.body[0];
    if (!endpoint) {
      const made = await client.call<Endpoint>('/create-webhook-endpoint', {
        url: receiver.url('/reader'),
      });
      endpoint = made.body;
      await client.createRun({ workflow_template_id: tenant.template.id, input_fields: {} });
    }
    const reader = await createKey(testDb(), tenant.orgId, {
      name: 'reader',
      scopes: ['webhooks:read'],
    });
    const c = await consoleAs(reader.key, { viewport: PHONE });
    const { page } = c;
    await page.goto(`${api.url}/console/webhooks?endpoint=${endpoint.id}`);
    const delivery = page.locator('table.deliveries tbody tr').first();
    await delivery.waitFor();
    for (const name of ['Subscribe an endpoint', 'Rotate secret']) {
      const button = page.getByRole('button', { name });
      expect(await button.isDisabled(), name).to.equal(true);
    }
    const denied = page.locator('.action-denied');
    expect(await denied.count()).to.be.greaterThan(3);
    for (const text of await denied.allInnerTexts())
      expect(text).to.include('needs webhooks:write');
    expect(await delivery.getByRole('button', { name: /^Redeliver/ }).isDisabled()).to.equal(true);
    await checkScreen(page, 'webhooks-phone');
    await expectClean(c, api, [reader.key, tenant.key]);
  });

  it('creates a key with scopes and an expiry (shown once), rolls one and revokes one', async () => {
    const c = await consoleAs(tenant.key);
    const { page } = c;
    await page.getByRole('link', { name: 'API keys' }).click();
    const rows = page.locator('table.keys tbody tr');
    const self = rows.filter({ hasText: 'this key' });
    await self.waitFor();
    expect(await self.innerText()).to.include(tenant.key.slice(0, 10));

    // Create a read-only key: runs:read + templates:read, expiring 2031-06-30 12:00 in Paris.
    await page.getByLabel('Name').fill('dashboard');
    await page.getByLabel('runs:read').check();
    await page.getByLabel('templates:read').check();
    await page.getByLabel(/^Expires/).fill('2031-06-30T12:00');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Key dashboard created' }).waitFor();
    const secret = await copyShown(page, 'API key');
    expect(secret).to.match(/^wrs_/);
    await checkScreen(page, 'keys');

    const keys = await client.call<ApiKey[]>('/get-api-keys');
    const made = keys.body.find((k) => k.name === 'dashboard')!;
    expect(made.scopes).to.deep.equal(['runs:read', 'templates:read']);
    expect(made.expiresAt).to.equal('2031-06-30T10:00:00.000Z');
    expect(secret.startsWith(made.prefix)).to.equal(true);
    expect((await request(`${api.url}/get-workflow-runs`, { key: secret })).status).to.equal(200);
    const write = await request(`${api.url}/create-workflow-run`, {
      key: secret,
      body: { workflow_template_id: tenant.template.id, input_fields: {} },
    });
    expect(write.status).to.equal(403);

    // Shown once: after leaving the screen and coming back, the secret is gone from the page.
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.getByRole('link', { name: 'API keys' }).click();
    await rows.filter({ hasText: made.prefix }).waitFor();
    expect(await page.content()).to.not.include(secret);
    expect(await page.locator('.shown-once').count()).to.equal(0);

    // Roll it with no overlap: a new key, shown once; the old one stops at once.
    await page.getByRole('button', { name: 'Roll dashboard' }).click();
    await page.getByLabel(/^Hours the old key keeps working/).fill('0');
    await page.getByRole('button', { name: 'Roll key' }).click();
    await confirm(page, 'Roll key', /stops working now/);
    await page.getByRole('heading', { name: 'New key for dashboard' }).waitFor();
    const rolled = await copyShown(page, 'API key');
    expect(rolled).to.match(/^wrs_/).and.not.equal(secret);
    const afterRoll = await client.call<ApiKey[]>('/get-api-keys');
    const old = afterRoll.body.find((k) => k.id === made.id)!;
    const replacement = afterRoll.body.find((k) => k.id === old.replacedBy)!;
    expect(replacement.scopes).to.deep.equal(made.scopes);
    expect(replacement.expiresAt).to.equal(made.expiresAt);
    expect((await request(`${api.url}/get-workflow-runs`, { key: secret })).status).to.equal(403);
    expect((await request(`${api.url}/get-workflow-runs`, { key: rolled })).status).to.equal(200);
    await textOf(rows.filter({ hasText: made.prefix }), /expired|replaced/, 'the old key marked');

    // Revoking the signed-in key warns in the confirmation (and is not done here).
    await self.getByRole('button', { name: /^Revoke/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.innerText()).to.include('This is the key you are signed in with');
    await dialog.getByRole('button', { name: 'Back' }).click();
    await dialog.waitFor({ state: 'hidden' });

    // Revoke the rolled key: marked revoked in place, and the API refuses it with 403.
    const newRow = rows.filter({ hasText: replacement.prefix });
    await newRow.getByRole('button', { name: /^Revoke/ }).click();
    await confirm(page, 'Revoke key', /refused/);
    await textOf(newRow, /revoked/, 'the key marked revoked');
    const refused = await request<{ code: string }>(`${api.url}/get-workflow-runs`, {
      key: rolled,
    });
    expect(refused.status).to.equal(403);
    const revoked = await client.call<ApiKey[]>('/get-api-keys');
    expect(revoked.body.find((k) => k.id === replacement.id)?.revokedAt).to.be.a('string');
    await expectClean(c, api, [tenant.key, secret, rolled]);
  });

  it('offers only the scopes the signed-in key holds, on a phone in dark mode', async () => {
    const manager = await createKey(testDb(), tenant.orgId, {
      name: 'manager',
      scopes: ['keys:manage', 'runs:read'],
    });
    const c = await consoleAs(manager.key, { viewport: PHONE, colorScheme: 'dark' });
    const { page } = c;
    await page.goto(`${api.url}/console/keys`);
    await page.locator('table.keys tbody tr').filter({ hasText: 'this key' }).waitFor();
    expect(await page.getByLabel('runs:read').isDisabled()).to.equal(false);
    const webhooksWrite = page.getByLabel('webhooks:write', { exact: true });
    expect(await webhooksWrite.isDisabled()).to.equal(true);
    expect(await page.locator('#scope-webhooks\\:write-reason').innerText()).to.equal(
      'the signed-in key does not hold webhooks:write',
    );
    await checkScreen(page, 'keys-phone-dark');
    await expectClean(c, api, [manager.key, tenant.key]);
  });

  it('loads the next page of keys below the first, each key once', async () => {
    const org = await createTenant(testDb());
    for (let i = 0; i < 55; i++) await createKey(testDb(), org.orgId, { name: `k${i}` });
    const c = await consoleAs(org.key);
    const { page } = c;
    await page.getByRole('link', { name: 'API keys' }).click();
    const rows = page.locator('table.keys tbody tr');
    await waitFor('the first page', async () => ((await rows.count()) === 50 ? true : undefined));
    await page.getByRole('button', { name: 'Load next page' }).click();
    await waitFor('both pages', async () => ((await rows.count()) === 56 ? true : undefined));
    expect(await page.getByRole('button', { name: 'Load next page' }).count()).to.equal(0);
    await expectClean(c, api, [org.key]);
  });
});
