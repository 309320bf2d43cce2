// Prometheus metrics: the API and the worker each serve /metrics on their own METRICS_PORT
// (never on the API port), and the counters move by what was done during a real run.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import { prometheusSamples } from '../support/metrics.js';
import {
  freePort,
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from '../support/webhook-receiver.js';

describe('metrics: GET /metrics on METRICS_PORT @cluster', () => {
  let api: ApiProcess;
  let worker: ServiceProcess;
  let apiMetrics: string;
  let workerMetrics: string;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    const [apiPort, workerPort] = [await freePort(), await freePort()];
    apiMetrics = `http://127.0.0.1:${apiPort}/metrics`;
    workerMetrics = `http://127.0.0.1:${workerPort}/metrics`;
    [api, worker] = await Promise.all([
      startApi({ ...WEBHOOK_TEST_ENV, METRICS_PORT: String(apiPort) }),
      startWorker({ ...WEBHOOK_TEST_ENV, METRICS_PORT: String(workerPort) }),
    ]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  async function scrape(url: string): Promise<{ text: string; values: Map<string, number> }> {
    const res = await fetch(url);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    const text = await res.text();
    return { text, values: prometheusSamples(text) };
  }

  const value = (m: Map<string, number>, key: string) => m.get(key) ?? 0;

  it('moves the counters by what was done, in the API and in the worker', async () => {
    const apiBefore = (await scrape(apiMetrics)).values;
    const workerBefore = (await scrape(workerMetrics)).values;

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await client.createRun(createBody(tenant));
      expect(res.status).to.equal(200);
      ids.push(res.body.id as string);
    }
    for (const id of ids) {
      await waitFor(
        'start',
        async () => (await testDb()('workflow_runs').where({ id }).first()).status === 'active',
      );
    }
    expect(
      (await client.completeStep({ workflow_run_id: ids[0], step_name: 'Request' })).status,
    ).to.equal(202);
    await waitFor(
      'step 2',
      async () =>
        (await testDb()('workflow_runs').where({ id: ids[0] }).first()).current_step_name ===
        'Approval',
    );
    expect((await client.cancelRun({ workflow_run_id: ids[1] })).status).to.equal(200);

    const apiAfter = await scrape(apiMetrics);
    const a = apiAfter.values;
    expect(
      value(a, 'wrs_runs_created_total') - value(apiBefore, 'wrs_runs_created_total'),
    ).to.equal(5);
    expect(
      value(a, 'wrs_run_events_total{type="run.created"}') -
        value(apiBefore, 'wrs_run_events_total{type="run.created"}'),
    ).to.equal(5);
    expect(
      value(a, 'wrs_run_changes_total{type="cancel"}') -
        value(apiBefore, 'wrs_run_changes_total{type="cancel"}'),
    ).to.equal(1);
    const created =
      'wrs_http_request_duration_seconds_count{route="/create-workflow-run",method="POST",status="200"}';
    expect(value(a, created) - value(apiBefore, created)).to.equal(5);
    expect(value(a, 'wrs_dependency_up{dependency="mysql"}')).to.equal(1);
    expect(value(a, 'wrs_dependency_up{dependency="redis"}')).to.equal(1);
    // Both of the API's pools: the main one and the one for new runs' batches, which the creates
    // above used (and which the warm-up opened whole before /readyz said 200).
    for (const pool of ['main', 'batch']) {
      for (const state of ['used', 'free', 'pending']) {
        expect(a.has(`wrs_db_pool_connections{pool="${pool}",state="${state}"}`), pool).to.equal(
          true,
        );
      }
    }
    expect(value(a, 'wrs_db_pool_connections{pool="batch",state="free"}')).to.equal(4);
    expect(a.has('process_cpu_user_seconds_total')).to.equal(true);

    const w = (await scrape(workerMetrics)).values;
    const moved = (key: string) => value(w, key) - value(workerBefore, key);
    expect(moved('wrs_run_changes_total{type="start"}')).to.equal(5);
    expect(moved('wrs_run_events_total{type="run.started"}')).to.equal(5);
    expect(moved('wrs_run_changes_total{type="complete_step"}')).to.equal(1);
    expect(moved('wrs_run_events_total{type="step.completed"}')).to.equal(1);
    for (const kind of ['applyRuns', 'stepDue', 'webhookDelivery']) {
      expect(w.has(`wrs_jobs{kind="${kind}",state="waiting"}`), kind).to.equal(true);
    }
    expect(w.get('wrs_jobs{kind="stepDue",state="delayed"}')).to.be.at.least(1); // due timers
    // The insights' fold, the only worker here: every event above (5 created, 5 started, a step
    // completed, a cancel) folded, and nothing left to fold.
    const folded = await waitFor('the events folded', async () => {
      const now = (await scrape(workerMetrics)).values;
      const n =
        value(now, 'wrs_insights_events_folded_total') -
        value(workerBefore, 'wrs_insights_events_folded_total');
      return n >= 12 && value(now, 'wrs_insights_fold_lag_events') === 0 ? n : undefined;
    });
    expect(folded).to.equal(12);

    // Bounded labels: no run, organization or key ever appears in a metric.
    for (const secret of [...ids, tenant.orgId, tenant.key]) {
      expect(apiAfter.text).not.to.include(secret);
    }
  });

  it('counts webhook deliveries made, and attempts by outcome', async () => {
    const receiver = await WebhookReceiver.start();
    receiver.set('/bad', { kind: 'fail', status: 500 });
    const endpoints: string[] = [];
    try {
      for (const path of ['/ok', '/bad']) {
        const res = await client.call<{ id: string }>('/create-webhook-endpoint', {
          url: receiver.url(path),
          events: ['run.created'],
        });
        expect(res.status).to.equal(200);
        endpoints.push(res.body.id);
      }
      const before = (await scrape(workerMetrics)).values;
      for (let i = 0; i < 3; i++) await client.createRun(createBody(tenant));
      await waitFor(
        'deliveries and failed attempts',
        () => receiver.accepted('/ok').length === 3 && receiver.at('/bad').length >= 3,
      );
      const after = await waitFor('the counters', async () => {
        const w = (await scrape(workerMetrics)).values;
        const moved = (key: string) => value(w, key) - value(before, key);
        // The receiver sees an attempt before the worker records (and counts) its outcome.
        const delivered = moved('wrs_webhook_attempts_total{outcome="delivered"}');
        const retried = moved('wrs_webhook_attempts_total{outcome="retry"}');
        if (delivered === 3 && retried >= 3) return moved;
        // Not yet: what a timeout reports, should it come to that.
        throw new Error(
          `attempts counted: delivered ${delivered}, retry ${retried}, failed ${moved('wrs_webhook_attempts_total{outcome="failed"}')}; ` +
            `the receiver saw ${receiver.at('/ok').length} on /ok (${receiver.accepted('/ok').length} accepted), ${receiver.at('/bad').length} on /bad`,
        );
      });
      expect(after('wrs_webhook_deliveries_created_total')).to.equal(6);
      expect(after('wrs_webhook_attempts_total{outcome="retry"}')).to.be.at.least(3);
      expect(after('wrs_webhook_attempt_duration_seconds_count')).to.be.at.least(6);
    } finally {
      for (const id of endpoints) await client.call('/delete-webhook-endpoint', { id });
      await receiver.close();
    }
  });

  it('is not served on the API port', async () => {
    const res = await request(`${api.url}/metrics`, { key: tenant.key });
    expect(res.status).to.equal(404);
  });
});
