// A create is answered after its commit and notified afterwards, with the notifications of
// batches committed meanwhile sent together. None may be lost on the way: every run of a burst
// of concurrent creates must start through its job alone, with the reconciler (the safety net
// for lost notifications) set too far out to help.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

const BURST = 600;
const CONCURRENCY = 48;

describe('notifications of created runs @cluster', () => {
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;

  before(async () => {
    const noReconcile = { RECONCILE_AFTER_MS: '86400000', RECONCILE_INTERVAL_MS: '3600000' };
    [api, worker] = await Promise.all([startApi(), startWorker(noReconcile)]);
    tenant = await createTenant(testDb());
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  it('starts every run of a burst of concurrent creates, by notifications alone', async () => {
    const client = new Client(api.url, tenant.key);
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < BURST) {
          next++;
          const res = await client.createRun(createBody(tenant));
          expect(res.status).to.equal(200);
          ids.push(res.body.id as string);
        }
      }),
    );
    expect(new Set(ids).size).to.equal(BURST);

    const notStarted = async () =>
      (await testDb()('workflow_runs')
        .whereIn('id', ids)
        .whereNot('status', 'active')
        .pluck('id')) as string[];
    await waitFor('every run to start', async () => (await notStarted()).length === 0, 20_000);
    expect(await notStarted()).to.deep.equal([]);
  });
});
