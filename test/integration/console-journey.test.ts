// One journey through every screen of the console, as a team lead would take it, in a real
// browser against a real API, worker, MariaDB, Redis and webhook receiver: sign in; make a
// template and a second version of it; subscribe a webhook endpoint; watch a run created
// through the API appear live, and complete its steps through the form until it is completed;
// cancel another run with a reason; bulk-retry the failed runs and watch the progress to the
// end; open the delivery log and redeliver; read the audit log; make a read-only key, sign in
// with it and find every write action disabled with its reason; sign out, and the key is gone.
// Every screen passes checkScreen (axe-core, no sideways scrolling, a screenshot), and nothing
// the page asks leaves the host or carries a key.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import {
  checkScreen,
  expectClean,
  openConsole,
  signIn,
  type ConsolePage,
} from '../support/console.js';
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
import { WEBHOOK_TEST_ENV, WebhookReceiver } from '../support/webhook-receiver.js';

describe('console: one journey through every screen', function () {
  this.timeout(240_000);

  const env = { ...WEBHOOK_TEST_ENV, BASE_PATH: '/wrs', JOB_ATTEMPTS: '1' };
  let api: ApiProcess;
  let worker: ServiceProcess;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  let failed: string[];
  let c: ConsolePage | undefined;
  const secrets: string[] = [];

  const runJson = async (id: string) =>
    JSON.parse(
      (await testDb()('workflow_runs').where({ id }).first()).run_json as string,
    ) as Record<string, { seq: number }>;
  const setPendingSeq = async (id: string, seq: number) => {
    const json = await runJson(id);
    json.pending!.seq = seq;
    await testDb()('workflow_runs')
      .where({ id })
      .update({ run_json: JSON.stringify(json) });
  };
  const status = async (id: string) => (await client.getRun(id)).body.status as string;

  before(async () => {
    api = await startApi(env);
    receiver = await WebhookReceiver.start();
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    // Two runs that fail as a worker fails a run it cannot apply (their waiting change is
    // broken before any worker sees them); mended later, so that a retry applies them.
    failed = [];
    for (let i = 0; i < 2; i++) {
      const id = (await client.createRun(createBody(tenant))).body.id as string;
      await setPendingSeq(id, 9);
      failed.push(id);
    }
    worker = await startWorker(env);
    for (const id of failed)
      await waitFor('run to fail', async () => (await status(id)) === 'failed');
    browser = await launchChromium();
  });

  after(async () => {
    await c?.close();
    await browser?.close();
    await worker?.stop();
    await api?.stop();
    await receiver?.close();
  });

  const go = async (page: Page, screen: string, heading = screen) => {
    await page.getByRole('link', { name: screen, exact: true }).first().click();
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  };
  const confirmDialog = async (page: Page, button: string, reason?: string) => {
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    if (reason !== undefined) await dialog.getByRole('textbox').fill(reason);
    await dialog.getByRole('button', { name: button }).click();
    await dialog.waitFor({ state: 'hidden' });
  };
  const label = (page: Page, text: string) => page.getByLabel(text, { exact: true });

  it('takes a team lead through every screen, and a read-only key through every write action', async () => {
    c = await openConsole(browser, api);
    const { page } = c;
    await c.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(api.url).origin,
    });

    // 1. Sign in.
    await checkScreen(page, 'journey-sign-in');
    await signIn(page, tenant.key);

    // 2. A template, and a second version of it.
    await go(page, 'Templates');
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByRole('heading', { name: 'New template' }).waitFor();
    await label(page, 'Template name').fill('Laptop handover');
    await label(page, 'Page 1: Name').fill('Order');
    await label(page, 'Page 1, field 1: Input id').fill('model');
    await label(page, 'Page 1, field 1: Field name').fill('Model');
    await label(page, 'Page 1, field 1: Required').check();
    await page.getByRole('button', { name: 'Add a page' }).click();
    await label(page, 'Page 2: Name').fill('Hand over');
    await label(page, 'Page 2, field 1: Input id').fill('serial');
    await label(page, 'Page 2, field 1: Field name').fill('Serial number');
    await checkScreen(page, 'journey-template-editor');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Laptop handover', level: 1 }).waitFor();
    const templateId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await page.getByRole('button', { name: 'Edit as a new version' }).click();
    await label(page, 'Page 2, field 1: Required').check();
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.waitForURL((url) => url.searchParams.get('version') === '2');
    await page.waitForFunction(
      () => document.querySelectorAll('.tpl-versions tbody tr').length === 2,
    );
    await checkScreen(page, 'journey-template');

    // 3. A webhook endpoint, subscribed before any run of the journey.
    await go(page, 'Webhooks');
    const hook = receiver.url('/journey');
    await page.getByRole('button', { name: 'Subscribe an endpoint' }).click();
    await page.getByLabel('URL').fill(hook);
    await page.getByLabel('run.created').check();
    await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
    await page.getByRole('heading', { name: `Endpoint subscribed: ${hook}` }).waitFor();
    secrets.push((await page.locator('.shown-once .secret-value').innerText()).trim());

    // 4. A run created through the API appears live on the runs screen.
    await go(page, 'Runs');
    await page.getByRole('status').filter({ hasText: /^Live/ }).waitFor();
    const created = await client.createRun({
      workflow_template_id: templateId,
      input_fields: { model: 'X1' },
      user_assignments: { Order: 'ada', 'Hand over': 'grace' },
    });
    expect(created.status, created.text).to.equal(200);
    const runId = created.body.id as string;
    const row = page.locator(`tr[data-run-id="${runId}"]`);
    await row.waitFor();
    await row.getByText('active').waitFor();
    await checkScreen(page, 'journey-runs');

    // 5. Its steps, completed through the form until it is completed.
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: 'Complete the current step: Order' }).waitFor();
    await page.getByRole('button', { name: 'Complete step' }).click();
    await confirmDialog(page, 'Complete step');
    await page.getByRole('heading', { name: 'Complete the current step: Hand over' }).waitFor();
    await page.getByRole('textbox', { name: /^Serial number/ }).fill('SN-42');
    await page.getByRole('button', { name: 'Complete step' }).click();
    await confirmDialog(page, 'Complete step');
    await page.locator('.outcome').getByText('Completed').waitFor();
    expect(await status(runId)).to.equal('completed');
    await checkScreen(page, 'journey-run');

    // 6. Another run, cancelled with a reason.
    const other = (await client.createRun(createBody(tenant))).body.id as string;
    await waitFor('the other run to start', async () => (await status(other)) === 'active');
    await go(page, 'Runs');
    await page.locator(`tr[data-run-id="${other}"]`).getByRole('link').click();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await confirmDialog(page, 'Cancel run', 'ordered twice');
    await page.locator('.outcome').getByText('Cancelled').waitFor();
    const cancelled = (await client.getRun(other)).body;
    expect(cancelled.status).to.equal('cancelled');
    expect(JSON.stringify(cancelled.history)).to.include('ordered twice');

    // 7. The failed runs, bulk-retried, with the progress followed to its end.
    for (const id of failed) await setPendingSeq(id, 1);
    await go(page, 'Bulk actions');
    const form = page.getByRole('form', { name: 'Filter runs' });
    await form.getByRole('checkbox', { name: 'failed' }).check();
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/status=failed/);
    await page.getByText('2 runs match this filter').waitFor();
    await page.getByRole('button', { name: 'Retry matching runs' }).click();
    await confirmDialog(page, 'Retry matching runs', 'upstream fixed');
    await page.getByRole('progressbar', { name: 'Progress of the bulk retry' }).waitFor();
    await page.getByText('2 of 2 runs handled').waitFor();
    await page.getByText('Finished: 2 retried, 0 skipped.').waitFor();
    await checkScreen(page, 'journey-bulk');
    for (const id of failed) {
      await waitFor('a retried run to start', async () => (await status(id)) === 'active');
    }

    // 8. The delivery log, and a redelivery the receiver gets again.
    await waitFor('the delivery', () => receiver.at('/journey')[0]);
    await go(page, 'Webhooks');
    await page.getByRole('link', { name: `Delivery log of ${hook}` }).click();
    const delivery = page.locator('table.deliveries tbody tr').first();
    await delivery.getByText('HTTP 200').waitFor();
    await delivery.getByRole('button', { name: /^Redeliver/ }).click();
    await confirmDialog(page, 'Redeliver');
    await waitFor('the redelivery', () => receiver.at('/journey')[1]);
    await waitFor('the second attempt in the log', async () =>
      (await delivery.locator('.attempts li').count()) === 2 ? true : undefined,
    );
    await checkScreen(page, 'journey-webhooks');

    // 9. The audit log: the template's versions and the endpoint are there, by this key.
    await go(page, 'Audit log');
    await page.getByText('template.updated').first().waitFor();
    await page.getByText('webhook_endpoint.created').first().waitFor();
    await checkScreen(page, 'journey-audit');

    // The runs screen now, once its counts have caught up: the picture in docs/console.md.
    await go(page, 'Runs');
    const counts = page.getByRole('navigation', { name: 'Runs by status' });
    await waitFor('the counts of the journey', async () =>
      /2\s*active[\s\S]*1\s*completed[\s\S]*1\s*cancelled[\s\S]*4\s*in all/.test(
        await counts.innerText(),
      )
        ? true
        : undefined,
    );
    await checkScreen(page, 'journey-runs-end');

    // 10. A read-only key, shown once.
    await go(page, 'API keys');
    await page.getByLabel('Name').fill('read-only');
    for (const scope of ['runs:read', 'templates:read', 'webhooks:read', 'audit:read']) {
      await page.getByLabel(scope, { exact: true }).check();
    }
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Key read-only created' }).waitFor();
    const readOnly = (await page.locator('.shown-once .secret-value').innerText()).trim();
    expect(readOnly).to.match(/^wrs_/);
    secrets.push(readOnly);
    await checkScreen(page, 'journey-keys');

    // 11. Signed in with it, every write action on every screen is disabled, with its reason.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, readOnly);
    const denied = async (where: string) => {
      const buttons = page.locator('button[data-scope]');
      await buttons.first().waitFor();
      const found = await buttons.evaluateAll((all) =>
        all.map((b) => ({
          scope: b.getAttribute('data-scope'),
          disabled: (b as HTMLButtonElement).disabled,
          reason: b.parentElement?.querySelector('.reason')?.textContent ?? null,
        })),
      );
      expect(found.length, where).to.be.greaterThan(0);
      for (const button of found) {
        expect(button, where).to.deep.equal({
          scope: button.scope,
          disabled: true,
          reason: `needs ${button.scope}`,
        });
      }
    };
    await go(page, 'Runs');
    await page.locator(`tr[data-run-id="${failed[0]}"]`).getByRole('link').click();
    await page.getByRole('heading', { name: 'Complete the current step: Request' }).waitFor();
    await denied('a run');
    await go(page, 'Bulk actions');
    await denied('bulk actions');
    await go(page, 'Templates');
    await denied('templates');
    await page.getByRole('link', { name: 'Laptop handover' }).click();
    await page.getByRole('heading', { name: 'Laptop handover', level: 1 }).waitFor();
    await denied('a template');
    await go(page, 'Webhooks');
    await page.getByRole('link', { name: `Delivery log of ${hook}` }).click();
    await page.locator('table.deliveries tbody tr').first().waitFor();
    await denied('webhooks');
    expect(await page.getByRole('link', { name: 'API keys' }).getAttribute('title')).to.equal(
      'needs keys:manage',
    );

    // 12. Signed out, the key is gone from the tab.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => JSON.stringify({ ...sessionStorage }))).to.equal('{}');
    await expectClean(c, api, [tenant.key, ...secrets]);
  });
});
