// The console's insights in a real browser, against a real API and worker: runs of a
// three-page template (Request, an approval that sends a rejection back, Payment) are created,
// moved on, completed, rejected and cancelled through the API; once GET /get-run-insights has
// caught up (no lag, the counts as made), the template's page leads to its insights, where the
// throughput chart's table holds those counts, the steps table lists each step with its done
// count and sorts by a header's click (aria-sort), an open-runs link leads to the runs screen
// filtered to that step (showing exactly the runs there), the range and the bucket live in the
// URL and survive a reload, and axe-core finds nothing, at a desktop's size and a phone's.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import type { RunInsights } from '../../src/insights/insight-schemas.js';
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

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The organization's zone: not the browser's (Europe/Paris), so the days are the API's. */
const ZONE = 'America/New_York';

type Insights = RunInsights;

interface Detail {
  status: string;
  currentStepName?: string | null;
}

const TEMPLATE = {
  name: 'Supplier invoice',
  pages: [
    {
      name: 'Request',
      dueInHours: 24,
      inputFields: [{ inputId: 'amount', fieldName: 'Amount', type: 'number', required: true }],
    },
    {
      name: 'Review',
      kind: 'approval',
      onReject: { action: 'reopen', page: 'Request' },
      inputFields: [],
    },
    { name: 'Payment', inputFields: [] },
  ],
};

/** Every axe-core violation on the page as it is now, of any impact (none expected). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    interface AxeResults {
      violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown[] }> }>;
    }
    const axe = (window as unknown as { axe: { run(): Promise<AxeResults> } }).axe;
    const results = await axe.run();
    return results.violations.map(
      (v) => `${v.impact} ${v.id} (${v.nodes.map((n) => String(n.target)).join(', ')})`,
    );
  });
}

/** The day an instant falls on in a zone, as a date input's value (YYYY-MM-DD). */
function dayIn(date: Date, zone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(date);
}

describe('console: insights', function () {
  this.timeout(180_000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  let templateId: string;
  /** The runs by where they are: at a step (its name), completed or cancelled. */
  const runs: Record<string, string[]> = {};
  const open: ConsolePage[] = [];

  const detail = async (id: string) => (await client.getRun(id)).body as unknown as Detail;
  const settled = (id: string, check: (d: Detail) => boolean, what: string) =>
    waitFor(what, async () => check(await detail(id)), 30_000);
  const insights = async (query = '') => {
    const reply = await client.call<Insights>(
      `/get-run-insights?template_id=${encodeURIComponent(templateId)}${query}`,
    );
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return reply.body;
  };

  /** A run of the template, brought through the API to where `path` says. */
  async function runTo(
    path: Array<'Request' | 'approve' | 'reject' | 'Payment' | 'cancel'>,
  ): Promise<string> {
    const created = await client.createRun({
      workflow_template_id: templateId,
      input_fields: {},
      user_assignments: { Request: 'ada', Review: 'grace', Payment: 'linus' },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const id = created.body.id as string;
    await settled(id, (d) => d.currentStepName === 'Request', 'the run to start');
    for (const move of path) {
      if (move === 'cancel') {
        expect((await client.cancelRun({ workflow_run_id: id })).status).to.equal(200);
        await settled(id, (d) => d.status === 'cancelled', 'the run to be cancelled');
      } else if (move === 'Request') {
        const reply = await client.completeStep({
          workflow_run_id: id,
          step_name: 'Request',
          input_fields: { amount: '120' },
        });
        expect(reply.status, JSON.stringify(reply.body)).to.equal(202);
        await settled(id, (d) => d.currentStepName === 'Review', 'the run at Review');
      } else if (move === 'approve' || move === 'reject') {
        const reply = await client.completeStep({
          workflow_run_id: id,
          step_name: 'Review',
          decision: move === 'approve' ? 'approved' : 'rejected',
          comment: move === 'approve' ? 'fine' : 'wrong amount',
        });
        expect(reply.status, JSON.stringify(reply.body)).to.equal(202);
        const next = move === 'approve' ? 'Payment' : 'Request';
        await settled(id, (d) => d.currentStepName === next, `the run at ${next}`);
      } else {
        const reply = await client.completeStep({ workflow_run_id: id, step_name: 'Payment' });
        expect(reply.status, JSON.stringify(reply.body)).to.equal(202);
        await settled(id, (d) => d.status === 'completed', 'the run to complete');
      }
    }
    const d = await detail(id);
    const where = d.status === 'active' ? d.currentStepName! : d.status;
    (runs[where] ??= []).push(id);
    return id;
  }

  before(async () => {
    api = await startApi();
    worker = await startWorker();
    browser = await launchChromium();
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    const zone = await client.call('/update-organization-settings', { time_zone: ZONE });
    expect(zone.status, JSON.stringify(zone.body)).to.equal(200);
    const made = await client.call<{ id: string }>('/create-workflow-template', TEMPLATE);
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    templateId = made.body.id;

    // Seven runs: one completed, one cancelled, one sent back from Review to Request, and the
    // others left at each step.
    await runTo(['Request', 'approve', 'Payment']);
    await runTo(['Request', 'approve']);
    await runTo(['Request']);
    await runTo(['Request']);
    await runTo(['Request', 'reject']);
    await runTo(['cancel']);
    await runTo([]);
    expect(runs.completed).to.have.length(1);
    expect(runs.cancelled).to.have.length(1);
    expect(runs.Request).to.have.length(2);
    expect(runs.Review).to.have.length(2);
    expect(runs.Payment).to.have.length(1);

    // The figures are folded from the runs' events: wait until they hold every change.
    await waitFor(
      'the insights to catch up',
      async () => {
        const got = await insights();
        const sum = (key: 'created' | 'completed' | 'failed' | 'cancelled') =>
          got.buckets.reduce((n, b) => n + b[key], 0);
        const done = (step: string) => got.steps.find((s) => s.step === step)?.completed;
        const seen = {
          lagMs: got.lagMs,
          created: sum('created'),
          completed: sum('completed'),
          cancelled: sum('cancelled'),
          done: [done('Request'), done('Review'), done('Payment')],
          open: got.open.runs,
        };
        const caughtUp =
          seen.lagMs === 0 &&
          seen.created === 7 &&
          seen.completed === 1 &&
          seen.cancelled === 1 &&
          seen.done.join() === '5,2,1' &&
          seen.open === 5;
        // Not yet: say what was seen, for the timeout's message.
        if (!caughtUp) throw new Error(`not yet: ${JSON.stringify(seen)}`);
        return true;
      },
      60_000,
      250,
    );
  });

  afterEach(async () => {
    for (const page of open.splice(0)) await page.close();
  });

  after(async () => {
    await browser?.close();
    await worker?.stop();
    await api?.stop();
  });

  async function signedIn(viewport?: { width: number; height: number }) {
    const c = await openConsole(browser, api, viewport ? { viewport } : {});
    open.push(c);
    await signIn(c.page, tenant.key);
    return c;
  }

  /** Waits until no API answer has come for a moment (a navigation would lose their bodies). */
  async function quiet(c: ConsolePage) {
    let count = c.answers.length;
    let since = Date.now();
    while (Date.now() - since < 1000) {
      await new Promise((r) => setTimeout(r, 100));
      if (c.answers.length !== count) {
        count = c.answers.length;
        since = Date.now();
      }
    }
  }

  const stepRows = (page: Page) => page.locator('table.insights-steps tbody tr');
  const stepOrder = (page: Page) =>
    stepRows(page).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-step')));

  it("shows a template's figures, sorts its steps and leads to the runs at a step", async () => {
    const c = await signedIn();
    const { page } = c;
    const answer = await insights();

    // From the template's page, as a user goes there.
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('link', { name: TEMPLATE.name }).click();
    await page.getByRole('heading', { name: TEMPLATE.name }).waitFor();
    await page.getByRole('link', { name: 'Insights', exact: true }).last().click();
    await page.getByRole('heading', { name: `Insights: ${TEMPLATE.name}` }).waitFor();
    expect(new URL(page.url()).searchParams.get('template_id')).to.equal(templateId);
    expect(
      await page
        .getByRole('navigation', { name: 'Console' })
        .getByRole('link', { name: 'Insights' })
        .getAttribute('aria-current'),
    ).to.equal('page');

    // The freshness of the figures, in words: caught up, so no lag is said.
    const asOf = page.locator('.insights-asof');
    await asOf.waitFor();
    expect(await asOf.innerText())
      .to.match(/Figures as of .+\./)
      .and.not.match(/behind/);
    expect(await asOf.innerText()).to.include(`${ZONE} time`);

    // The picture in docs/console.md (docs/console-insights.png), before any table is opened.
    await page.screenshot({ path: '/tmp/insights-docs.png', fullPage: true });

    // The throughput chart: an image with its words, and its figures as a table.
    const throughput = page.getByRole('figure', { name: 'Runs created and ended' });
    const chart = throughput.getByRole('img');
    expect(await chart.getAttribute('aria-label')).to.include(
      '7 created, 1 completed, 0 failed and 1 cancelled',
    );
    expect(await throughput.locator('figcaption').innerText()).to.include(
      'In all, 7 created, 1 completed, 0 failed and 1 cancelled.',
    );
    await throughput.getByText('The figures as a table').click();
    const table = throughput.getByRole('table');
    await table.waitFor();
    // Each bucket of the answer is a row, with its exact counts.
    const rows = await table.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        start: tr.getAttribute('data-bucket'),
        cells: [...tr.querySelectorAll('td')].map((td) => Number(td.textContent)),
      })),
    );
    expect(rows.map((r) => r.start)).to.deep.equal(answer.buckets.map((b) => b.start));
    expect(rows.map((r) => r.cells)).to.deep.equal(
      answer.buckets.map((b) => [b.created, b.completed, b.failed, b.cancelled]),
    );
    const total = rows.reduce((sum, r) => sum.map((n, i) => n + r.cells[i]!), [0, 0, 0, 0]);
    expect(total).to.deep.equal([7, 1, 0, 1]);
    // Today's bucket (the organization's today) holds them all.
    const today = dayIn(new Date(), ZONE);
    const todays = answer.buckets.find((b) => dayIn(new Date(b.start), ZONE) === today)!;
    expect(rows.find((r) => r.start === todays.start)!.cells).to.deep.equal([7, 1, 0, 1]);

    // Time to complete: the one completed run, in words.
    const ttc = page.getByRole('figure', { name: 'Time to complete' });
    expect(await ttc.locator('figcaption').innerText()).to.match(/^1 run completed/);
    expect(await ttc.getByRole('img').getAttribute('aria-label')).to.include('1 run completed');

    // The steps, with their done counts, as the answer has them.
    const steps = page.getByRole('table', { name: /^Steps/ });
    const done = async () =>
      Object.fromEntries(
        await stepRows(page).evaluateAll((trs) =>
          trs.map((tr) => [
            tr.getAttribute('data-step'),
            (tr.querySelector('td[data-label="Done"]')?.textContent ?? '').trim(),
          ]),
        ),
      );
    expect(await done()).to.deep.equal({ Request: '5', Review: '2', Payment: '1' });
    const review = answer.steps.find((s) => s.step === 'Review')!;
    expect(review.rejected).to.equal(1);
    expect(
      await stepRows(page)
        .filter({ hasText: 'Review' })
        .locator('td[data-label="Rejected"]')
        .innerText(),
    ).to.equal('1');

    // At first, in the order of the template's pages, the open runs too.
    expect(await stepOrder(page)).to.deep.equal(['Request', 'Review', 'Payment']);
    expect(
      await page
        .locator('table.insights-open tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-step'))),
    ).to.deep.equal(['Request', 'Review', 'Payment']);

    // Sorting: a header's click sorts by it, and says so (aria-sort); a second click turns it.
    const doneHeader = steps.getByRole('columnheader', { name: /^Done/ });
    expect(await doneHeader.getAttribute('aria-sort')).to.equal(null);
    await doneHeader.getByRole('button').click();
    expect(await doneHeader.getAttribute('aria-sort')).to.equal('descending');
    expect(await stepOrder(page)).to.deep.equal(['Request', 'Review', 'Payment']);
    await doneHeader.getByRole('button').click();
    expect(await doneHeader.getAttribute('aria-sort')).to.equal('ascending');
    expect(await stepOrder(page)).to.deep.equal(['Payment', 'Review', 'Request']);
    const stepHeader = steps.getByRole('columnheader', { name: /^Step/ });
    await stepHeader.getByRole('button').click();
    expect(await stepHeader.getAttribute('aria-sort')).to.equal('ascending');
    expect(await doneHeader.getAttribute('aria-sort')).to.equal(null);
    expect(await stepOrder(page)).to.deep.equal(['Payment', 'Request', 'Review']);

    // Open runs now, by step.
    const openPanel = page.getByRole('region', { name: 'Open runs by step, now' });
    expect(await openPanel.innerText()).to.include('5 open runs now');
    // Each count is a link named by its step.
    for (const [step, n] of [
      ['Request', 2],
      ['Review', 2],
      ['Payment', 1],
    ] as const) {
      await openPanel.getByRole('link', { name: `${n} open at ${step}`, exact: true }).waitFor();
    }

    // Nothing for axe-core to find, of any impact; then the checks every screen gets.
    expect(await axeViolations(page), 'axe-core').to.deep.equal([]);
    await checkScreen(page, 'insights');
    await page.screenshot({ path: '/tmp/insights-template.png', fullPage: true });

    // A link of the open runs: the runs screen filtered to that step, showing exactly its runs.
    await quiet(c);
    await openPanel.getByRole('link', { name: '2 open at Review' }).click();
    await page.waitForURL(/\/console\/runs\?/);
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).to.deep.equal({
      template_id: templateId,
      status: 'active',
      step: 'Review',
    });
    await page.getByRole('list', { name: 'Filtered to a step' }).getByText('Review').waitFor();
    for (const id of runs.Review!) await page.locator(`tr[data-run-id="${id}"]`).waitFor();
    await waitFor('only the runs at Review', async () =>
      (await page.locator('tr[data-run-id]').count()) === 2 ? true : undefined,
    );
    const shown = await page
      .locator('tr[data-run-id]')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id')));
    expect(shown.sort()).to.deep.equal([...runs.Review!].sort());
    for (const cell of await page.locator('td[data-label="Current step"]').allInnerTexts()) {
      expect(cell.trim()).to.equal('Review');
    }
    expect(await axeViolations(page), 'axe-core on the filtered runs').to.deep.equal([]);
    await page.screenshot({ path: '/tmp/insights-runs-at-step.png', fullPage: true });

    // The chip takes the step off again.
    await quiet(c);
    await page.getByRole('link', { name: 'Remove the filter by step Review' }).click();
    await page.waitForURL((u) => !u.searchParams.has('step'));
    await waitFor('every active run of the template', async () =>
      (await page.locator('tr[data-run-id]').count()) === 5 ? true : undefined,
    );
    await quiet(c);
    await expectClean(c, api, [tenant.key]);
  });

  it('keeps the range and the bucket in the URL, through a reload', async () => {
    const c = await signedIn();
    const { page } = c;
    await page.getByRole('link', { name: 'Insights', exact: true }).click();
    await page.getByRole('heading', { name: 'Insights', exact: true }).waitFor();
    // The organization's view names each step's template.
    const steps = page.getByRole('table', { name: /^Steps/ });
    await steps.waitFor();
    expect(await steps.getByRole('columnheader', { name: /^Template/ }).count()).to.equal(1);
    expect(
      await stepRows(page)
        .filter({ hasText: 'Review' })
        .locator('td[data-label="Template"]')
        .innerText(),
    ).to.equal(TEMPLATE.name);
    await page.screenshot({ path: '/tmp/insights-organization.png', fullPage: true });

    // Forty days by hour is more buckets than the API gives: its refusal shows under the bucket.
    const today = dayIn(new Date(), ZONE);
    const form = page.getByRole('form', { name: 'Choose the figures' });
    await form.getByLabel('From (day)').fill(dayIn(new Date(Date.now() - 40 * 86_400_000), ZONE));
    await form.getByLabel('Bucket').selectOption('hour');
    await quiet(c);
    await form.getByRole('button', { name: 'Show' }).click();
    const bucketError = form.locator('#insights-bucket-error');
    await bucketError.waitFor();
    expect(await form.getByLabel('Bucket').getAttribute('aria-invalid')).to.equal('true');
    expect(c.answers).to.include('GET /get-run-insights 400');
    await form.screenshot({ path: '/tmp/insights-refused.png' });

    // Today, by hour, of the template.
    await form.getByLabel('Template').selectOption({ label: TEMPLATE.name });
    await form.getByLabel('From (day)').fill(today);
    await form.getByLabel('To (day, included)').fill(today);
    await form.getByLabel('Bucket').selectOption('hour');
    await quiet(c);
    await form.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/bucket=hour/);
    const expectView = async () => {
      const params = new URL(page.url()).searchParams;
      expect(Object.fromEntries(params)).to.deep.equal({
        template_id: templateId,
        from: today,
        to: today,
        bucket: 'hour',
      });
      await page.getByRole('heading', { name: `Insights: ${TEMPLATE.name}` }).waitFor();
      const throughput = page.getByRole('figure', { name: 'Runs created and ended' });
      await waitFor('the hourly figures', async () =>
        (await throughput.locator('figcaption').innerText()).includes('Per hour')
          ? true
          : undefined,
      );
      expect(await form.getByLabel('Bucket').inputValue()).to.equal('hour');
      expect(await form.getByLabel('From (day)').inputValue()).to.equal(today);
      expect(await form.getByLabel('To (day, included)').inputValue()).to.equal(today);
      // A day of hours (23 or 25 on the day the clocks change), holding the 7 runs.
      await throughput.getByText('The figures as a table').click();
      const cells = await throughput
        .locator('tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))),
        );
      expect(cells.length).to.be.within(23, 25);
      expect(cells.reduce((n, r) => n + r[0]!, 0)).to.equal(7);
      // The hours of that day in the organization's zone, from its first to its last.
      const starts = await throughput
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-bucket')!));
      expect(dayIn(new Date(starts[0]!), ZONE)).to.equal(today);
      expect(dayIn(new Date(starts[starts.length - 1]!), ZONE)).to.equal(today);
      expect(dayIn(new Date(Date.parse(starts[0]!) - 1), ZONE)).to.not.equal(today);
    };
    await expectView();
    expect(await axeViolations(page), 'axe-core, by hour').to.deep.equal([]);
    await page.screenshot({ path: '/tmp/insights-hourly.png', fullPage: true });

    await quiet(c);
    await page.reload();
    await expectView();
    await quiet(c);
    await expectClean(c, api, [tenant.key]);
  });

  it('reads on a phone without sideways scrolling', async () => {
    const c = await signedIn(PHONE);
    const { page } = c;
    await page.goto(`${api.url}/console/insights?template_id=${encodeURIComponent(templateId)}`);
    await page.getByRole('heading', { name: `Insights: ${TEMPLATE.name}` }).waitFor();
    await page.getByRole('table', { name: /^Steps/ }).waitFor();
    expect(await axeViolations(page), 'axe-core on a phone').to.deep.equal([]);
    await checkScreen(page, 'insights-phone');
    await page.screenshot({ path: '/tmp/insights-phone.png', fullPage: true });
    await quiet(c);
    await expectClean(c, api, [tenant.key]);
  });
});
