// Bull Board at /admin/queues: only with OPERATOR_TOKEN (Basic password or Bearer), never with
// an organization's API key, absent when the token is unset; in a real browser it lists the
// queue of every job kind.
import { expect } from 'chai';
import { JOB_KINDS } from '../../src/jobs/kinds.js';
import { launchChromium } from '../support/browser.js';
import { createTenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

const TOKEN = 'operator-token-for-tests-0123456789';

describe("the operators' board: /admin/queues", function () {
  this.timeout(60000);
  let api: ApiProcess;

  before(async () => {
    api = await startApi({ BASE_PATH: '/api/v1', OPERATOR_TOKEN: TOKEN });
  });

  after(() => api?.stop());

  const board = () => `${api.url}/admin/queues`;
  const basic = (password: string) =>
    `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`;

  it('asks for a credential, refuses anything but the token, and opens with it', async () => {
    const none = await request<{ message: string }>(board());
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.match(/^Basic realm="operators"/);
    const tenant = await createTenant(testDb());
    for (const authorization of [
      tenant.key,
      `Bearer ${tenant.key}`,
      basic(tenant.key),
      basic(`${TOKEN}x`),
      `Bearer ${TOKEN.slice(0, -1)}`,
    ]) {
      const res = await request<{ message: string }>(board(), { headers: { authorization } });
      expect(res.status, authorization).to.equal(403);
      expect(res.body.message).to.be.a('string');
    }
    for (const authorization of [`Bearer ${TOKEN}`, basic(TOKEN)]) {
      const res = await request(board(), { headers: { authorization } });
      expect(res.status, authorization).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/text\/html/);
    }
  });

  it('is not there at all without OPERATOR_TOKEN', async () => {
    const plain = await startApi();
    try {
      expect((await request(`${plain.url}/admin/queues`)).status).to.equal(404);
    } finally {
      await plain.stop();
    }
  });

  it('lists the queue of every job kind, in a browser', async () => {
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({
        httpCredentials: { username: 'operator', password: TOKEN },
      });
      const page = await context.newPage();
      const response = await page.goto(board(), { waitUntil: 'networkidle' });
      expect(response?.status()).to.equal(200);
      for (const kind of Object.values(JOB_KINDS)) {
        await page.waitForSelector(`text=${kind.queue}`, { timeout: 20000 });
      }
      await page.screenshot({ path: 'test-output/bull-board.png' });
    } finally {
      await browser.close();
    }
  });
});
