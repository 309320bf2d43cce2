// The console's schedules in a real browser, against a real API and worker: a schedule created
// through the form (the organization's time zone filled in, a cron expression said in words as
// it is typed, a bad one refused under its input), its next five times as the answer gave them,
// a run triggered now and found in its history, in the runs screen filtered by the schedule and
// on the run's own page; paused with a note and resumed, edited to a cron expression, backfilled
// (a range too large refused under its end), listed and filtered, and deleted; a key without
// schedules:write finds every action disabled, saying why.
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

interface ScheduleView {
  id: string;
  state: string;
  note?: string;
  cron?: string;
  intervalSeconds?: number;
  timeZone: string;
  overlap: string;
  nextTimes: string[];
  inputFields: Record<string, string>;
}

interface FireView {
  kind: string;
  outcome: string;
  runId?: string;
  scheduledFor: string;
}

/** A time as the page's datetime-local inputs take it (the browser's zone: Europe/Paris). */
function parisInput(date: Date): string {
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone: 'Europe/Paris',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  })
    .format(date)
    .replace(' ', 'T');
}

describe('console: schedules', function () {
  this.timeout(180_000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  const open: ConsolePage[] = [];

  const schedule = async (id: string) =>
    (await client.call<ScheduleView>(`/get-workflow-schedule?id=${id}`)).body;
  const history = async (id: string) =>
    (await client.call<FireView[]>(`/get-workflow-schedule-history?id=${id}&limit=100`)).body;

  before(async () => {
    api = await startApi();
    worker = await startWorker();
    browser = await launchChromium();
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    const zone = await client.call('/update-organization-settings', { time_zone: 'Europe/Berlin' });
    expect(zone.status, JSON.stringify(zone.body)).to.equal(200);
  });

  afterEach(async () => {
    for (const page of open.splice(0)) await page.close();
  });

  after(async () => {
    await browser?.close();
    await worker?.stop();
    await api?.stop();
  });

  async function signedIn(key: string, viewport?: { width: number; height: number }) {
    const c = await openConsole(browser, api, viewport ? { viewport } : {});
    open.push(c);
    await signIn(c.page, key);
    return c;
  }

  const dialogOf = (page: Page) => page.getByRole('dialog');

  it('creates a schedule, triggers, pauses, resumes, edits, backfills and deletes it', async () => {
    const c = await signedIn(tenant.key);
    const { page } = c;
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    await page.getByText('No schedules yet').waitFor();

    // The form: the template's fields appear, the organization's zone is filled in.
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByRole('heading', { name: 'New schedule' }).waitFor();
    const form = page.getByRole('form', { name: 'New schedule' });
    // The field is a text box until the template names arrive, then a list of them.
    await form.getByRole('option', { name: tenant.template.name }).waitFor({ state: 'attached' });
    await form.getByLabel('Template').selectOption({ label: tenant.template.name });
    await form.getByRole('group', { name: 'Page 1: Request' }).waitFor();
    await form.getByLabel('Item').fill('Printer paper');
    await form.getByLabel('Amount').fill('40');
    await form
      .getByRole('group', { name: 'Page 2: Approval' })
      .getByLabel('Assignee (optional)')
      .fill('bob');
    await form.getByLabel('Labels of each run (key:value)').fill('source:schedule');
    await form.getByRole('button', { name: 'Add label' }).click();
    await waitFor(
      "the organization's zone",
      async () => (await form.getByLabel('Time zone').inputValue()) === 'Europe/Berlin',
    );

    // A cron expression is said in words as it is typed.
    const cron = form.getByLabel('Cron expression', { exact: true });
    for (const [expression, words] of [
      ['0 9 * * 1-5', 'every weekday at 09:00'],
      ['*/15 9-17 * * 1-5', 'every 15 minutes from 09:00 to 17:45, on weekdays'],
      ['30 6 1 * *', 'on the 1st of every month at 06:30'],
      ['0 10 * * 6,0', 'every Saturday and Sunday at 10:00'],
      ['0 0 1 1 *', 'every year on 1 January at 00:00'],
    ]) {
      await cron.fill(expression!);
      await form.getByText(`Reads: ${words}.`).waitFor();
    }
    await cron.fill('5 4 * * 2#1');
    await form.getByText('Not a shape said in words here').waitFor();

    // A bad expression: the API's refusal, under the expression.
    await cron.fill('61 * * * *');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    const cronError = form.locator('#schedule-cron-error');
    await cronError.waitFor();
    expect(await cronError.innerText()).to.match(/^cron: /);
    expect(await cron.getAttribute('aria-invalid')).to.equal('true');
    expect(await cron.getAttribute('aria-describedby')).to.include('schedule-cron-error');
    expect(c.answers).to.include('POST /create-workflow-schedule 400');
    await checkScreen(page, 'schedule-form');

    // An unknown zone: refused under the zone.
    await cron.fill('0 9 * * 1-5');
    await form.getByLabel('Time zone').fill('Mars/Olympus');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await form.locator('#schedule-time_zone-error').waitFor();
    expect(await cronError.count()).to.equal(0);
    await form.getByLabel('Time zone').fill('Europe/Berlin');

    // Every minute, overlapping runs allowed: created, its next five times from the answer.
    await form.getByRole('radio', { name: 'An interval' }).check();
    await form.getByLabel('Interval', { exact: true }).fill('1');
    await form.getByLabel('Unit of the interval').selectOption({ label: 'minutes' });
    await form.getByText('A run every minute, counted from the start').waitFor();
    await form
      .getByLabel('When a time comes while the previous run is still open')
      .selectOption('allow_all');
    const answer = page.waitForResponse(
      (res) => res.url().endsWith('/create-workflow-schedule') && res.status() === 200,
    );
    await form.getByRole('button', { name: 'Create schedule' }).click();
    const answered = (await (await answer).json()) as ScheduleView;
    await page.getByRole('heading', { name: `Schedule of ${tenant.template.name}` }).waitFor();
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    const created = await schedule(id);
    expect(created).to.deep.include({
      intervalSeconds: 60,
      timeZone: 'Europe/Berlin',
      overlap: 'allow_all',
      state: 'active',
    });
    expect(created.inputFields).to.deep.equal({ item: 'Printer paper', amount: '40' });
    // The answer's next five times, as it gave them (the schedule is not read again).
    expect(answered.id).to.equal(id);
    expect(c.answers).not.to.include('GET /get-workflow-schedule 200');
    const nextTimes = page.getByRole('region', { name: 'Next times' }).locator('li time');
    const datetimes = () =>
      nextTimes.evaluateAll((els) => els.map((e) => e.getAttribute('datetime')));
    expect(answered.nextTimes).to.have.length(5);
    expect(await datetimes()).to.deep.equal(answered.nextTimes);
    expect(await page.locator('.schedule-cadence').innerText()).to.include('every minute');
    const settings = page.getByRole('region', { name: 'Settings' });
    expect(await settings.innerText())
      .to.include('start a run anyway')
      .and.include('1 hour')
      .and.include('source:schedule')
      .and.include('Printer paper');
    await checkScreen(page, 'schedule');

    // Trigger now: the run is in the history, in the runs filtered by the schedule, and its
    // page says which schedule created it.
    await page.getByRole('button', { name: 'Trigger now' }).click();
    await dialogOf(page).getByRole('button', { name: 'Trigger now' }).click();
    const historyPanel = page.getByRole('region', { name: /^History/ });
    const triggered = historyPanel.locator('li').filter({ hasText: 'triggered by hand' });
    await triggered.first().waitFor();
    const runId = (await triggered.first().locator('a code').innerText()).trim();
    const fires = await history(id);
    expect(fires.find((f) => f.kind === 'trigger')).to.include({ outcome: 'fired', runId });
    const run = (await client.getRun(runId)).body;
    expect(run).to.include({ scheduleId: id });
    // The page follows the schedule: a run triggered elsewhere shows up in its history.
    const elsewhere = await client.call<FireView>('/trigger-workflow-schedule', { id });
    expect(elsewhere.body.outcome).to.equal('fired');
    await historyPanel
      .getByRole('link', { name: elsewhere.body.runId! })
      .waitFor({ timeout: 30_000 });
    await page.getByRole('link', { name: 'See the runs it created' }).click();
    await page.waitForURL(/schedule_id=/);
    expect(new URL(page.url()).searchParams.get('schedule_id')).to.equal(id);
    await page.locator(`tr[data-run-id="${runId}"]`).waitFor();
    expect(
      await page
        .getByRole('form', { name: 'Filter runs' })
        .getByLabel('Created by schedule (id)')
        .inputValue(),
    ).to.equal(id);
    await page.locator(`tr[data-run-id="${runId}"] a`).click();
    const scheduledBy = page.locator('.scheduled-by');
    await scheduledBy.waitFor();
    expect(await scheduledBy.innerText()).to.match(new RegExp(`^Created by schedule ${id} for `));
    expect(await scheduledBy.locator('time').getAttribute('datetime')).to.equal(run.scheduledFor);
    const createdEvent = page.locator('ol.timeline li.run-created');
    await createdEvent.waitFor();
    expect(await createdEvent.innerText()).to.include(`by schedule ${id}`);
    await createdEvent.getByRole('link', { name: id }).click();
    await page.getByRole('heading', { name: `Schedule of ${tenant.template.name}` }).waitFor();

    // Pause with a note, then resume.
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await dialogOf(page).getByLabel('Note (optional, kept with the schedule)').fill('Stock count');
    await dialogOf(page).getByRole('button', { name: 'Pause schedule' }).click();
    await page.getByText('Paused: “Stock count”').waitFor();
    await page.getByText('None while it is paused.').waitFor();
    expect(await schedule(id)).to.include({ state: 'paused', note: 'Stock count' });
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await dialogOf(page).getByRole('button', { name: 'Resume schedule' }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
    expect((await schedule(id)).state).to.equal('active');
    await waitFor('its next times again', async () => (await nextTimes.count()) === 5);

    // Edited to a cron expression: said in words, in the schedule's zone.
    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit the schedule' });
    await edit.getByRole('radio', { name: 'A cron expression' }).check();
    await edit.getByLabel('Cron expression', { exact: true }).fill('0 9 * * 1-5');
    await edit.getByRole('button', { name: 'Save schedule' }).click();
    await page
      .locator('.schedule-cadence')
      .getByText('every weekday at 09:00, Europe/Berlin')
      .waitFor();
    const edited = await schedule(id);
    expect(edited).to.include({ cron: '0 9 * * 1-5', overlap: 'allow_all' });
    expect(edited.intervalSeconds).to.equal(undefined);
    expect(await datetimes()).to.deep.equal(edited.nextTimes);

    // Backfill: a range too large is refused under its end; a week runs its weekdays.
    await page.getByRole('button', { name: 'Backfill…' }).click();
    const backfill = page.getByRole('form', { name: 'Backfill past times' });
    await backfill.getByLabel('From (your local time)').fill('2019-01-01T00:00');
    await backfill.getByLabel('To (your local time)').fill(parisInput(new Date()));
    await backfill.getByRole('button', { name: 'Backfill' }).click();
    await dialogOf(page).getByRole('button', { name: 'Backfill' }).click();
    await backfill.locator('#backfill-to-error').waitFor();
    const week = new Date(Date.now() - 7 * 86_400_000);
    await backfill.getByLabel('From (your local time)').fill(parisInput(week));
    await backfill.getByRole('button', { name: 'Backfill' }).click();
    await dialogOf(page).getByRole('button', { name: 'Backfill' }).click();
    const result = backfill.locator('.backfill-result');
    await result.waitFor();
    expect(await result.innerText()).to.match(/^\d scheduled times in the range: \d runs created/);
    await historyPanel.locator('li').filter({ hasText: 'backfilled' }).first().waitFor();
    expect((await history(id)).some((f) => f.kind === 'backfill')).to.equal(true);
    await checkScreen(page, 'schedule-history');

    // The list: its cadence in words, state, next time; filtered by state.
    await page.getByRole('link', { name: 'Schedules', exact: true }).first().click();
    const listRow = page.locator(`tr[data-schedule-id="${id}"]`);
    await listRow.waitFor();
    expect(await listRow.locator('td[data-label="Cadence"]').innerText()).to.equal(
      'every weekday at 09:00, Europe/Berlin',
    );
    expect(await listRow.locator('td[data-label="State"]').innerText()).to.equal('active');
    expect(
      await listRow.locator('td[data-label="Next time"] time').getAttribute('datetime'),
    ).to.equal(edited.nextTimes[0]);
    await checkScreen(page, 'schedules');
    const filter = page.getByRole('form', { name: 'Filter schedules' });
    await filter.getByLabel('State').selectOption('paused');
    await filter.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/state=paused/);
    await page.getByText('No schedule matches this filter.').waitFor();
    await filter.getByLabel('State').selectOption('active');
    await filter.getByRole('button', { name: 'Apply' }).click();
    await listRow.waitFor();
    await page.setViewportSize(PHONE);
    await checkScreen(page, 'schedules-phone');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Delete, confirmed: gone from the API.
    await listRow.getByRole('link').click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await dialogOf(page).getByRole('button', { name: 'Delete schedule' }).click();
    await page.getByRole('heading', { name: 'Schedule deleted' }).waitFor();
    expect((await client.call(`/get-workflow-schedule?id=${id}`)).status).to.equal(404);
    await expectClean(c, api, [tenant.key]);
  });

  it('shows a key without schedules:write every action disabled, with the reason', async () => {
    const made = await client.call<ScheduleView>('/create-workflow-schedule', {
      workflow_template_id: tenant.template.id,
      cron: '0 9 * * 1-5',
      note: 'held',
      paused: true,
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const reader = await createKey(testDb(), tenant.orgId, {
      name: 'reader',
      scopes: ['schedules:read', 'runs:read', 'templates:read'],
    });
    const c = await signedIn(reader.key, PHONE);
    const { page } = c;
    await page.goto(`${api.url}/console/schedules`);
    await page.locator(`tr[data-schedule-id="${made.body.id}"]`).waitFor();
    const create = page.getByRole('button', { name: 'New schedule' });
    expect(await create.isDisabled()).to.equal(true);
    expect(await create.locator('xpath=..').innerText()).to.include('needs schedules:write');
    await page.goto(`${api.url}/console/schedules/${made.body.id}`);
    await page.getByText('Paused: “held”').waitFor();
    for (const name of ['Edit', 'Resume', 'Trigger now', 'Backfill…', 'Delete']) {
      const button = page.getByRole('button', { name, exact: true });
      expect(await button.isDisabled(), name).to.equal(true);
      expect(await button.locator('xpath=..').innerText(), name).to.include(
        'needs schedules:write',
      );
    }
    await checkScreen(page, 'schedule-read-only-phone');
    await expectClean(c, api, [reader.key]);
  });

  it('explains the screen to a key without schedules:read', async () => {
    const runsOnly = await createKey(testDb(), tenant.orgId, {
      name: 'runs',
      scopes: ['runs:read'],
    });
    const c = await signedIn(runsOnly.key);
    const nav = c.page.getByRole('link', { name: 'Schedules' });
    expect(await nav.getAttribute('title')).to.equal('needs schedules:read');
    await nav.click();
    await c.page.getByText('does not hold the schedules:read scope').waitFor();
    expect(c.answers.filter((a) => a.includes('schedule'))).to.deep.equal([]);
    await expectClean(c, api, [runsOnly.key]);
  });
});
