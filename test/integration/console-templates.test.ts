// The templates screens in a real browser against a real API: a template made through the form
// editor (the API lists it), a second version with a changed field (the versions list shows
// both, and the first still shows its own field), the API's refusal shown next to the input
// its `field` names, archive and restore (the API agrees), and a read-only key finding every
// write action disabled with its reason.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import {
  checkScreen,
  DESKTOP,
  expectClean,
  openConsole,
  PHONE,
  signIn,
  type ConsolePage,
} from '../support/console.js';
import { createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

interface Detail {
  id: string;
  version: number;
  latestVersion: number;
  archived: boolean;
  name: string;
  pages: Array<{
    name: string;
    dueInHours?: number;
    inputFields: Array<{ inputId: string; fieldName: string; required?: boolean }>;
  }>;
}

describe('console: templates', function () {
  this.timeout(90_000);

  let api: ApiProcess;
  let browser: Browser;
  let tenant: Tenant;
  const open: ConsolePage[] = [];

  before(async () => {
    api = await startApi({ BASE_PATH: '/wrs' });
    browser = await launchChromium();
    tenant = await createTenant(testDb());
  });

  afterEach(async () => {
    for (const page of open.splice(0)) await page.close();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
  });

  async function get<T>(path: string, key = tenant.key): Promise<T> {
    const reply = await request<T>(`${api.url}${path}`, { key });
    expect(reply.status, `${path}: ${reply.text}`).to.equal(200);
    return reply.body;
  }

  async function openTemplates(
    key: string,
    options: Parameters<typeof openConsole>[2] = {},
  ): Promise<ConsolePage> {
    const c = await openConsole(browser, api, options);
    open.push(c);
    await signIn(c.page, key);
    if ((options.viewport ?? DESKTOP).width < 720) {
      await c.page.getByRole('button', { name: 'Menu' }).click();
    }
    await c.page.getByRole('link', { name: 'Templates' }).click();
    await c.page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
    return c;
  }

  const label = (page: Page, text: string) => page.getByLabel(text, { exact: true });

  it('creates a template with two pages through the editor, then a second version', async () => {
    const c = await openTemplates(tenant.key);
    const { page } = c;
    // The fixture's template is listed, with what the list's rows show.
    const row = page.getByRole('row').filter({ hasText: tenant.template.name });
    await row.getByRole('cell', { name: 'active' }).waitFor();
    await checkScreen(page, 'templates');

    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByRole('heading', { name: 'New template' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/wrs/console/templates/new');
    await label(page, 'Template name').fill('Laptop handover');
    await label(page, 'Page 1: Name').fill('Order');
    await label(page, 'Page 1: Due in hours (optional)').fill('24');
    await label(page, 'Page 1, field 1: Input id').fill('model');
    await label(page, 'Page 1, field 1: Field name').fill('Model');
    await label(page, 'Page 1, field 1: Required').check();
    await page.getByRole('button', { name: 'Add a field to page 1' }).click();
    await label(page, 'Page 1, field 2: Input id').fill('colour');
    await label(page, 'Page 1, field 2: Field name').fill('Colour');
    await page.getByRole('button', { name: 'Add a page' }).click();
    await label(page, 'Page 2: Name').fill('Hand over');
    await label(page, 'Page 2, field 1: Input id').fill('serial');
    await label(page, 'Page 2, field 1: Field name').fill('Serial number');
    // Moving a field down and back up keeps its values with it.
    await page.getByRole('button', { name: 'Move page 1, field 1 down' }).click();
    expect(await label(page, 'Page 1, field 2: Input id').inputValue()).to.equal('model');
    await page.getByRole('button', { name: 'Move page 1, field 2 up' }).click();
    expect(await label(page, 'Page 1, field 1: Input id').inputValue()).to.equal('model');
    expect(await label(page, 'Page 1, field 1: Required').isChecked()).to.equal(true);
    await checkScreen(page, 'template-editor');

    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Laptop handover', level: 1 }).waitFor();
    const url = new URL(page.url());
    const id = decodeURIComponent(url.pathname.split('/').pop()!);
    expect(url.searchParams.get('version')).to.equal('1');
    expect(await page.getByRole('heading', { name: 'Page 2: Hand over' }).count()).to.equal(1);

    // The API lists it, as it was typed.
    const listed =
      await get<Array<{ id: string; name: string; inputFields: unknown[] }>>(
        '/get-workflow-templates',
      );
    const mine = listed.find((t) => t.id === id);
    expect(mine?.name).to.equal('Laptop handover');
    expect(mine?.inputFields).to.deep.equal([
      { pageName: 'Order', inputId: 'model', fieldName: 'Model' },
      { pageName: 'Order', inputId: 'colour', fieldName: 'Colour' },
      { pageName: 'Hand over', inputId: 'serial', fieldName: 'Serial number' },
    ]);
    const v1 = await get<Detail>(`/get-workflow-template?id=${id}`);
    expect(v1.pages[0]).to.deep.equal({
      name: 'Order',
      dueInHours: 24,
      inputFields: [
        { inputId: 'model', fieldName: 'Model', required: true },
        { inputId: 'colour', fieldName: 'Colour' },
      ],
    });
    await checkScreen(page, 'template');

    // A second version, with a field renamed.
    await page.getByRole('button', { name: 'Edit as a new version' }).click();
    await page.getByRole('heading', { name: 'Edit Laptop handover' }).waitFor();
    expect(await label(page, 'Page 2, field 1: Field name').inputValue()).to.equal('Serial number');
    await label(page, 'Page 2, field 1: Field name').fill('Serial (from the box)');
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.getByRole('cell', { name: 'Serial (from the box)' }).waitFor();
    expect(new URL(page.url()).searchParams.get('version')).to.equal('2');
    expect(new URL(page.url()).searchParams.has('edit')).to.equal(false);
    const versions = page
      .getByRole('region', { name: 'Versions' })
      .getByRole('link', { name: /^Version \d+$/ });
    await page.waitForFunction(
      () => document.querySelectorAll('.tpl-versions tbody tr').length === 2,
    );
    expect(await versions.allInnerTexts()).to.deep.equal(['Version 2', 'Version 1']);
    const v2 = await get<Detail>(`/get-workflow-template?id=${id}`);
    expect(v2.version).to.equal(2);
    expect(v2.pages[1]!.inputFields[0]!.fieldName).to.equal('Serial (from the box)');

    // Choosing version 1 shows its own field, at its own URL.
    await versions.filter({ hasText: 'Version 1' }).click();
    await page.getByRole('cell', { name: 'Serial number', exact: true }).waitFor();
    expect(new URL(page.url()).searchParams.get('version')).to.equal('1');
    expect(await page.getByRole('cell', { name: 'Serial (from the box)' }).count()).to.equal(0);
    expect(await page.getByText('This is version 1.').count()).to.equal(1);
    await expectClean(c, api, [tenant.key]);
  });

  it("shows the API's refusal next to the input its field names", async () => {
    const c = await openTemplates(tenant.key, { viewport: PHONE, colorScheme: 'dark' });
    const { page } = c;
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByRole('heading', { name: 'New template' }).waitFor();

    // An empty name: the API's message under the name.
    await label(page, 'Page 1: Name').fill('Only page');
    await label(page, 'Page 1, field 1: Input id').fill('same');
    await label(page, 'Page 1, field 1: Field name').fill('First');
    await page.getByRole('button', { name: 'Add a field to page 1' }).click();
    await label(page, 'Page 1, field 2: Input id').fill('same');
    await label(page, 'Page 1, field 2: Field name').fill('Second');
    const emptyName = await request<{ message: string; field?: string }>(
      `${api.url}/create-workflow-template`,
      {
        key: tenant.key,
        body: {
          name: '',
          pages: [
            {
              name: 'Only page',
              inputFields: [
                { inputId: 'same', fieldName: 'First' },
                { inputId: 'same', fieldName: 'Second' },
              ],
            },
          ],
        },
      },
    );
    expect(emptyName.status).to.equal(400);
    expect(emptyName.body.field).to.equal('/name');
    await page.getByRole('button', { name: 'Create template' }).click();
    await expectMessageAt(page, 'Template name', emptyName.body.message);

    // Two fields with the same inputId: the message next to the second one's id.
    await label(page, 'Template name').fill('Twins');
    const duplicate = await request<{ message: string; field?: string; code: string }>(
      `${api.url}/create-workflow-template`,
      {
        key: tenant.key,
        body: {
          name: 'Twins',
          pages: [
            {
              name: 'Only page',
              inputFields: [
                { inputId: 'same', fieldName: 'First' },
                { inputId: 'same', fieldName: 'Second' },
              ],
            },
          ],
        },
      },
    );
    expect(duplicate.body.code).to.equal('duplicate_input_id');
    expect(duplicate.body.field).to.equal('/pages/0/inputFields/1/inputId');
    await page.getByRole('button', { name: 'Create template' }).click();
    await expectMessageAt(page, 'Page 1, field 2: Input id', duplicate.body.message);
    expect(await label(page, 'Template name').getAttribute('aria-invalid')).to.equal(null);
    await checkScreen(page, 'template-editor-phone-dark');

    // Fixed, it saves; nothing was saved before.
    await label(page, 'Page 1, field 2: Input id').fill('other');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Twins', level: 1 }).waitFor();
    const listed = await get<Array<{ name: string }>>('/get-workflow-templates');
    expect(listed.filter((t) => t.name === 'Twins')).to.have.length(1);
    await expectClean(c, api, [tenant.key]);
  });

  it('archives and restores a template, after asking', async () => {
    const made = await createTenant(testDb());
    const c = await openTemplates(made.key, { viewport: PHONE });
    const { page } = c;
    await checkScreen(page, 'templates-phone');
    await page.getByRole('link', { name: made.template.name }).click();
    await page.getByRole('heading', { name: made.template.name, level: 1 }).waitFor();
    await checkScreen(page, 'template-phone');

    await page.getByRole('button', { name: 'Archive' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: `Archive ${made.template.name}?` }).waitFor();
    // Going back does nothing.
    await dialog.getByRole('button', { name: 'Back' }).click();
    expect(
      (await get<Detail>(`/get-workflow-template?id=${made.template.id}`, made.key)).archived,
    ).to.equal(false);
    await page.getByRole('button', { name: 'Archive' }).click();
    await dialog.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('button', { name: 'Restore' }).waitFor();
    expect(await page.getByText('archived', { exact: true }).count()).to.be.greaterThan(0);
    expect(
      (await get<Detail>(`/get-workflow-template?id=${made.template.id}`, made.key)).archived,
    ).to.equal(true);

    // It left the list for the archived ones.
    await page.locator('.tpl-crumbs').getByRole('link', { name: 'Templates' }).click();
    await page.getByText('No templates yet').waitFor();
    await page.getByLabel('Show the archived templates instead').check();
    await page.getByRole('link', { name: made.template.name }).click();

    await page.getByRole('button', { name: 'Restore' }).click();
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await page.getByRole('button', { name: 'Archive' }).waitFor();
    expect(
      (await get<Detail>(`/get-workflow-template?id=${made.template.id}`, made.key)).archived,
    ).to.equal(false);
    await expectClean(c, api, [made.key]);
  });

  it('pages the list with the keyset cursor', async () => {
    const many = await createTenant(testDb());
    for (let i = 1; i <= 25; i++) {
      const made = await request(`${api.url}/create-workflow-template`, {
        key: many.key,
        body: { name: `Form ${i}`, pages: [{ name: 'Only', inputFields: [] }] },
      });
      expect(made.status, made.text).to.equal(200);
    }
    const c = await openTemplates(many.key);
    const { page } = c;
    const rows = page.locator('table.cards tbody tr');
    await page.getByRole('link', { name: 'Form 25' }).waitFor();
    expect(await rows.count()).to.equal(25);
    // Newest first: the fixture's template, made first, is on the next page.
    expect(await page.getByRole('link', { name: many.template.name }).count()).to.equal(0);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.getByRole('link', { name: many.template.name }).waitFor();
    expect(await rows.count()).to.equal(1);
    expect(new URL(page.url()).searchParams.get('cursor')).to.be.a('string');
    expect(await page.getByRole('link', { name: 'Next page' }).count()).to.equal(0);
    await page.getByRole('link', { name: 'First page' }).click();
    await page.getByRole('link', { name: 'Form 25' }).waitFor();
    await expectClean(c, api, [many.key]);
  });

  it('shows a read-only key every write action disabled, with its reason', async () => {
    const reader = await createKey(testDb(), tenant.orgId, {
      scopes: ['runs:read', 'templates:read'],
    });
    const c = await openTemplates(reader.key);
    const { page } = c;
    await expectDenied(page, 'New template');
    await page.getByRole('link', { name: tenant.template.name }).click();
    await page.getByRole('heading', { name: tenant.template.name, level: 1 }).waitFor();
    await expectDenied(page, 'Edit as a new version');
    await expectDenied(page, 'Archive');
    // The editor, reached by its URL, cannot save either.
    await page.goto(`${api.url}/console/templates/new`);
    await page.getByRole('heading', { name: 'New template' }).waitFor();
    await expectDenied(page, 'Create template');
    await expectClean(c, api, [reader.key]);
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
  expect(await page.locator(`#${describedBy}`).innerText()).to.equal(message);
  // The message sits right under its input, and not at the top.
  expect(await page.locator('.tpl-editor > .banner.error').count()).to.equal(0);
}

/** The button is disabled and says, next to it, which scope it needs. */
async function expectDenied(page: Page, name: string): Promise<void> {
  const button = page.getByRole('button', { name, exact: true });
  await button.waitFor();
  expect(await button.isDisabled(), `${name} disabled`).to.equal(true);
  const reason = button.locator('xpath=following-sibling::small[1]');
  expect(await reason.innerText()).to.equal('needs templates:write');
}
