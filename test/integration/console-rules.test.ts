// Typed fields and rules in the console, in a real browser against a real API and worker: a
// template built through the editor with typed fields (a number with limits, a date, a date and
// time, several options, a pattern), a page due relative to a date field, and rules built as
// sentences ("When Amount is greater than 10000 then show page Finance review"); the API's
// refusals shown under the input their JSON Pointer names (an RE2 pattern with a backreference,
// a rule's missing value); the rules loaded back into the editor for a new version, unchanged;
// then a run completed through typed inputs (a date picker, a number, a datetime sent with the
// browser's offset, checkboxes sent as a JSON array), a value out of range refused under its
// field, and the page a rule did not show skipped, named with its rule in the steps and the
// history.
import { expect } from 'chai';
import type { Browser, Page, Response } from 'playwright-core';
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
import { Client, request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

interface Detail {
  id: string;
  version: number;
  pages: Array<{ name: string; due?: unknown; inputFields: Array<Record<string, unknown>> }>;
  rules?: unknown[];
}

interface RunView {
  status: string;
  currentStepName?: string;
  inputFields: Record<string, string>;
  steps: Array<{ name: string; status: string; assignee?: string; rules?: unknown }>;
  history: Array<{ type: string; data: Record<string, unknown> }>;
}

const EXPECTED_PAGES = [
  {
    name: 'Claim',
    inputFields: [
      {
        inputId: 'amount',
        fieldName: 'Amount',
        required: true,
        type: 'number',
        min: 0,
        max: 1000000,
        help: 'In euros, cents after a dot',
      },
      { inputId: 'spent_on', fieldName: 'Spent on', required: true, type: 'date' },
      { inputId: 'receipt_at', fieldName: 'Receipt time', type: 'datetime' },
      {
        inputId: 'paid_with',
        fieldName: 'Paid with',
        type: 'multi_select',
        options: ['Card', 'Cash', 'Transfer'],
      },
      {
        inputId: 'ref',
        fieldName: 'Reference',
        pattern: '[A-Z]{2}-[0-9]+',
        placeholder: 'AB-123',
      },
    ],
  },
  {
    name: 'Finance review',
    inputFields: [{ inputId: 'finance_ok', fieldName: 'Finance approves', type: 'checkbox' }],
  },
  {
    name: 'Payout',
    due: { anchor: 'field', field: 'spent_on', amount: 30, unit: 'days' },
    inputFields: [{ inputId: 'payout_note', fieldName: 'Payout note', type: 'long_text' }],
  },
];

const EXPECTED_RULES = [
  {
    name: 'Big amounts',
    when: { all: [{ field: 'amount', op: 'gt', value: '10000' }] },
    then: [{ action: 'show_page', page: 'Finance review' }],
  },
  {
    name: 'Small amounts',
    when: { all: [{ field: 'amount', op: 'lt', value: '1000' }] },
    then: [
      { action: 'assign', page: 'Payout', user: 'petty-cash' },
      {
        action: 'set_due',
        page: 'Payout',
        due: { anchor: 'step_start', amount: 2, unit: 'business_days' },
      },
    ],
  },
];

describe('console: typed fields and rules', function () {
  this.timeout(120_000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let browser: Browser;
  let tenant: Tenant;
  let client: Client;
  let templateId: string;
  const open: ConsolePage[] = [];

  before(async () => {
    api = await startApi({ BASE_PATH: '/wrs' });
    worker = await startWorker();
    browser = await launchChromium();
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

  async function signedIn(options: Parameters<typeof openConsole>[2] = {}) {
    const c = await openConsole(browser, api, options);
    open.push(c);
    await signIn(c.page, tenant.key);
    return c;
  }

  async function get<T>(path: string): Promise<T> {
    const reply = await request<T>(`${api.url}${path}`, { key: tenant.key });
    expect(reply.status, `${path}: ${reply.text}`).to.equal(200);
    return reply.body;
  }

  const label = (page: Page, text: string) => page.getByLabel(text, { exact: true });

  /** Clicks the button and returns the API's refusal of the save it sends. */
  async function refusedSave(page: Page, button: string) {
    const answer = page.waitForResponse((res: Response) =>
      res.url().endsWith('/create-workflow-template'),
    );
    await page.getByRole('button', { name: button }).click();
    const res = await answer;
    expect(res.status()).to.equal(400);
    return (await res.json()) as { code: string; message: string; field: string };
  }

  it('builds typed fields, a relative due time and rules as sentences, showing refusals at their input', async () => {
    const c = await signedIn();
    const { page } = c;
    await page.goto(`${api.url}/console/templates/new`);
    await page.getByRole('heading', { name: 'New template' }).waitFor();
    await label(page, 'Template name').fill('Expense claim');

    // Page 1: a number with limits and help, a date, a date and time, options, a pattern.
    await label(page, 'Page 1: Name').fill('Claim');
    const field = (f: number, text: string) => label(page, `Page 1, field ${f}: ${text}`);
    await field(1, 'Input id').fill('amount');
    await field(1, 'Field name').fill('Amount');
    await field(1, 'Required').check();
    await field(1, 'Type').selectOption('number');
    // Only the limits a number takes are offered.
    expect(await field(1, 'Pattern').count()).to.equal(0);
    await field(1, 'Minimum').fill('0');
    await field(1, 'Maximum').fill('1000000');
    await field(1, 'Help text').fill('In euros, cents after a dot');
    const addField = () => page.getByRole('button', { name: 'Add a field to page 1' }).click();
    await addField();
    await field(2, 'Input id').fill('spent_on');
    await field(2, 'Field name').fill('Spent on');
    await field(2, 'Required').check();
    await field(2, 'Type').selectOption('date');
    await addField();
    await field(3, 'Input id').fill('receipt_at');
    await field(3, 'Field name').fill('Receipt time');
    await field(3, 'Type').selectOption('datetime');
    await addField();
    await field(4, 'Input id').fill('paid_with');
    await field(4, 'Field name').fill('Paid with');
    await field(4, 'Type').selectOption('multi_select');
    await field(4, 'Options, one per line').fill('Card\nCash\nTransfer');
    await addField();
    await field(5, 'Input id').fill('ref');
    await field(5, 'Field name').fill('Reference');
    expect(await field(5, 'Minimum').count()).to.equal(0);
    // A backreference: RE2 refuses it (matching stays linear).
    await field(5, 'Pattern').fill('(a)\\1');
    await field(5, 'Placeholder').fill('AB-123');

    // Pages 2 and 3; page 3 falls due 30 days after the date spent.
    await page.getByRole('button', { name: 'Add a page' }).click();
    await label(page, 'Page 2: Name').fill('Finance review');
    await label(page, 'Page 2, field 1: Input id').fill('finance_ok');
    await label(page, 'Page 2, field 1: Field name').fill('Finance approves');
    await label(page, 'Page 2, field 1: Type').selectOption('checkbox');
    await page.getByRole('button', { name: 'Add a page' }).click();
    await label(page, 'Page 3: Name').fill('Payout');
    await label(page, 'Page 3, field 1: Input id').fill('payout_note');
    await label(page, 'Page 3, field 1: Field name').fill('Payout note');
    await label(page, 'Page 3, field 1: Type').selectOption('long_text');
    await label(page, 'Page 3: Due counted from').selectOption('field');
    // Only date fields are offered as the anchor.
    const anchors = await label(page, 'Page 3: Due date field').locator('option').allInnerTexts();
    expect(anchors).to.deep.equal(['— choose a field —', 'Spent on', 'Receipt time']);
    await label(page, 'Page 3: Due date field').selectOption({ label: 'Spent on' });
    await label(page, 'Page 3: Due amount (negative: before)').fill('30');
    await label(page, 'Page 3: Due unit').selectOption('days');

    // Rule 1: When Amount is greater than (a value left out for now) then show page Finance review.
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await label(page, "Rule 1: Name (optional, shown in the runs' history)").fill('Big amounts');
    await label(page, 'Rule 1, condition 1: Field').selectOption({ label: 'Amount' });
    // A number's tests compare; a text's would not.
    const numberTests = await label(page, 'Rule 1, condition 1: Test')
      .locator('option')
      .allInnerTexts();
    expect(numberTests).to.include('is greater than').and.not.include('contains');
    await label(page, 'Rule 1, condition 1: Test').selectOption({ label: 'is greater than' });
    expect(await label(page, 'Rule 1, condition 1: Value').getAttribute('type')).to.equal('number');
    await label(page, 'Rule 1, action 1: Action').selectOption({ label: 'show page' });
    await label(page, 'Rule 1, action 1: Page').selectOption({ label: 'Finance review' });
    // The tests offered follow the field's type.
    await label(page, 'Rule 1, condition 1: Field').selectOption({ label: 'Reference' });
    expect(
      await label(page, 'Rule 1, condition 1: Test').locator('option').allInnerTexts(),
    ).to.include('contains');
    await label(page, 'Rule 1, condition 1: Field').selectOption({ label: 'Amount' });
    await label(page, 'Rule 1, condition 1: Test').selectOption({ label: 'is greater than' });

    // Rule 2: When Amount is less than 1000 then assign Payout to petty-cash and make it due
    // 2 business days after its step starts.
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await label(page, "Rule 2: Name (optional, shown in the runs' history)").fill('Small amounts');
    await label(page, 'Rule 2, condition 1: Field').selectOption({ label: 'Amount' });
    await label(page, 'Rule 2, condition 1: Test').selectOption({ label: 'is less than' });
    await label(page, 'Rule 2, condition 1: Value').fill('1000');
    await label(page, 'Rule 2, action 1: Action').selectOption({ label: 'assign' });
    await label(page, 'Rule 2, action 1: Page').selectOption({ label: 'Payout' });
    await label(page, 'Rule 2, action 1: User id').fill('petty-cash');
    await page.getByRole('button', { name: 'Add an action to rule 2' }).click();
    await label(page, 'Rule 2, action 2: Action').selectOption({ label: 'set the due time of' });
    await label(page, 'Rule 2, action 2: Page').selectOption({ label: 'Payout' });
    await label(page, 'Rule 2, action 2: Due amount').fill('2');
    await label(page, 'Rule 2, action 2: Due unit').selectOption('business_days');
    await label(page, 'Rule 2, action 2: Due counted from').selectOption('step_start');
    await checkScreen(page, 'rules-editor');
    await page.screenshot({ path: '/tmp/rules-editor.png', fullPage: true });
    await page.locator('fieldset.tpl-page').first().screenshot({ path: '/tmp/rules-fields.png' });
    await page.locator('section.tpl-rules').screenshot({ path: '/tmp/rules-builder.png' });

    // The pattern: RE2's refusal under the pattern's input.
    const badPattern = await refusedSave(page, 'Create template');
    expect(badPattern.code).to.equal('invalid_template_field');
    expect(badPattern.field).to.equal('/pages/0/inputFields/4/pattern');
    expect(badPattern.message).to.include('RE2');
    await expectMessageAt(page, 'Page 1, field 5: Pattern', badPattern.message);
    await checkScreen(page, 'rules-editor-pattern-refused');
    await page.screenshot({ path: '/tmp/rules-editor-pattern.png' });

    // The rule's missing value: the refusal under the rule's value input.
    await field(5, 'Pattern').fill('[A-Z]{2}-[0-9]+');
    const noValue = await refusedSave(page, 'Create template');
    expect(noValue.code).to.equal('invalid_rule');
    expect(noValue.field).to.equal('/rules/0/when/all/0/value');
    await expectMessageAt(page, 'Rule 1, condition 1: Value', noValue.message);
    expect(await field(5, 'Pattern').getAttribute('aria-invalid')).to.equal(null);
    await checkScreen(page, 'rules-editor-rule-refused');
    await page.locator('section.tpl-rules').screenshot({ path: '/tmp/rules-editor-rule.png' });

    await label(page, 'Rule 1, condition 1: Value').fill('10000');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Expense claim', level: 1 }).waitFor();
    templateId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);

    // Saved as built.
    const saved = await get<Detail>(`/get-workflow-template?id=${templateId}`);
    expect(saved.pages).to.deep.equal(EXPECTED_PAGES);
    expect(saved.rules).to.deep.equal(EXPECTED_RULES);

    // The template's screen reads its rules and due times as sentences.
    const rules = page.getByRole('region', { name: 'Rules' });
    await rules.getByText('When Amount is greater than 10000, show page Finance review.').waitFor();
    expect(await rules.innerText()).to.include(
      'When Amount is less than 1000, assign Payout to petty-cash and make Payout due 2 business days after the step starts.',
    );
    await page.getByText('Due 30 days after Spent on.').waitFor();
    expect(await page.getByRole('row', { name: /Paid with/ }).innerText()).to.include(
      'options: Card, Cash, Transfer',
    );
    await checkScreen(page, 'rules-template');
    await page.screenshot({ path: '/tmp/rules-template.png', fullPage: true });
    await expectClean(c, api, [tenant.key]);
  });

  it('loads the rules back into the editor, on a phone, and saves them unchanged', async () => {
    const c = await signedIn({ viewport: PHONE, colorScheme: 'dark' });
    const { page } = c;
    await page.goto(`${api.url}/console/templates/${templateId}?edit=1`);
    await page.getByRole('heading', { name: 'Edit Expense claim' }).waitFor();
    expect(await label(page, 'Rule 1, condition 1: Value').inputValue()).to.equal('10000');
    expect(await label(page, 'Rule 2, action 1: User id').inputValue()).to.equal('petty-cash');
    expect(await label(page, 'Page 3: Due amount (negative: before)').inputValue()).to.equal('30');
    await checkScreen(page, 'rules-editor-phone-dark');
    await page.locator('section.tpl-rules').screenshot({ path: '/tmp/rules-builder-phone.png' });
    await page
      .locator('fieldset.tpl-page')
      .nth(2)
      .screenshot({ path: '/tmp/rules-page-phone.png' });
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.waitForURL(/version=2/);
    const v2 = await get<Detail>(`/get-workflow-template?id=${templateId}`);
    expect(v2.version).to.equal(2);
    expect(v2.pages).to.deep.equal(EXPECTED_PAGES);
    expect(v2.rules).to.deep.equal(EXPECTED_RULES);
    await expectClean(c, api, [tenant.key]);
  });

  it('completes a step through typed inputs and shows the page a rule skipped', async () => {
    const created = await client.createRun({
      workflow_template_id: templateId,
      input_fields: { amount: '500' },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const id = created.body.id as string;
    await waitFor('run to start', async () => (await client.getRun(id)).body.status === 'active');

    const c = await signedIn();
    const { page } = c;
    await page.goto(`${api.url}/console/runs/${id}`);
    await page.getByRole('heading', { name: 'Complete the current step: Claim' }).waitFor();
    const amount = page.getByRole('spinbutton', { name: /^Amount/ });
    expect(await amount.inputValue()).to.equal('500');
    // Its help text describes it.
    const help = await amount.getAttribute('aria-describedby');
    expect(await page.locator(`#${help}`).innerText()).to.equal('In euros, cents after a dot');
    const spentOn = page.getByLabel(/^Spent on/);
    expect(await spentOn.getAttribute('type')).to.equal('date');
    await spentOn.fill('2026-03-02');
    const receipt = page.getByLabel(/^Receipt time/);
    expect(await receipt.getAttribute('type')).to.equal('datetime-local');
    await receipt.fill('2026-03-02T14:30');
    await page
      .getByRole('group', { name: /^Paid with/ })
      .getByRole('checkbox', { name: 'Card' })
      .check();
    const reference = page.getByRole('textbox', { name: /^Reference/ });
    expect(await reference.getAttribute('placeholder')).to.equal('AB-123');
    await reference.fill('AB-123');

    // Out of range: the API's refusal under the amount.
    await amount.fill('2000000');
    await page.getByRole('button', { name: 'Complete step' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Complete step' }).click();
    const error = page.locator('#complete-amount-error');
    await error.waitFor();
    expect(await error.innerText()).to.equal(
      "input field 'amount' (Amount): is more than the maximum 1000000",
    );
    expect(await amount.getAttribute('aria-invalid')).to.equal('true');
    expect((await amount.getAttribute('aria-describedby'))!.split(' ')).to.include(
      'complete-amount-error',
    );
    expect(await page.locator('.complete-step .banner.error').count()).to.equal(0);
    await checkScreen(page, 'rules-run-refused');
    await page.screenshot({ path: '/tmp/rules-run-refused.png', fullPage: true });

    await amount.fill('750');
    await page.getByRole('button', { name: 'Complete step' }).click();
    await dialog.getByRole('button', { name: 'Complete step' }).click();
    // 750 is not above 10000: Finance review is skipped, Payout is current.
    await page.getByRole('heading', { name: 'Complete the current step: Payout' }).waitFor();
    expect(
      await page.getByRole('textbox', { name: /^Payout note/ }).evaluate((el) => el.tagName),
    ).to.equal('TEXTAREA');

    const run = (await client.getRun(id)).body as unknown as RunView;
    expect(run.inputFields).to.deep.equal({
      amount: '750',
      spent_on: '2026-03-02',
      // The browser's offset on that day (the context runs in Europe/Paris).
      receipt_at: '2026-03-02T14:30:00+01:00',
      paid_with: '["Card"]',
      ref: 'AB-123',
    });
    expect(run.steps.map((s) => [s.name, s.status])).to.deep.equal([
      ['Claim', 'completed'],
      ['Finance review', 'skipped'],
      ['Payout', 'active'],
    ]);
    expect(run.steps[1]!.rules).to.deep.equal({ notShownBy: 0 });
    expect(run.steps[2]!.rules).to.deep.equal({ dueBy: 1, assignedBy: 1 });
    expect(run.steps[2]!.assignee).to.equal('petty-cash');

    // The steps say which rule decided what.
    const steps = page.locator('table.steps');
    const review = steps.locator('tr', { hasText: 'Finance review' });
    await review.getByText('skipped', { exact: true }).waitFor();
    expect(await review.innerText()).to.include('not shown: rule 1 (Big amounts) did not apply');
    const payout = steps.locator('tr', { hasText: 'Payout' });
    expect(await payout.innerText())
      .to.include('due time set by rule 2 (Small amounts)')
      .and.include('assigned by rule 2 (Small amounts)');
    // The history reads the skip, and who chose the next step's assignee and due time.
    const skipped = page.locator('ol.timeline li', { hasText: 'Step skipped' });
    expect(await skipped.innerText())
      .to.include('step.skipped')
      .and.include('step Finance review · not shown: rule 1 (Big amounts) did not apply');
    const completed = page.locator('ol.timeline li', { hasText: 'Step completed' });
    expect(await completed.innerText())
      .to.include('assigned to petty-cash (by rule 2 (Small amounts))')
      .and.match(/due .+\(by rule 2 \(Small amounts\)\)/);
    // The inputs read as their types: options listed, a date as a date.
    const inputs = page.locator('table.inputs');
    expect(await inputs.locator('tr', { hasText: 'Paid with' }).innerText()).to.include('Card');
    expect(await inputs.locator('tr', { hasText: 'Spent on' }).innerText()).to.include(
      '2 Mar 2026',
    );
    await checkScreen(page, 'rules-run-skipped');
    await page.screenshot({ path: '/tmp/rules-run-skipped.png', fullPage: true });
    await expectClean(c, api, [tenant.key]);
  });
});

/** The input labelled `text` is marked invalid and described by the API's message. */
async function expectMessageAt(page: Page, text: string, message: string): Promise<void> {
  const input = page.getByLabel(text, { exact: true });
  await page.waitForFunction(
    (el) => el?.getAttribute('aria-invalid') === 'true',
    await input.elementHandle(),
  );
  const describedBy = await input.getAttribute('aria-describedby');
  expect(describedBy, `${text}: aria-describedby`).to.be.a('string');
  const errorId = describedBy!.split(' ').find((id) => id.endsWith('-error'))!;
  expect(await page.locator(`#${errorId}`).innerText()).to.equal(message);
  // The message sits right under its input, and not at the top.
  expect(await page.locator('.tpl-editor > .banner.error').count()).to.equal(0);
}
