// The console's tasks screen in a real browser, against a real API and worker: a user's tasks
// ("Mine") and those the user may claim through a group ("I can claim"), the user and groups
// kept in the URL, an overdue task marked. Claiming moves a task between the lists without a
// reload, and a claim that lost the race says so; an approval is rejected with a comment (the
// run goes back, its timeline tells the comment) or approved (the run goes on); a step is
// completed, or refused for its required field with a link to the run; a run created meanwhile
// appears live. A read-only key finds the actions disabled with their reason, on a phone.
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

type Detail = {
  status: string;
  currentStepName?: string | null;
  currentStepAssignee?: string | null;
  history: Array<{ type: string; data: Record<string, unknown> }>;
};

const EXPENSE = {
  name: 'Expense claim',
  pages: [
    { name: 'Submit', inputFields: [] },
    {
      name: 'Manager approval',
      kind: 'approval',
      onReject: { action: 'reopen', page: 'Submit' },
      inputFields: [],
    },
    { name: 'Pay', candidateGroups: ['finance'], dueInHours: 48, inputFields: [] },
  ],
};
/**
 * A step with a required field (completed on the run's screen, not the tasks screen), due a
 * second after it begins: overdue without a test reaching into MySQL.
 */
const FILING = {
  name: 'Receipt filing',
  pages: [
    {
      name: 'File',
      dueInHours: 0.0003,
      inputFields: [{ inputId: 'receipt', fieldName: 'Receipt', required: true }],
    },
  ],
};

describe('console: the tasks screen', function () {
  this.timeout(120_000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  let expense: string;
  let filing: string;
  const open: ConsolePage[] = [];

  before(async () => {
    [api, worker, browser] = await Promise.all([
      startApi({ BASE_PATH: '/wrs' }),
      startWorker(),
      launchChromium(),
    ]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    expense = await template(EXPENSE);
    filing = await template(FILING);
  });

  afterEach(async () => {
    for (const c of open.splice(0)) await c.close();
  });

  after(async () => {
    await browser?.close();
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  async function template(definition: object): Promise<string> {
    const reply = await client.call<{ id: string }>('/create-workflow-template', definition);
    expect(reply.status, reply.text).to.equal(200);
    return reply.body.id;
  }

  const detail = async (id: string) => (await client.getRun(id)).body as unknown as Detail;

  async function settled(id: string, check: (d: Detail) => boolean, what: string) {
    await waitFor(what, async () => check(await detail(id)));
  }

  /** A run of a template, started, then brought to `step` through the API. */
  async function runAt(
    step: 'Submit' | 'Manager approval' | 'Pay',
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const created = await client.createRun({
      workflow_template_id: expense,
      input_fields: {},
      ...extra,
    });
    expect(created.status, JSON.stringify(created.body)).to.be.oneOf([200, 201, 202]);
    const id = created.body.id as string;
    await settled(id, (d) => d.currentStepName === 'Submit', 'run at Submit');
    if (step === 'Submit') return id;
    await client.completeStep({ workflow_run_id: id, step_name: 'Submit' });
    await settled(id, (d) => d.currentStepName === 'Manager approval', 'run at approval');
    if (step === 'Manager approval') return id;
    await client.completeStep({
      workflow_run_id: id,
      step_name: 'Manager approval',
      decision: 'approved',
    });
    await settled(id, (d) => d.currentStepName === 'Pay', 'run at Pay');
    return id;
  }

  async function signedIn(key: string, options: Parameters<typeof openConsole>[2] = {}) {
    const c = await openConsole(browser, api, options);
    open.push(c);
    await signIn(c.page, key);
    return c;
  }

  const list = (page: Page, which: 'mine' | 'claimable') =>
    page.locator(`section[aria-labelledby="tasks-${which}"]`);
  const row = (page: Page, which: 'mine' | 'claimable', id: string) =>
    list(page, which).locator(`tr[data-run-id="${id}"]`);
  const liveStatus = (page: Page) => page.getByRole('status').filter({ hasText: /^Live/ });

  it('claims, decides and completes tasks, live, keeping the user in the URL', async () => {
    const toFay = { user_assignments: { 'Manager approval': 'fay' } };
    const [pay, raced, rejected, approved, fileRun] = await Promise.all([
      runAt('Pay'),
      runAt('Pay'),
      runAt('Manager approval', toFay),
      runAt('Manager approval', toFay),
      client
        .createRun({
          workflow_template_id: filing,
          input_fields: {},
          user_assignments: { File: 'fay' },
        })
        .then((r) => r.body.id as string),
    ]);
    await settled(fileRun, (d) => d.currentStepName === 'File', 'filing run to start');

    const c = await signedIn(tenant.key);
    const { page } = c;
    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    await page.getByLabel('User id').fill('fay');
    await page.getByLabel('Groups (comma-separated)').fill('finance, team-leads');
    await page.getByRole('button', { name: 'Show tasks' }).click();
    await page.waitForURL(/\/console\/tasks\?user=fay&group=finance&group=team-leads$/);
    await liveStatus(page).waitFor();

    // "I can claim": the runs at Pay, through the group; "Mine": the approvals and the filing.
    const payRow = row(page, 'claimable', pay);
    await payRow.waitFor();
    await row(page, 'claimable', raced).waitFor();
    const payText = await payRow.innerText();
    expect(payText).to.include('Expense claim').and.include('Pay').and.include('groups: finance');
    expect(payText).to.not.include('overdue');
    expect(await payRow.locator('time').count()).to.equal(2); // due and started
    const rejectRow = row(page, 'mine', rejected);
    await rejectRow.waitFor();
    await row(page, 'mine', approved).waitFor();
    // The filing's step is overdue: marked as the runs screen marks it.
    await row(page, 'mine', fileRun).locator('.overdue', { hasText: 'overdue' }).waitFor();
    expect(await rejectRow.innerText())
      .to.include('Manager approval')
      .and.include('approval');
    expect(
      await rejectRow.getByRole('link', { name: 'Expense claim' }).getAttribute('href'),
    ).to.equal(`/wrs/console/runs/${rejected}`);
    await checkScreen(page, 'tasks');

    // A reload keeps the user and the groups.
    await page.reload();
    expect(await page.getByLabel('User id').inputValue()).to.equal('fay');
    expect(await page.getByLabel('Groups (comma-separated)').inputValue()).to.equal(
      'finance, team-leads',
    );
    await liveStatus(page).waitFor();
    await payRow.waitFor();

    // Claiming moves the task to Mine, without a reload of the page.
    await page.evaluate(() => ((window as unknown as { mark: number }).mark = 7));
    await payRow.getByRole('button', { name: 'Claim' }).click();
    await row(page, 'mine', pay).waitFor();
    await payRow.waitFor({ state: 'detached' });
    expect(await page.evaluate(() => (window as unknown as { mark?: number }).mark)).to.equal(7);
    expect((await detail(pay)).currentStepAssignee).to.equal('fay');
    await page.getByRole('status').filter({ hasText: 'Claimed “Pay” of Expense claim.' }).waitFor();

    // Someone else claims first (between the click and the claim's arrival): the API's message
    // shows, and the lists are read again.
    await page.route('**/wrs/claim-workflow-step', async (route) => {
      const other = await client.call('/claim-workflow-step', {
        workflow_run_id: raced,
        step_name: 'Pay',
        user_id: 'gus',
      });
      expect(other.status, other.text).to.equal(200);
      await route.continue();
    });
    await row(page, 'claimable', raced).getByRole('button', { name: 'Claim' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).to.include("held by 'gus'");
    await row(page, 'claimable', raced).waitFor({ state: 'detached' });
    expect(await row(page, 'mine', raced).count()).to.equal(0);
    await page.unroute('**/wrs/claim-workflow-step');
    expect(c.answers).to.include('POST /claim-workflow-step 409');

    // Rejecting with a comment sends the run back to Submit: the task leaves Mine.
    await rejectRow.getByRole('button', { name: 'Reject' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Comment (optional)').fill('The receipt is missing');
    await dialog.getByRole('button', { name: 'Reject' }).click();
    await rejectRow.waitFor({ state: 'detached' });
    const back = await detail(rejected);
    expect(back.currentStepName).to.equal('Submit');
    const rejection = back.history.find((e) => e.type === 'step.rejected')!;
    expect(rejection.data).to.include({ comment: 'The receipt is missing', decidedBy: 'fay' });

    // Approving moves the other run to Pay, which finance may claim: it shows there, live.
    await row(page, 'mine', approved).getByRole('button', { name: 'Approve' }).click();
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await row(page, 'claimable', approved).waitFor();
    await row(page, 'mine', approved).waitFor({ state: 'detached' });
    expect((await detail(approved)).currentStepName).to.equal('Pay');

    // Completing the claimed step (it has no fields) completes the run.
    await row(page, 'mine', pay).getByRole('button', { name: 'Complete' }).click();
    await dialog.getByRole('button', { name: 'Complete step' }).click();
    await row(page, 'mine', pay).waitFor({ state: 'detached' });
    await settled(pay, (d) => d.status === 'completed', 'the paid run to complete');
    const paid = (await detail(pay)).history.find(
      (e) => e.type === 'step.completed' && e.data.step === 'Pay',
    );
    expect(paid?.data).to.include({ step: 'Pay', completedBy: 'fay' });

    // A run created while the screen is open appears live.
    const fresh = (
      await client.createRun({
        workflow_template_id: expense,
        input_fields: {},
        user_assignments: { Submit: 'fay' },
      })
    ).body.id as string;
    await row(page, 'mine', fresh).waitFor();

    // A step whose field is required: the API's refusal, and a link to the run to fill it.
    await row(page, 'mine', fileRun).getByRole('button', { name: 'Complete' }).click();
    await dialog.getByRole('button', { name: 'Complete step' }).click();
    await alert.filter({ hasText: 'Receipt filing' }).waitFor();
    expect(await alert.innerText()).to.match(/receipt/i);
    expect(c.answers).to.include('POST /complete-workflow-step 400');
    await alert.getByRole('link', { name: "Fill in the step's fields on the run's page" }).click();
    await page.waitForURL(new RegExp(`/console/runs/${fileRun}$`));
    await page.getByRole('heading', { name: 'Complete the current step: File' }).waitFor();

    // The rejected run's timeline tells the rejection and its comment.
    await page.goto(`${api.url}/console/runs/${rejected}`);
    const timeline = page.locator('ol.timeline');
    await timeline.getByText('Rejected', { exact: true }).waitFor();
    expect(await timeline.locator('li.step-rejected').innerText())
      .to.include('comment: “The receipt is missing”')
      .and.include('decided by fay');
    await timeline.getByText('Sent back', { exact: true }).waitFor();

    // The run's own page decides an approval step too: Approve or Reject, with a comment.
    const onPage = await runAt('Manager approval', toFay);
    await page.goto(`${api.url}/console/runs/${onPage}`);
    await page
      .getByRole('heading', { name: 'Decide the current step: Manager approval' })
      .waitFor();
    await page.locator('form.complete-step').getByLabel('Comment (optional)').fill('Fine by me');
    await page.locator('form.complete-step').getByRole('button', { name: 'Approve' }).click();
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await settled(onPage, (d) => d.currentStepName === 'Pay', 'approved on its page');
    expect((await detail(onPage)).history.find((e) => e.type === 'step.approved')?.data).to.include(
      {
        comment: 'Fine by me',
      },
    );
    await expectClean(c, api, [tenant.key]);
  });

  it('shows a read-only key the actions disabled with the reason, on a phone', async () => {
    const toFay = { user_assignments: { 'Manager approval': 'fay' } };
    const [claimable, mine] = await Promise.all([runAt('Pay'), runAt('Manager approval', toFay)]);
    const reader = await createKey(testDb(), tenant.orgId, {
      name: 'reader',
      scopes: ['runs:read'],
    });
    const c = await signedIn(reader.key, { viewport: PHONE });
    const { page } = c;
    await page.goto(`${api.url}/console/tasks?user=fay&group=finance`);
    await row(page, 'claimable', claimable).waitFor();
    await row(page, 'mine', mine).waitFor();
    for (const [which, id, name] of [
      ['claimable', claimable, 'Claim'],
      ['mine', mine, 'Approve'],
      ['mine', mine, 'Reject'],
      ['mine', mine, 'Unclaim'],
    ] as const) {
      const button = row(page, which, id).getByRole('button', { name });
      expect(await button.isDisabled(), name).to.equal(true);
      expect(await button.locator('xpath=..').innerText(), name).to.include('needs runs:write');
    }
    await liveStatus(page).waitFor();
    await checkScreen(page, 'tasks-phone');
    await expectClean(c, api, [reader.key]);
  });
});
