// GET /docs in a real browser (Debian's chromium driven by playwright-core): the page renders
// the API document, shows every path, and asks nothing of any other host. A screenshot is
// kept under test-output/.
import { mkdirSync } from 'node:fs';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';

describe('the docs page: GET /docs', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let browser: Browser;

  before(async () => {
    api = await startApi({ BASE_PATH: '/api/v1' });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('renders every path of the API document, from this service alone', async () => {
    const apiDocument = (
      await request<{ paths: Record<string, unknown> }>(`${api.url}/openapi.json`)
    ).body;
    const paths = Object.keys(apiDocument.paths);
    expect(paths.length).to.be.greaterThan(5);

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const elsewhere: string[] = [];
    const failed: string[] = [];
    page.on('request', (req) => {
      const url = new URL(req.url());
      if (!['blob:', 'data:'].includes(url.protocol) && url.host !== `127.0.0.1:${api.port}`) {
        elsewhere.push(req.url());
      }
    });
    page.on('requestfailed', (req) => failed.push(req.url()));
    const response = await page.goto(`${api.url}/docs`, { waitUntil: 'networkidle' });
    expect(response?.status()).to.equal(200);
    expect(response?.headers()['content-security-policy']).to.include("default-src 'none'");
    // Redoc has rendered once the operations are on the page.
    await page.waitForSelector('text=Create a workflow run from a template', { timeout: 30000 });
    const text = await page.evaluate(() => document.body.innerText);
    for (const path of paths) expect(text, path).to.include(path);
    mkdirSync('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/docs.png', fullPage: false });
    expect(elsewhere, 'requests to other hosts').to.deep.equal([]);
    expect(failed, 'failed requests').to.deep.equal([]);
    await page.close();
  });
});
