// The console's runs and run screens in a real browser, against a real API and worker: runs
// created through the API appear live, counts show, the filter and the page live in the URL,
// and a run's steps are completed through the form, runs are cancelled with a reason and a
// failed run retried — each change showing without a reload. A read-only key finds the
// actions disabled with their reason.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import {
  checkScreen,
  expectClean,
  openConsole,
  PHONE,
  signIn,
  type ConsolePage,
} from '../support/console.js';
import { createBody, createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

type History = Array<{ type: string; data: Record<string, unknown>; actor?: { type: string } }>;

describe('console: the runs and a run', function () {
  this.timeout(120_000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  let failedId: string;
  const open: ConsolePage[] = [];

  const row = (id: string) => testDb()('workflow_runs').where({ id }).first();
  const status = async (id: string) => (await client.getRun(id)).body.status as string;

  async function activeRun(extra: Record<string, unknown> = {}): Promise<string> {
    const id = (await client.createRun(createBody(tenant, extra))).body.id as string;
    await waitFor('run to start', async () => (await status(id)) === 'active');
    return id;
  }

  before(async () => {
    api = await startApi({ BASE_PATH: '/wrs', JOB_ATTEMPTS: '1' });
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    // A run no worker can apply (its waiting change skips ahead): the worker marks it failed.
    failedId = (await client.createRun(createBody(tenant))).body.id as string;
    const broken = JSON.parse((await row(failedId)).run_json);
    broken.pending.seq = 9;
    await testDb()('workflow_runs')
      .where({ id: failedId })
      .update({ run_json: JSON.stringify(broken) });
    worker = await startWorker({ JOB_ATTEMPTS: '1' });
    await waitFor('run to fail', async () => (await status(failedId)) === 'failed');
    browser = await launchChromium();
  });

  afterEach(async () => {
    for (const c of open.splice(0)) await c.close();
  });

  after(async () => {
    await browser?.close();
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  async function signedIn(key: string, options: Parameters<typeof openConsole>[2] = {}) {
    const c = await openConsole(browser, api, options);
    open.push(c);
    await signIn(c.page, key);
    return c;
  }

  /** Waits until no API answer has come for a moment (a navigation would lose their bodies). */
  async function quiet(c: ConsolePage) {
    // Live events read the counts again within a second: quiet means 1.5 s without an answer.
    let count = c.answers.length;
    let since = Date.now();
    while (Date.now() - since < 1500) {
      await new Promise((r) => setTimeout(r, 100));
      if (c.answers.length !== count) {
        count = c.answers.length;
        since = Date.now();
      }
    }
  }

  /** Opens a run from the runs screen, as a user does (its row's link). */
  async function openRun(page: Page, id: string) {
    await page.locator(`tr[data-run-id="${id}"]`).getByRole('link').click();
    await page.waitForURL(new RegExp(`/console/runs/${id}$`));
  }

  const liveStatus = (page: Page) => page.getByRole('status').filter({ hasText: /^Live/ });

  it('shows new runs live, with counts, and keeps the filter and the page in the URL', async () => {
    const c = await signedIn(tenant.key);
    const { page } = c;
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await liveStatus(page).waitFor();

    // The screen is open first; a run created through the API then appears, and moves live.
    const id = (await client.createRun(createBody(tenant))).body.id as string;
    const created = page.locator(`tr[data-run-id="${id}"]`);
    await created.waitFor();
    await created.getByText('active').waitFor();
    expect(await created.innerText())
      .to.include('Request')
      .and.include('alice');
    expect(page.url()).to.not.include(id);

    // The counts are the API's.
    const counts = page.getByRole('navigation', { name: 'Runs by status' });
    const expected = async () =>
      (
        await request<{ byStatus: Record<string, number> }>(`${api.url}/count-workflow-runs`, {
          key: tenant.key,
        })
      ).body.byStatus;
    await waitFor('counts to match the API', async () => {
      const byStatus = await expected();
      const text = await counts.innerText();
      return ['active', 'failed', 'pending'].every((s) =>
        new RegExp(`\\b${byStatus[s]}\\s+${s}`).test(text),
      );
    });
    await checkScreen(page, 'runs');

    // Filtering by status puts it in the URL; a reload keeps it.
    await page.getByRole('checkbox', { name: 'failed' }).check();
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/status=failed/);
    const failedRow = page.locator(`tr[data-run-id="${failedId}"]`);
    await failedRow.waitFor();
    await created.waitFor({ state: 'detached' });
    await quiet(c);
    await page.reload();
    await failedRow.waitFor();
    expect(await page.getByRole('checkbox', { name: 'failed' }).isChecked()).to.equal(true);
    expect(await page.locator('tr[data-run-id]').count()).to.equal(1);
    // A count is a link to its status.
    await counts.getByRole('link', { name: /active/ }).click();
    await page.waitForURL(/status=active/);
    await created.waitFor();
    expect(await failedRow.count()).to.equal(0);

    // Pages: five runs a page, the cursor in the URL (a page can be bookmarked), a first page.
    for (let i = 0; i < 5; i++) await client.createRun(createBody(tenant));
    await quiet(c);
    await page.goto(`${api.url}/console?limit=5`);
    await page.locator('tr[data-run-id]').first().waitFor();
    const first = await page
      .locator('tr[data-run-id]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(first).to.have.length(5);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=/);
    expect(page.url()).to.include('limit=5');
    await page.getByRole('link', { name: 'First page' }).waitFor();
    const second = () =>
      page
        .locator('tr[data-run-id]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    await waitFor('the second page', async () => {
      const ids = await second();
      return ids.length > 0 && ids.every((x) => !first.includes(x));
    });
    const bookmarked = await second();
    await quiet(c);
    await page.reload();
    await page.locator('tr[data-run-id]').first().waitFor();
    expect(await second()).to.deep.equal(bookmarked);
    await page.getByRole('link', { name: 'First page' }).click();
    await page.waitForURL((url) => !url.search.includes('cursor='));
    await waitFor('the first page again', async () => (await second())[0] === first[0]);
    await expectClean(c, api, [tenant.key]);
  });

  it("completes a run's steps through its form, live, naming a missing field", async () => {
    const id = await activeRun();
    const c = await signedIn(tenant.key);
    const { page } = c;
    // Every value the field has shown, from the moment it is in the page: it never shows blank
    // before the run's value (the step's page arrives after the run).
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { itemValues: string[] }).itemValues = seen;
      let last: HTMLInputElement | null = null;
      new MutationObserver(() => {
        const input = document.querySelector<HTMLInputElement>('#complete-item');
        if (input && (input !== last || seen.at(-1) !== input.value)) seen.push(input.value);
        last = input;
      }).observe(document.body, { childList: true, subtree: true, attributes: true });
    });
    await openRun(page, id);
    await page.getByRole('heading', { name: 'Complete the current step: Request' }).waitFor();
    await liveStatus(page).waitFor();
    const item = page.getByRole('textbox', { name: /^Item/ });
    expect(await item.inputValue()).to.equal('Laptop'); // prefilled at creation
    expect(
      await page.evaluate(() => (window as unknown as { itemValues: string[] }).itemValues),
    ).to.deep.equal(['Laptop']);
    expect(await page.getByText('Item (required)').count()).to.equal(1);

    // A required field left blank: the API's message shows next to it.
    await item.fill('');
    await page.getByRole('button', { name: 'Complete step' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Complete step' }).click();
    await page.locator('#complete-item-error').waitFor();
    expect(await item.getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#complete-item-error').innerText()).to.match(/item/i);

    await item.fill('Desk');
    await page.getByRole('textbox', { name: /^Note/ }).fill('for the new office');
    await page.getByRole('button', { name: 'Complete step' }).click();
    await dialog.getByRole('button', { name: 'Complete step' }).click();
    // The worker applies it; the screen follows without a reload.
    await page.getByRole('heading', { name: 'Complete the current step: Approval' }).waitFor();
    await checkScreen(page, 'run');
    await page.getByRole('textbox', { name: /^Approver/ }).fill('carol');
    await page.getByRole('button', { name: 'Complete step' }).click();
    await dialog.getByRole('button', { name: 'Complete step' }).click();
    await page.locator('.outcome').getByText('Completed').waitFor();
    expect(await status(id)).to.equal('completed');
    const detail = (await client.getRun(id)).body;
    expect(detail.inputFields).to.deep.include({ item: 'Desk', approver: 'carol' });
    // The inputs show where each value came from.
    const inputs = page.locator('table.inputs');
    expect(await inputs.innerText())
      .to.include('carol')
      .and.include('at step Approval');
    // The amount was kept as given at creation: the form sent only what it changed.
    expect(await inputs.locator('tr', { hasText: 'amount' }).innerText()).to.include(
      'prefilled at creation',
    );
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).to.equal(0);
    await expectClean(c, api, [tenant.key]);
  });

  it('cancels a run with a reason and retries a failed run, each after a confirmation', async () => {
    const id = await activeRun();
    const c = await signedIn(tenant.key);
    const { page } = c;
    await openRun(page, id);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const dialog = page.getByRole('dialog');
    // Back leaves the run as it was.
    await dialog.getByRole('button', { name: 'Back' }).click();
    expect(await status(id)).to.equal('active');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await dialog.getByLabel('Reason (kept in the history)').fill('ordered twice');
    await dialog.getByRole('button', { name: 'Cancel run' }).click();
    await page.locator('.outcome').getByText('Cancelled').waitFor();
    expect(await page.locator('.outcome').innerText()).to.include('ordered twice');
    expect(await status(id)).to.equal('cancelled');
    const history = (await client.getRun(id)).body.history as History;
    expect(history.at(-1)).to.deep.include({ type: 'run.cancelled' });
    expect(history.at(-1)!.data.reason).to.equal('ordered twice');
    expect(history.at(-1)!.actor?.type).to.equal('api_key');
    const timeline = page.locator('ol.timeline');
    await timeline.getByText('reason: “ordered twice”').waitFor();
    expect(await timeline.locator('li.bad').last().innerText()).to.include('by key test');
    expect(await page.getByRole('button', { name: 'Retry run' }).count()).to.equal(0);

    // A failed run: its error shows; after mending its data, a retry is applied live.
    const mended = JSON.parse((await row(failedId)).run_json);
    mended.pending.seq = 1;
    await testDb()('workflow_runs')
      .where({ id: failedId })
      .update({ run_json: JSON.stringify(mended) });
    await page.getByRole('link', { name: 'Runs', exact: true }).first().click();
    await openRun(page, failedId);
    await page.locator('.outcome').getByText('Failed').waitFor();
    expect(await page.locator('ol.timeline li.bad').count()).to.be.greaterThan(0);
    await liveStatus(page).waitFor();
    await page.getByRole('button', { name: 'Retry run' }).click();
    await dialog.getByRole('button', { name: 'Retry run' }).click();
    await page.getByRole('heading', { name: 'Complete the current step: Request' }).waitFor();
    expect(await status(failedId)).to.equal('active');
    await page.locator('ol.timeline').getByText('Retried', { exact: true }).waitFor();
    await expectClean(c, api, [tenant.key]);
  });

  it('shows a read-only key its actions disabled with the reason, at both sizes', async () => {
    const id = await activeRun();
    const reader = await createKey(testDb(), tenant.orgId, {
      name: 'reader',
      scopes: ['runs:read', 'templates:read'],
    });
    const c = await signedIn(reader.key, { viewport: PHONE });
    const { page } = c;
    await openRun(page, id);
    await page.getByRole('heading', { name: 'Complete the current step: Request' }).waitFor();
    for (const name of ['Cancel run', 'Complete step']) {
      const button = page.getByRole('button', { name });
      expect(await button.isDisabled(), name).to.equal(true);
      expect(await button.locator('xpath=..').innerText(), name).to.include('needs runs:write');
    }
    await liveStatus(page).waitFor();
    await checkScreen(page, 'run-phone');
    await expectClean(c, api, [reader.key]);

    const dark = await signedIn(reader.key, { viewport: PHONE, colorScheme: 'dark' });
    await dark.page.locator(`tr[data-run-id="${id}"]`).waitFor();
    await liveStatus(dark.page).waitFor();
    await checkScreen(dark.page, 'runs-phone-dark');
    await expectClean(dark, api, [reader.key]);
  });

  it('explains, instead of failing, to a key without runs:read', async () => {
    const none = await createKey(testDb(), tenant.orgId, { scopes: ['templates:read'] });
    const c = await signedIn(none.key);
    await c.page.getByText('does not hold the runs:read scope').waitFor();
    await expectClean(c, api, [none.key]);
  });
});
