// A webhook backlog the reconciler sweeps while it drains: deliveries owed for longer than
// RECONCILE_AFTER_MS whose jobs still wait in Redis (a slow receiver here; after a Redis
// failover, a pause of seconds). The reconciler enqueues what MySQL says is owed, and must add
// no copy of a job that waits: copies pile up ahead of each run's next delivery, which is
// enqueued only when the one before it is delivered, so every chain moves one step per pass
// through a queue that keeps growing (the failover drill saw deliveries all but stop).
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery.js';
import { testEnv } from '../support/env.js';
import { createTenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { sleep, waitFor } from '../support/wait.js';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from '../support/webhook-receiver.js';

const RUNS = 30;
/** Each delivery takes this long at the receiver, two at a time: about 6 s for the backlog. */
const RECEIVER_MS = 200;

describe('webhooks: a backlog the reconciler sweeps @cluster', function () {
  this.timeout(90000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let receiver: WebhookReceiver;
  let queue: Queue;

  before(async () => {
    receiver = await WebhookReceiver.start();
    // A minute's backoff: a failed attempt's retry waits in Redis until redelivered.
    const env = { ...WEBHOOK_TEST_ENV, WEBHOOK_CONCURRENCY: '2', WEBHOOK_BACKOFF_BASE_MS: '60000' };
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
    queue = new Queue(webhookDeliveryJob.queue, {
      connection: { url: testEnv.REDIS_URL },
      prefix: testEnv.QUEUE_PREFIX,
    });
  });

  after(async () => {
    await queue?.close();
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  it('holds at most one job per delivery owed, and delivers every event in order', async () => {
    const tenant = await createTenant(testDb(), {
      name: 'Backlogged',
      pages: [{ name: 'Only', inputFields: [] }],
    });
    const client = new Client(api.url, tenant.key);
    const endpoint = await client.call('/create-webhook-endpoint', {
      url: receiver.url('/slow'),
      events: ['run.created', 'run.started'],
    });
    expect(endpoint.status, endpoint.text).to.equal(200);
    receiver.behaviour.set('/slow', { kind: 'ok', delayMs: RECEIVER_MS });

    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await client.createRun({
        workflow_template_id: tenant.template.id,
        input_fields: {},
      });
      expect(res.status, res.text).to.equal(200);
      runIds.push(String(res.body.id));
    }
    const events = RUNS * 2;

    // While the backlog drains (several reconciler passes see it owed): the jobs in Redis,
    // against the deliveries MySQL still owes, read at once after them.
    let most = { jobs: 0, owed: 0 };
    const done = () => receiver.accepted('/slow').length >= events;
    while (!done()) {
      const counts = await queue.getJobCounts('wait', 'delayed', 'prioritized', 'active');
      const jobs = Object.values(counts).reduce((a, b) => a + b, 0);
      const [row] = (await testDb()('webhook_deliveries')
        .where({ organization_id: tenant.orgId, status: 'pending' })
        .count({ n: '*' })) as Array<{ n: number | string }>;
      if (jobs - Number(row?.n) > most.jobs - most.owed) most = { jobs, owed: Number(row?.n) };
      await sleep(100);
    }
    await waitFor('every event delivered', done, 30000);
    // A job per owed delivery at most, give or take the two the worker holds: a job stays
    // active for a moment after its delivery is recorded, and a delivery can be recorded
    // between the two reads (WEBHOOK_CONCURRENCY 2 each).
    expect(most.jobs, `jobs in Redis while ${most.owed} deliveries were owed`).to.be.at.most(
      most.owed + 4,
    );

    // In order per run: run.created before run.started.
    for (const runId of runIds) {
      const types = receiver
        .accepted('/slow')
        .map((r) => JSON.parse(r.body) as { type: string; data: { runId: string } })
        .filter((b) => b.data.runId === runId)
        .map((b) => b.type);
      expect(types, runId).to.deep.equal(['run.created', 'run.started']);
    }
  });

  it('sends at once a delivery redelivered while its retry waits out the backoff', async () => {
    const tenant = await createTenant(testDb(), {
      name: 'Redelivered',
      pages: [{ name: 'Only', inputFields: [] }],
    });
    const client = new Client(api.url, tenant.key);
    const endpoint = await client.call('/create-webhook-endpoint', {
      url: receiver.url('/later'),
      events: ['run.created'],
    });
    expect(endpoint.status, endpoint.text).to.equal(200);
    receiver.behaviour.set('/later', { kind: 'fail', status: 500 });
    const run = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    expect(run.status, run.text).to.equal(200);
    await waitFor('the first attempt', () => receiver.at('/later').length === 1, 10000);

    const owed = await waitFor('the retry scheduled', async () => {
      const res = await client.call<Array<{ id: string; attempts: unknown[] }>>(
        `/get-webhook-deliveries?run_id=${String(run.body.id)}&status=pending`,
      );
      return res.body[0]?.attempts.length === 1 && res.body[0];
    });
    receiver.behaviour.set('/later', { kind: 'ok' });
    const asked = Date.now();
    const again = await client.call('/redeliver-webhook', { delivery_id: owed.id });
    expect(again.status, again.text).to.equal(202);
    await waitFor(
      'redelivered now, not a minute later',
      () => receiver.accepted('/later').length === 1,
      10000,
    );
    expect(Date.now() - asked).to.be.below(10000);
    expect(receiver.at('/later')).to.have.length(2);
  });
});
