// A webhook backlog the reconciler sweeps while it drains: deliveries owed for longer than
// RECONCILE_AFTER_MS whose endpoint's turn still waits in Redis (a slow receiver here; after a
// Redis failover, a pause of seconds). The reconciler gives a turn to every endpoint MySQL says
// is owed, and must add no copy of a turn that waits: copies pile up ahead of the turns that
// carry each run's next delivery, and the queue keeps growing (the failover drill once saw
// deliveries all but stop). And a turn takes its endpoint's backlog in batches: two short
// trips to MySQL for many deliveries, not for each one.
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery.js';
import { testEnv } from '../support/env.js';
import { createTenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { prometheusSamples } from '../support/metrics.js';
import {
  freePort,
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

/** A histogram's count and sum, and its count at or below `le`, from a Prometheus page. */
async function histogram(url: string, name: string, le: string) {
  const samples = prometheusSamples(await (await fetch(url)).text());
  const read = (key: string) => samples.get(key) ?? 0;
  return {
    count: read(`${name}_count`),
    sum: read(`${name}_sum`),
    atMost: read(`${name}_bucket{le="${le}"}`),
  };
}

describe('webhooks: a backlog the reconciler sweeps @cluster', function () {
  this.timeout(90000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let receiver: WebhookReceiver;
  let queue: Queue;
  let workerMetrics: string;

  before(async () => {
    receiver = await WebhookReceiver.start();
    // A minute's backoff: a failed attempt's retry waits in Redis until redelivered.
    const env = { ...WEBHOOK_TEST_ENV, WEBHOOK_CONCURRENCY: '2', WEBHOOK_BACKOFF_BASE_MS: '60000' };
    const metricsPort = await freePort();
    workerMetrics = `http://127.0.0.1:${metricsPort}/metrics`;
    [api, worker] = await Promise.all([
      startApi(env),
      startWorker({ ...env, METRICS_PORT: String(metricsPort) }),
    ]);
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

  it('holds at most two turns of the endpoint, takes its backlog in batches, and delivers every event in order', async () => {
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
    const turnsBefore = await histogram(workerMetrics, 'wrs_webhook_turn_deliveries', '0');

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

    // While the backlog drains (several reconciler passes see it owed): the turns in Redis.
    let most = 0;
    const done = () => receiver.accepted('/slow').length >= events;
    while (!done()) {
      const counts = await queue.getJobCounts('wait', 'delayed', 'prioritized', 'active');
      most = Math.max(
        most,
        Object.values(counts).reduce((a, b) => a + b, 0),
      );
      await sleep(100);
    }
    await waitFor('every event delivered', done, 30000);
    // The endpoint's turn being worked, and one more kept for when it ends: whatever the
    // reconciler, the dispatcher and the turn itself asked for meanwhile.
    expect(most, 'turns in Redis while the backlog drained').to.be.at.most(2);

    // Turns that took something took many: the run.created events of all the runs at once,
    // then their run.started (a run's next waits for the one before it), not one per turn.
    // (A turn is counted when it ends, after its last batch is recorded.)
    const turns = await waitFor('the last turn counted', async () => {
      const now = await histogram(workerMetrics, 'wrs_webhook_turn_deliveries', '0');
      return now.sum - turnsBefore.sum >= events && now;
    });
    const taking = turns.count - turns.atMost - (turnsBefore.count - turnsBefore.atMost);
    expect(turns.sum - turnsBefore.sum, 'deliveries the turns took').to.equal(events);
    expect(taking, `turns that took the ${events} deliveries`).to.be.within(2, 8);

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
