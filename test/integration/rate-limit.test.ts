// The per-key limit is one budget shared by every API process (counted in Redis), however the
// requests are spread over them: never more than the limit gets through, and little less.
import { expect } from 'chai';
import { createTenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

const LIMIT = 300;

describe('rate limit across API processes @cluster', () => {
  const apis: ApiProcess[] = [];

  before(async () => {
    // A one-day window, so that the test never straddles two windows.
    const env = { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: '86400000' };
    apis.push(...(await Promise.all([startApi(env), startApi(env)])));
    // Traffic only once both are ready, as a load balancer sends it: while an API warms up, its
    // own requests may hold up the rate limiter's Redis calls past their bound, and it then
    // lets requests through.
    for (const api of apis) await api.ready();
  });

  after(() => Promise.all(apis.map((api) => api.stop())));

  it('lets the budget through two processes, less at most a block per process, and no more', async () => {
    const tenant = await createTenant(testDb());
    const send = async (total: number) => {
      const statuses: number[] = [];
      let sent = 0;
      await Promise.all(
        Array.from({ length: 24 }, async (_, worker) => {
          while (sent < total) {
            sent++;
            const api = apis[worker % apis.length]!;
            const res = await request(`${api.url}/get-workflow-templates`, { key: tenant.key });
            statuses.push(res.status);
            if (res.status === 429) {
              expect(Number(res.headers.get('retry-after'))).to.be.within(1, 86_400);
              expect(res.body).to.have.property('message');
            } else {
              expect(res.status).to.equal(200);
            }
          }
        }),
      );
      expect(statuses).to.have.length(total);
      return statuses.filter((s) => s === 200).length;
    };
    // Exactly the budget: only places leased but unused are lost, at most a block (a hundredth
    // of the limit: 3) per process.
    const first = await send(LIMIT);
    expect(first).to.be.at.least(LIMIT - 2 * 3);
    // Then more: the two processes together never pass the limit.
    const second = await send(120);
    expect(first + second).to.be.at.most(LIMIT);
  });
});
