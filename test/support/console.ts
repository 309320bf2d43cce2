// The console in a real browser (Debian's chromium driven by playwright-core), against a real
// API: a page that records every request it makes and every message it logs, so a test can
// hold the console to its promises — nothing from another host, the key in no URL and no log,
// every API answer it read described by the API document — plus the checks every screen gets:
// axe-core's serious and critical rules, no sideways scrolling, and a screenshot under
// test-output/.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertDescribed } from './api-document.js';
import type { ApiProcess } from './processes.js';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Every URL the page asked for. */
  requests: string[];
  /** Every console message and page error. */
  messages: string[];
  /** API answers that the API document does not describe (should stay empty). */
  undescribed: string[];
  /** API answers as the console received them: "GET /get-workflow-runs 200". */
  answers: string[];
  /** Answers whose body the browser no longer held when read (the page had moved on). */
  unread: string[];
  /** Resolves once every answer seen so far has been checked against the API document. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** A fresh browser context (its own sessionStorage) on the console's page. */
export async function openConsole(
  browser: Browser,
  api: ApiProcess,
  options: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? DESKTOP,
    colorScheme: options.colorScheme ?? 'light',
    timezoneId: 'Europe/Paris',
    locale: 'en-GB',
  });
  const page = await context.newPage();
  const requests: string[] = [];
  const messages: string[] = [];
  const undescribed: string[] = [];
  const answers: string[] = [];
  const unread: string[] = [];
  const checks: Array<Promise<void>> = [];
  page.on('request', (req) => requests.push(req.url()));
  page.on('console', (message) => messages.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => messages.push(`pageerror: ${error.message}`));
  page.on('response', (res) => {
    const url = new URL(res.url());
    const path = url.pathname.slice(api.basePath.length);
    const type = res.headers()['content-type'] ?? '';
    if (!type.startsWith('application/json') || path.startsWith('/console')) return;
    const method = res.request().method();
    answers.push(`${method} ${path} ${res.status()}`);
    checks.push(
      res.json().then(
        (body: unknown) =>
          assertDescribed(api.url, method, path, res.status(), body).catch(
            (error: Error) => void undescribed.push(error.message),
          ),
        // The page went on before its body was read here (the browser drops a left page's
        // bodies): that answer goes unchecked, the next ones of its kind are.
        () => void unread.push(`${method} ${path}`),
      ),
    );
  });
  await page.goto(`${api.url}/console`);
  return {
    page,
    context,
    requests,
    messages,
    undescribed,
    answers,
    unread,
    settled: async () => {
      await Promise.all(checks);
    },
    close: async () => {
      await Promise.all(checks);
      await context.close();
    },
  };
}

/** Signs in with the key through the sign-in form, and waits for the console's frame. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** axe-core's serious and critical violations on the page as it is now (none expected). */
export async function seriousViolations(page: Page): Promise<string[]> {
  // evaluate runs through the debugging protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<AxeResults> } }).axe;
    interface AxeResults {
      violations: Array<{
        id: string;
        impact: string | null;
        help: string;
        nodes: Array<{ target: unknown[] }>;
      }>;
    }
    const results = await axe.run();
    return results.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => String(n.target)).join(', ')})`,
      );
  });
  return found;
}

/** Whether the page scrolls sideways at its viewport (it must not). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(
    () => document.documentElement.scrollWidth > document.documentElement.clientWidth,
  );
}

/**
 * The checks every screen gets, at the size the page has: no serious or critical axe-core
 * violation, no sideways scrolling, and a screenshot as test-output/console-<name>.png.
 */
export async function checkScreen(page: Page, name: string): Promise<void> {
  expect(await seriousViolations(page), `${name}: axe-core serious/critical`).to.deep.equal([]);
  expect(await scrollsSideways(page), `${name}: scrolls sideways`).to.equal(false);
  mkdirSync('test-output', { recursive: true });
  await page.screenshot({ path: `test-output/console-${name}.png`, fullPage: true });
}

/**
 * What the console must never do, checked over everything a page recorded: ask another host,
 * put the key in a URL or a log message, or read an answer the API document does not describe.
 */
export async function expectClean(
  recorded: ConsolePage,
  api: ApiProcess,
  keys: string[],
): Promise<void> {
  await recorded.settled();
  const host = `127.0.0.1:${api.port}`;
  const elsewhere = recorded.requests.filter((url) => {
    const parsed = new URL(url);
    return !['data:', 'blob:'].includes(parsed.protocol) && parsed.host !== host;
  });
  expect(elsewhere, 'requests to another host').to.deep.equal([]);
  for (const key of keys) {
    expect(
      recorded.requests.filter((url) => url.includes(key)),
      'a URL holding the key',
    ).to.deep.equal([]);
    expect(
      recorded.messages.filter((m) => m.includes(key)),
      'a console message holding the key',
    ).to.deep.equal([]);
  }
  expect(recorded.undescribed, 'answers the API document does not describe').to.deep.equal([]);
}
