// The console's bulk actions and audit log in a real browser, against a real API and worker:
// a filter picked in the form and kept in the URL, the runs it matches counted, a bulk retry
// and a bulk cancel confirmed and followed to their end (the API agreeing run by run), an
// empty filter prevented, the audit log filtered and paged, and a key without the write or
// audit scope finding the actions disabled and the log explained.
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
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
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

interface BulkView {
  id: string;
  action: string;
  status: string;
  matched: number;
  done: number;
  skipped: Record<string, number>;
}

describe('console: bulk actions and the audit log', function () {
  this.timeout(120_000);

  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  const open: ConsolePage[] = [];

  before(async () => {
    api = await startApi();
    browser = await launchChromium();
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  afterEach(async () => {
    for (const page of open.splice(0)) await page.close();
    await worker?.stop();
    worker = undefined;
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
  });

  async function createRuns(n: number, labels: Record<string, string>): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await client.createRun(createBody(tenant, { labels }));
      expect(res.status, res.text).to.equal(200);
      ids.push(res.body.id as string);
    }
    return ids;
  }

  const history = async (id: string) =>
    ((await client.getRun(id)).body.history as Array<{ type: string }>).map((e) => e.type);

  it('counts the runs a filter matches, bulk-retries and bulk-cancels them, and follows each to its end', async () => {
    // Runs that fail as a worker marks a run it cannot apply: failed, their start still owed.
    const failed = await createRuns(3, { batch: 'console-bulk' });
    const fine = await createRuns(2, { batch: 'console-bulk' });
    await testDb()('workflow_runs')
      .whereIn('id', failed)
      .update({ status: 'failed', pending_since: null });
    worker = await startWorker();

    const c = await openConsole(browser, api);
    open.push(c);
    const { page } = c;
    await signIn(page, tenant.key);
    await page.getByRole('link', { name: 'Bulk actions' }).click();
    await page.getByRole('heading', { name: 'Bulk actions' }).waitFor();

    // The filter, picked in the form, goes into the URL.
    const form = page.getByRole('form', { name: 'Filter runs' });
    await form.getByRole('checkbox', { name: 'failed' }).check();
    await form.getByLabel('Label (key:value)').fill('batch:console-bulk');
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/status=failed/);
    expect(new URL(page.url()).searchParams.getAll('label')).to.deep.equal(['batch:console-bulk']);

    // How many match, by status, and a link to them in the runs list.
    const match = page.getByRole('region', { name: 'Matching runs' });
    await match.getByText('3 runs match this filter').waitFor();
    const byStatus = match.getByRole('list', { name: 'Matching runs by status' });
    expect(await byStatus.getByRole('listitem').allInnerTexts()).to.deep.equal([
      'pending 0',
      'active 0',
      'completed 0',
      'failed 3',
      'cancelled 0',
    ]);
    const link = match.getByRole('link', { name: 'See these runs in the runs list' });
    const linked = new URL((await link.getAttribute('href'))!, api.url);
    expect(linked.pathname).to.equal('/console');
    expect(linked.searchParams.get('status')).to.equal('failed');
    expect(linked.searchParams.getAll('label')).to.deep.equal(['batch:console-bulk']);

    // Retry, confirmed in the dialog that says how many runs match.
    await page.getByRole('button', { name: 'Retry matching runs' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Reason (optional)').waitFor();
    expect(await dialog.innerText()).to.match(/3\s+runs match this filter; 3 of them are failed/);
    await dialog.getByLabel('Reason (optional)').fill('upstream fixed');
    await dialog.getByRole('button', { name: 'Retry matching runs' }).click();

    // The progress bar follows the action to its end; the counts show there.
    const bar = page.getByRole('progressbar', { name: 'Progress of the bulk retry' });
    await bar.waitFor();
    await page.getByText('Finished: 3 retried, 0 skipped.').waitFor({ timeout: 30_000 });
    expect(await bar.evaluate((el: HTMLProgressElement) => [el.value, el.max])).to.deep.equal([
      3, 3,
    ]);
    expect(await page.locator('#bulk-progress-text').innerText()).to.equal('3 of 3 runs handled');
    const actionId = new URL(page.url()).searchParams.get('action')!;
    expect(actionId).to.be.a('string').and.not.equal('');
    const view = (await client.call<BulkView>(`/get-bulk-action?id=${actionId}`)).body;
    expect(view).to.include({ action: 'retry', status: 'completed', matched: 3, done: 3 });
    for (const id of failed) expect(await history(id), id).to.include('run.retried');
    for (const id of fine) expect(await history(id), id).not.to.include('run.retried');
    // The count is read again: none of them is failed now.
    await match.getByText('0 runs match this filter').waitFor();

    // The action's URL can be reloaded, and follows the same action.
    await page.reload();
    await page.getByText('Finished: 3 retried, 0 skipped.').waitFor();

    // An empty filter: the buttons are disabled, saying why; the API refuses it too.
    await form.getByRole('button', { name: 'Clear' }).click();
    await page.getByText('Pick at least one filter first').waitFor();
    for (const name of ['Cancel matching runs', 'Retry matching runs']) {
      expect(await page.getByRole('button', { name }).isDisabled(), name).to.equal(true);
    }
    const refused = await client.call<{ code: string; message: string }>(
      '/bulk-cancel-workflow-runs',
      { filter: {} },
    );
    expect(refused.status).to.equal(400);
    expect(refused.body.code).to.equal('filter_required');

    // A bulk cancel of the label's runs: those still going are cancelled, with the reason.
    await form.getByLabel('Label (key:value)').fill('batch:console-bulk');
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    await form.getByRole('button', { name: 'Apply' }).click();
    await match.getByText('5 runs match this filter').waitFor();
    await page.getByRole('button', { name: 'Cancel matching runs' }).click();
    await dialog.getByLabel('Reason (optional)').waitFor();
    expect(await dialog.innerText()).to.match(/5\s+runs match this filter; 5 of them are pending/);
    await dialog.getByLabel('Reason (optional)').fill('batch withdrawn');
    await dialog.getByRole('button', { name: 'Cancel matching runs' }).click();
    await page.getByText('Finished: 5 cancelled, 0 skipped.').waitFor({ timeout: 30_000 });
    for (const id of [...failed, ...fine]) {
      const run = (await client.getRun(id)).body;
      expect(run.status, id).to.equal('cancelled');
    }
    await page.getByRole('progressbar', { name: 'Progress of the bulk cancel' }).waitFor();
    expect(await page.locator('.bulk-progress').innerText()).to.include('batch withdrawn');

    // Again: every run has ended now, so each is skipped with its reason.
    await page.getByRole('button', { name: 'Cancel matching runs' }).click();
    await dialog.getByRole('button', { name: 'Cancel matching runs' }).click();
    await page.getByText('Finished: 0 cancelled, 5 skipped.').waitFor({ timeout: 30_000 });
    expect(await page.locator('.bulk-progress').innerText()).to.match(
      /5 had already ended \(run_not_cancellable\)/,
    );
    await checkScreen(page, 'bulk');
    await page.setViewportSize(PHONE);
    await checkScreen(page, 'bulk-phone');
    await expectClean(c, api, [tenant.key]);
  });

  it('shows the audit log newest first, filtered and paged, with each entry in words', async () => {
    const org = await createTenant(testDb());
    const orgClient = new Client(api.url, org.key);
    const made: string[] = [];
    for (let i = 1; i <= 12; i++) {
      const res = await orgClient.call<{ id: string }>('/create-workflow-template', {
        name: `Audit template ${i}`,
        pages: [{ name: 'Only', inputFields: [{ inputId: 'x', fieldName: 'X' }] }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      made.push(res.body.id);
    }
    const updated = await orgClient.call('/update-workflow-template', {
      id: made[0],
      expected_version: 1,
      name: 'Audit template 1, renamed',
      pages: [{ name: 'Only', dueInHours: 8, inputFields: [{ inputId: 'x', fieldName: 'X' }] }],
    });
    expect(updated.status).to.equal(200);

    const c = await openConsole(browser, api);
    open.push(c);
    const { page } = c;
    await signIn(page, org.key);
    await page.getByRole('link', { name: 'Audit log' }).click();
    const table = page.locator('table.audit-table');
    await table.waitFor();
    const rows = table.locator('tbody tr');
    // The organization's key and template made by the fixtures (as the admin CLI does), then
    // the test's 12 templates and 1 update, newest first.
    expect(await rows.count()).to.equal(15);
    const first = rows.nth(0);
    expect(await first.locator('td[data-label="Action"]').innerText()).to.equal('template.updated');
    expect(await first.locator('td[data-label="Details"]').innerText()).to.match(
      /name:\s*Audit template 1, renamed\s+version:\s*2/,
    );
    expect(await first.locator('td[data-label="Actor"]').innerText()).to.include('test');
    expect(await first.locator('td[data-label="Target"]').innerText()).to.include(made[0]);
    expect(await rows.nth(1).locator('td[data-label="Details"]').innerText()).to.include(
      'Audit template 12',
    );
    expect(await first.locator('time').getAttribute('title')).to.match(/^\d{4}-\d\d-\d\dT/);

    // A filter on the type narrows the list, and goes into the URL.
    const form = page.getByRole('form', { name: 'Filter the audit log' });
    await form.getByText('Actions (any)').click();
    await form
      .getByRole('group', { name: 'Templates' })
      .getByRole('checkbox', { name: 'updated' })
      .check();
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/type=template.updated/);
    await waitFor('one entry', async () => (await rows.count()) === 1);
    expect(await rows.nth(0).locator('td[data-label="Action"]').innerText()).to.equal(
      'template.updated',
    );

    // Ten a page: the next page holds the rest, the oldest last.
    await form.getByRole('button', { name: 'Clear' }).click();
    await waitFor('every entry', async () => (await rows.count()) === 15);
    await form.getByLabel('Per page').selectOption('10');
    await form.getByRole('button', { name: 'Apply' }).click();
    await waitFor('a page of ten', async () => (await rows.count()) === 10);
    await checkScreen(page, 'audit');
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.getByRole('heading', { name: 'Older entries' }).waitFor();
    await waitFor('the last five', async () => (await rows.count()) === 5);
    expect(await rows.nth(2).locator('td[data-label="Details"]').innerText()).to.match(
      /Audit template 1\b/,
    );
    const oldest = rows.nth(4);
    expect(await oldest.locator('td[data-label="Action"]').innerText()).to.equal('api_key.created');
    expect(await oldest.locator('td[data-label="Actor"]').innerText()).to.include('admin CLI');
    expect(await oldest.locator('td[data-label="Details"]').innerText()).to.match(/scopes:/);
    expect(new URL(page.url()).searchParams.get('cursor')).to.be.a('string');
    expect(await page.getByRole('link', { name: 'Next page' }).count()).to.equal(0);

    // An actor's link shows only that actor's entries; a time range with none says so.
    await page.getByRole('link', { name: 'Newest entries' }).click();
    await rows.nth(0).locator('td[data-label="Actor"] a').click();
    await page.waitForURL(new RegExp(`actor=${org.keyId}`));
    expect(await form.getByLabel('Actor').inputValue()).to.equal(org.keyId);
    await form.getByLabel('Per page').selectOption('25');
    await form.getByRole('button', { name: 'Apply' }).click();
    await waitFor("the key's 13 entries", async () => (await rows.count()) === 13);
    for (const text of await table.locator('td[data-label="Actor"]').allInnerTexts()) {
      expect(text).to.include(org.keyId);
    }
    await form.getByLabel('Actor').fill('admin_cli');
    await form.getByRole('button', { name: 'Apply' }).click();
    await waitFor("the admin CLI's 2 entries", async () => (await rows.count()) === 2);
    await form.getByLabel('Actor').fill('system');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No entry matches these filters.').waitFor();
    await expectClean(c, api, [org.key]);
  });

  it('shows the audit log on a phone in the dark', async () => {
    const c = await openConsole(browser, api, { viewport: PHONE, colorScheme: 'dark' });
    open.push(c);
    await signIn(c.page, tenant.key);
    await c.page.goto(`${api.url}/console/audit`);
    await c.page.locator('table.audit-table').waitFor();
    // The bulk actions of the first test are there, with their filters in words.
    expect(await c.page.locator('table.audit-table').innerText()).to.include('bulk_action.created');
    await checkScreen(c.page, 'audit-phone-dark');
    await expectClean(c, api, [tenant.key]);
  });

  it('shows a read-only key the bulk actions disabled and the audit log explained', async () => {
    const reader = await createKey(testDb(), tenant.orgId, {
      name: 'reader',
      scopes: ['runs:read', 'templates:read'],
    });
    const c = await openConsole(browser, api);
    open.push(c);
    const { page } = c;
    await signIn(page, reader.key);
    await page.goto(`${api.url}/console/bulk?status=failed`);
    await page
      .getByRole('region', { name: 'Matching runs' })
      .getByText('match this filter')
      .waitFor();
    for (const name of ['Cancel matching runs', 'Retry matching runs']) {
      const button = page.getByRole('button', { name });
      expect(await button.isDisabled(), name).to.equal(true);
      expect(await button.locator('xpath=..').innerText(), name).to.include('needs runs:write');
    }
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByText('needs the audit:read scope').waitFor();
    expect(c.answers.filter((a) => a.includes('/get-audit-log'))).to.deep.equal([]);
    await checkScreen(page, 'audit-denied');
    await expectClean(c, api, [reader.key]);
  });
});
