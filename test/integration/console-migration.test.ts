// Moving runs to another template version from the console, in a real browser against a real
// API and worker: on a run's page, the target version chosen, the two versions' pages side by
// side, a check refused under the row of the page the run is at (it maps to none) and under the
// row of a page whose field refuses a value, a page mapped by hand, incompatible values
// dropped, the check's answer in words, then the move confirmed, the page showing the new
// version and the timeline the move. On the bulk actions screen: the filter's template, a dry
// run's counts, then the move itself followed to its end, the API agreeing run by run. A
// read-only key finds both actions disabled with their reason. Each state is checked by axe.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import {
  checkScreen,
  expectClean,
  openConsole,
  PHONE,
  seriousViolations,
  signIn,
  type ConsolePage,
} from '../support/console.js';
import { createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

interface Detail {
  status: string;
  templateVersion: number;
  currentStepName?: string | null;
  inputFields: Record<string, string>;
  history: Array<{ type: string; data: Record<string, unknown> }>;
}

const V1 = {
  name: 'Equipment request',
  pages: [
    {
      name: 'Request',
      inputFields: [
        { inputId: 'item', fieldName: 'Item', required: true },
        { inputId: 'amount', fieldName: 'Amount' },
        { inputId: 'note', fieldName: 'Note' },
      ],
    },
    { name: 'Review', inputFields: [{ inputId: 'verdict', fieldName: 'Verdict' }] },
    { name: 'Ship', inputFields: [] },
  ],
};

/** Version 2: Review renamed, the note dropped, the amount a number, a field with a default. */
const V2 = {
  name: 'Equipment request',
  pages: [
    {
      name: 'Request',
      inputFields: [
        { inputId: 'item', fieldName: 'Item', required: true },
        { inputId: 'amount', fieldName: 'Amount', type: 'number' },
      ],
    },
    { name: 'Manager review', inputFields: [{ inputId: 'verdict', fieldName: 'Verdict' }] },
    {
      name: 'Ship',
      inputFields: [{ inputId: 'carrier', fieldName: 'Carrier', default: 'Post' }],
    },
  ],
};

describe('console: moving runs to another template version', function () {
  this.timeout(120_000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  const open: ConsolePage[] = [];

  before(async () => {
    [api, worker, browser] = await Promise.all([startApi(), startWorker(), launchChromium()]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  afterEach(async () => {
    for (const c of open.splice(0)) await c.close();
  });

  after(async () => {
    await browser?.close();
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  /** A template of two versions (V1, then V2 saved over it); its id. */
  async function twoVersions(name: string): Promise<string> {
    const made = await client.call<{ id: string }>('/create-workflow-template', { ...V1, name });
    expect(made.status, made.text).to.equal(200);
    const saved = await client.call('/update-workflow-template', {
      id: made.body.id,
      expected_version: 1,
      ...V2,
      name,
    });
    expect(saved.status, saved.text).to.equal(200);
    return made.body.id;
  }

  const detail = async (id: string) => (await client.getRun(id)).body as unknown as Detail;

  async function settled(id: string, check: (d: Detail) => boolean, what: string) {
    await waitFor(what, async () => check(await detail(id)));
  }

  /** A run of version 1, active at Request (or, with `review`, at Review). */
  async function runOf(
    templateId: string,
    inputs: Record<string, string>,
    review = false,
  ): Promise<string> {
    const created = await client.createRun({
      workflow_template_id: templateId,
      workflow_template_version: 1,
      input_fields: inputs,
      user_assignments: { Review: 'rita' },
    });
    expect(created.status, created.text).to.equal(200);
    const id = created.body.id as string;
    await settled(id, (d) => d.currentStepName === 'Request', 'the run to start');
    if (!review) return id;
    const done = await client.completeStep({ workflow_run_id: id, step_name: 'Request' });
    expect(done.status, done.text).to.equal(202);
    await settled(id, (d) => d.currentStepName === 'Review', 'the run at Review');
    return id;
  }

  async function signedIn(key: string, options: Parameters<typeof openConsole>[2] = {}) {
    const c = await openConsole(browser, api, options);
    open.push(c);
    await signIn(c.page, key);
    return c;
  }

  const rowError = (page: Page, name: string) =>
    page.locator(`tr[data-page="${name}"] .field-error`);

  it('moves a run from its page: the pages mapped by hand, the check in words, then the move', async () => {
    const templateId = await twoVersions('Equipment request');
    const id = await runOf(
      templateId,
      { item: 'Laptop', amount: 'about 100', note: 'Needs a dock' },
      true,
    );
    const c = await signedIn(tenant.key);
    const { page } = c;
    await page.goto(`${api.url}/console/runs/${id}`);
    await page.getByRole('heading', { name: 'Equipment request', level: 1 }).waitFor();
    expect(await page.locator('dl.facts').innerText()).to.include('version 1');

    // The panel: the target version (only the other one), both versions' pages side by side.
    await page.getByRole('button', { name: 'Move to version…' }).click();
    const panel = page.getByRole('region', { name: 'Move to another version' });
    await panel.waitFor();
    const version = panel.getByLabel('To version');
    // The latest version is chosen once the versions are read.
    await waitFor('version 2 chosen', async () => (await version.inputValue()) === '2');
    expect(await version.locator('option').allInnerTexts()).to.deep.equal([
      'Version 2 · Equipment request (latest)',
    ]);
    const review = panel.getByLabel('Review', { exact: true });
    await review.waitFor();
    // By name: Request and Ship map to their namesakes; Review has none in version 2.
    expect(await panel.getByLabel('Request', { exact: true }).inputValue()).to.equal('Request');
    expect(await panel.getByLabel('Ship', { exact: true }).inputValue()).to.equal('Ship');
    expect(await review.inputValue()).to.equal('');
    expect(await review.locator('option:checked').innerText()).to.equal('— none —');
    const current = panel.locator('tr[aria-current="step"]');
    expect(await current.getAttribute('data-page')).to.equal('Review');
    expect(await current.innerText()).to.include('the run is here');
    const targets = panel.getByRole('list', { name: 'Version 2: its pages' });
    expect(await targets.getByRole('listitem').allInnerTexts()).to.deep.equal([
      'Request · same page\nfields: Item, Amount',
      'Manager review · no page maps here\nfields: Verdict',
      'Ship · same page\nfields: Carrier',
    ]);
    await checkScreen(page, 'migrate-run-open');

    // Checked as it stands: the run's page maps to none, said under its row.
    await panel.getByRole('button', { name: 'Check' }).click();
    await rowError(page, 'Review').waitFor();
    expect(await rowError(page, 'Review').innerText()).to.match(/maps to no page of version 2/);
    expect(await review.getAttribute('aria-invalid')).to.equal('true');
    expect(c.answers).to.include('POST /migrate-workflow-run 409');

    // Mapped by hand: now the amount, which version 2's number field refuses, under Request.
    await review.selectOption('Manager review');
    expect(await rowError(page, 'Review').count()).to.equal(0);
    expect(await targets.getByRole('listitem').nth(1).innerText()).to.include('from Review');
    await panel.getByRole('button', { name: 'Check' }).click();
    await rowError(page, 'Request').waitFor();
    expect(await rowError(page, 'Request').innerText()).to.match(/amount/i);
    await checkScreen(page, 'migrate-run-refused');

    // Incompatible values dropped: the check tells what the move would do, in words.
    await panel.getByLabel(/Drop incompatible values/).check();
    await panel.getByRole('button', { name: 'Check' }).click();
    const words = panel.locator('.migration-summary');
    await words.waitFor();
    await panel.getByText('Checked: the run can move. Nothing was changed.').waitFor();
    const text = await words.innerText();
    expect(text).to.include('would move from version 1 to version 2');
    expect(text).to.match(/Current step\s+Manager review · assigned to rita/);
    expect(text).to.include('Review becomes Manager review');
    expect(text).to.include('Note (note): “Needs a dock” (version 2 has no such field)');
    expect(text).to.include(
      'Amount (amount): “about 100” (incompatible: the field of version 2 refuses it)',
    );
    expect(text).to.match(/Defaulted\s+Carrier \(carrier\)/);
    expect(text).to.match(/Due\s+no due time/);
    // A check changes nothing.
    expect((await detail(id)).templateVersion).to.equal(1);
    await checkScreen(page, 'migrate-run-checked');
    await panel.screenshot({ path: 'test-output/console-migrate-panel.png' });

    // The move, confirmed.
    await panel.getByRole('button', { name: 'Move run' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: 'Move this run to version 2?' }).waitFor();
    expect(await dialog.innerText()).to.match(
      /As checked, it will be at step Manager review and 2 values are dropped\./,
    );
    expect(await seriousViolations(page), 'the confirmation').to.deep.equal([]);
    await dialog.getByRole('button', { name: 'Move run' }).click();
    await panel.waitFor({ state: 'detached' });
    await page
      .getByRole('status')
      .filter({ hasText: 'Moved to version 2 from version 1.' })
      .waitFor();

    // The page shows the new version, its step, and the move on the timeline.
    await page.locator('dl.facts', { hasText: 'version 2' }).waitFor();
    expect(await page.locator('dl.facts').innerText()).to.match(/Current step\s+Manager review/);
    const moved = page.locator('ol.timeline li.run-migrated');
    await moved.waitFor();
    const entry = await moved.innerText();
    expect(entry).to.include('Moved to version 2 from version 1');
    expect(entry).to.include('pages: Review became Manager review');
    expect(entry).to.include('dropped: amount = “about 100” (incompatible), note = “Needs a dock”');
    expect(entry).to.include('defaulted: carrier');
    const after = await detail(id);
    expect(after).to.include({ templateVersion: 2, currentStepName: 'Manager review' });
    expect(after.inputFields).to.deep.equal({ item: 'Laptop', carrier: 'Post' });
    expect(after.history.at(-1)?.type).to.equal('run.migrated');
    await checkScreen(page, 'migrate-run-moved');

    // At version 2, the panel offers version 1 back; on a phone it does not scroll sideways.
    await page.setViewportSize(PHONE);
    await page.getByRole('button', { name: 'Move to version…' }).click();
    await panel.waitFor();
    await waitFor(
      'version 1 chosen',
      async () => (await panel.getByLabel('To version').inputValue()) === '1',
    );
    await panel.getByLabel('Manager review', { exact: true }).waitFor();
    expect(await panel.getByLabel('Manager review', { exact: true }).inputValue()).to.equal('');
    await checkScreen(page, 'migrate-run-phone');
    await panel.getByRole('button', { name: 'Close' }).click();
    await panel.waitFor({ state: 'detached' });
    await expectClean(c, api, [tenant.key]);
  });

  it('moves the runs of a template in bulk: a dry run counts them, then the move', async () => {
    const templateId = await twoVersions('Laptop rollout');
    const moving = await Promise.all([
      runOf(templateId, { item: 'Laptop', amount: '1200' }),
      runOf(templateId, { item: 'Dock', amount: '180' }),
    ]);
    const ended = await runOf(templateId, { item: 'Mouse' });
    const cancelled = await client.cancelRun({ workflow_run_id: ended });
    expect(cancelled.status, cancelled.text).to.equal(200);

    const c = await signedIn(tenant.key);
    const { page } = c;
    await page.getByRole('link', { name: 'Bulk actions' }).click();
    await page.getByRole('heading', { name: 'Bulk actions' }).waitFor();

    // Without a template in the filter, the move says what it needs.
    const moveButton = page.getByRole('button', { name: 'Move to version…' });
    expect(await moveButton.isDisabled()).to.equal(true);
    expect(await page.locator('#bulk-migrate-template').innerText()).to.include(
      'needs a template in the filter',
    );

    // The template picked in the filter (kept in the URL), then its version 1.
    const form = page.getByRole('form', { name: 'Filter runs' });
    await form.locator('#bulk-template').selectOption({ label: 'Laptop rollout' });
    await form.locator('#bulk-template-version option[value="1"]').waitFor({ state: 'attached' });
    await form.locator('#bulk-template-version').selectOption('1');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(new RegExp(`template_id=${templateId}&template_version=1`));
    const match = page.getByRole('region', { name: 'Matching runs' });
    await match.getByText('3 runs match this filter').waitFor();

    await moveButton.click();
    const panel = page.getByRole('region', { name: 'Move to version' });
    await panel.waitFor();
    await waitFor(
      'version 2 chosen',
      async () => (await panel.getByLabel('To version').inputValue()) === '2',
    );
    expect(await panel.getByLabel('From version').inputValue()).to.equal('1');
    expect(await panel.getByLabel('From version').isDisabled()).to.equal(true);
    await panel.getByLabel('Review', { exact: true }).selectOption('Manager review');
    await checkScreen(page, 'migrate-bulk-open');

    // The dry run: the counts, and nothing changed.
    await panel.getByRole('button', { name: 'Dry run' }).click();
    await panel
      .getByText('Dry run finished: 2 runs would move, 1 would be skipped. Nothing was changed.')
      .waitFor({ timeout: 30_000 });
    expect(await panel.locator('.migrate-check dl.facts').innerText()).to.match(
      /1 had ended \(only pending or active runs move\) \(run_not_migratable\)/,
    );
    for (const run of moving) expect((await detail(run)).templateVersion, run).to.equal(1);
    await checkScreen(page, 'migrate-bulk-dry-run');

    // The move, confirmed with the dry run's counts, followed by the progress bar to its end.
    await panel.getByRole('button', { name: 'Move runs' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: 'Move the matching runs to version 2?' }).waitFor();
    expect(await dialog.innerText()).to.match(
      /The dry run found 2\s+runs that would move and 1\s+that would be skipped/,
    );
    expect(await seriousViolations(page), 'the confirmation').to.deep.equal([]);
    await dialog.getByRole('button', { name: 'Move runs' }).click();
    const bar = page.getByRole('progressbar', { name: 'Progress of the bulk move' });
    await bar.waitFor();
    await page.getByText('Finished: 2 moved, 1 skipped.').waitFor({ timeout: 30_000 });
    const progress = await page.locator('.bulk-progress').innerText();
    expect(progress).to.include('Bulk move to version 2');
    expect(progress).to.include(
      'from version 1 to version 2; pages: Review becomes Manager review',
    );
    const actionId = new URL(page.url()).searchParams.get('action')!;
    const view = (
      await client.call<{ action: string; done: number; skipped: Record<string, number> }>(
        `/get-bulk-action?id=${actionId}`,
      )
    ).body;
    expect(view).to.deep.include({
      action: 'migrate',
      done: 2,
      skipped: { run_not_migratable: 1 },
    });
    for (const run of moving) {
      const d = await detail(run);
      expect(d.templateVersion, run).to.equal(2);
      expect(d.history.at(-1)?.type, run).to.equal('run.migrated');
    }
    expect((await detail(ended)).templateVersion).to.equal(1);
    // Read again once finished: only the cancelled run is left at version 1.
    await match.getByText('1 run matches this filter').waitFor();
    await checkScreen(page, 'migrate-bulk-done');
    await expectClean(c, api, [tenant.key]);
  });

  it('shows a read-only key the moves disabled, with the scope they need', async () => {
    const templateId = await twoVersions('Monitor swap');
    const id = await runOf(templateId, { item: 'Monitor' });
    const reader = await createKey(testDb(), tenant.orgId, {
      name: 'reader',
      scopes: ['runs:read', 'templates:read'],
    });
    const c = await signedIn(reader.key);
    const { page } = c;
    await page.goto(`${api.url}/console/runs/${id}`);
    const button = page.getByRole('button', { name: 'Move to version…' });
    await button.waitFor();
    expect(await button.isDisabled()).to.equal(true);
    expect(await button.locator('xpath=..').innerText()).to.include('needs runs:write');

    await page.goto(`${api.url}/console/bulk?template_id=${templateId}`);
    await page
      .getByRole('region', { name: 'Matching runs' })
      .getByText('1 run matches this filter')
      .waitFor();
    const bulk = page.getByRole('button', { name: 'Move to version…' });
    expect(await bulk.isDisabled()).to.equal(true);
    expect(await bulk.locator('xpath=..').innerText()).to.include('needs runs:write');
    await checkScreen(page, 'migrate-denied');
    await expectClean(c, api, [reader.key]);
  });
});
