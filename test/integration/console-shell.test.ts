// The console's frame in a real browser: the page and its policy, sign-in with a key checked by
// the API, the key kept in sessionStorage only and forgotten at sign-out, deep links, and a
// key without a screen's scope finding its navigation marked.
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
import { createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

describe('console: the frame, sign-in and sign-out', function () {
  this.timeout(60_000);

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

  it("is served under BASE_PATH with a policy of default-src 'self', at any console path", async () => {
    for (const path of ['/console', '/console/templates', '/console/runs/some-id?x=1']) {
      const res = await fetch(`${api.url}${path}`);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type'), path).to.match(/^text\/html/);
      expect(res.headers.get('content-security-policy'), path).to.match(/^default-src 'self'/);
      expect(await res.text(), path).to.include('<meta name="base-path" content="/wrs">');
    }
    const script = await fetch(`${api.url}/console/assets/app.js`);
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.match(/^application\/javascript/);
  });

  it("refuses a wrong key with the API's message, and signs in with a right one", async () => {
    const c = await openConsole(browser, api);
    open.push(c);
    await checkScreen(c.page, 'sign-in');
    await c.page.getByLabel('API key').fill('wrs_not_a_key_at_all');
    await c.page.getByRole('button', { name: 'Sign in' }).click();
    await c.page.getByRole('alert').waitFor();
    expect(await c.page.getByRole('alert').innerText()).to.match(/key/i);
    await signIn(c.page, tenant.key);
    expect(await c.page.getByRole('navigation', { name: 'Console' }).innerText()).to.include(
      'Runs',
    );
    await expectClean(c, api, [tenant.key]);
  });

  it('keeps the key in sessionStorage only, and forgets it at sign-out', async () => {
    const c = await openConsole(browser, api);
    open.push(c);
    await signIn(c.page, tenant.key);
    const stored = await c.page.evaluate(() => ({
      session: JSON.stringify({ ...sessionStorage }),
      local: JSON.stringify({ ...localStorage }),
      cookie: document.cookie,
    }));
    expect(stored.session).to.include(tenant.key);
    expect(stored.local).to.not.include(tenant.key);
    expect(stored.cookie).to.equal('');
    expect(await c.context.cookies()).to.deep.equal([]);
    // A reload keeps the tab signed in (sessionStorage outlives a reload, not the tab).
    await c.page.reload();
    await c.page.getByRole('button', { name: 'Sign out' }).waitFor();
    await c.page.getByRole('button', { name: 'Sign out' }).click();
    await c.page.getByLabel('API key').waitFor();
    const after = await c.page.evaluate(() => JSON.stringify({ ...sessionStorage }));
    expect(after).to.not.include(tenant.key);
    expect(after).to.equal('{}');
    await expectClean(c, api, [tenant.key]);
  });

  it('is used from the keyboard alone: sign in, skip to the content, move between screens', async () => {
    const c = await openConsole(browser, api);
    open.push(c);
    const { page } = c;
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).to.equal(
      'api-key',
    );
    await page.keyboard.type(tenant.key);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // The first stop is the skip link, which takes focus past the navigation.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal(
      'Skip to content',
    );
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('main');
    // Then the navigation, link by link, each followed with Enter.
    await page.getByRole('link', { name: 'Templates' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => location.pathname.endsWith('/console/templates'));
    expect(
      await page.getByRole('link', { name: 'Templates' }).getAttribute('aria-current'),
    ).to.equal('page');
    // Back goes back, without a reload of the page.
    const marker = await page.evaluate(() => ((window as unknown as { mark: number }).mark = 7));
    await page.goBack();
    await page.waitForFunction(() => location.pathname.endsWith('/console'));
    expect(await page.evaluate(() => (window as unknown as { mark?: number }).mark)).to.equal(
      marker,
    );
    await expectClean(c, api, [tenant.key]);
  });

  it("marks the screens a key's scopes do not reach, and works on a phone's screen", async () => {
    const narrow = await createKey(testDb(), tenant.orgId, { scopes: ['runs:read'] });
    const c = await openConsole(browser, api, { viewport: PHONE, colorScheme: 'dark' });
    open.push(c);
    await signIn(c.page, narrow.key);
    await c.page.getByRole('button', { name: 'Menu' }).click();
    const keys = c.page.getByRole('link', { name: 'API keys' });
    expect(await keys.getAttribute('title')).to.equal('needs keys:manage');
    await checkScreen(c.page, 'frame-phone-dark');
    await expectClean(c, api, [narrow.key]);
  });
});
