// Webhooks under faults: Redis flushed twice while events stream, and a worker killed with
// SIGKILL while its deliveries are in flight at a slow receiver. MySQL's outbox says what is
// owed, so every committed event still reaches the receiver (each webhook-id accepted once,
// as a de-duplicating receiver does), in history order per run, and the log says delivered.
import { expect } from 'chai';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import { testDb } from '../support/root-hooks.js';
import { driveRun, inPool, Ledger } from '../support/run-ledger.js';
import { waitFor } from '../support/wait.js';
import {
  bodyOf,
  verifySignature,
  WEBHOOK_TEST_ENV,
  WebhookReceiver,
} from '../support/webhook-receiver.js';

const RUNS = 40;
const CLIENTS = 6;

describe('fault: webhooks through a Redis flush and a killed worker', function () {
  this.timeout(120000);

  let redis: PrivateRedis;
  let api: ApiProcess;
  let workers: ServiceProcess[];
  let receiver: WebhookReceiver;
  let tenant: Tenant;
  let client: Client;
  let env: Record<string, string>;

  before(async () => {
    redis = await startPrivateRedis();
    receiver = await WebhookReceiver.start();
    env = { ...redis.env, ...WEBHOOK_TEST_ENV };
    [api, ...workers] = await Promise.all([startApi(env), startWorker(env), startWorker(env)]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), ...(workers ?? []).map((w) => w.stop())]);
    await receiver?.close();
    await redis?.stop();
  });

  it('delivers every committed event, in order per run', async () => {
    const endpoint = (
      await client.call<{ id: string; secret: string }>('/create-webhook-endpoint', {
        url: receiver.url('/drill'),
      })
    ).body;
    // Slow answers keep deliveries in flight, so the kill below lands on some.
    receiver.set('/drill', { kind: 'ok', delayMs: 150 });
    const ledger = new Ledger();
    let killedWith = 0;

    const faults = (async () => {
      await waitFor('a quarter of the runs', () => ledger.runs.size >= RUNS / 4, 30000);
      await redis.flushAll();
      await waitFor('half of the runs', () => ledger.runs.size >= RUNS / 2, 30000);
      await waitFor('deliveries in flight', () => receiver.inFlight('/drill') >= 1, 30000);
      killedWith = receiver.inFlight('/drill');
      await workers[0]!.stop('SIGKILL');
      workers[0] = await startWorker(env);
      await waitFor('three quarters of the runs', () => ledger.runs.size >= (3 * RUNS) / 4, 30000);
      await redis.flushAll();
    })();
    faults.catch(() => undefined); // awaited below

    const plans = Array.from({ length: RUNS }, (_, i) => i % 3);
    await inPool(plans, CLIENTS, (steps, i) => driveRun(client, tenant, ledger, `w${i}`, steps));
    await faults;
    expect(ledger.unexpected).to.deep.equal([]);
    expect(killedWith, 'deliveries in flight when the worker was killed').to.be.at.least(1);

    // What is owed: every event of the organization's runs after the endpoint was made.
    const owed = async () =>
      (await testDb()('run_events')
        .where({ organization_id: tenant.orgId })
        .orderBy(['run_id', 'seq'])) as Array<{ id: number; run_id: string; seq: number }>;
    await waitFor(
      'every event accepted by the receiver',
      async () => {
        const accepted = new Set(
          receiver.accepted('/drill').map((r) => String(r.headers['webhook-id'])),
        );
        return (await owed()).every((e) => accepted.has(`evt_${e.id}`));
      },
      60000,
      250,
    );

    const events = await owed();
    expect(events.length).to.be.at.least(RUNS * 2);
    const accepted = receiver.accepted('/drill');
    expect(accepted).to.have.length(events.length);
    const seqByRun = new Map<string, number[]>();
    for (const request of accepted) {
      const body = verifySignature(endpoint.secret, request);
      seqByRun.set(body.data.runId, [...(seqByRun.get(body.data.runId) ?? []), body.data.seq]);
    }
    for (const [runId, seqs] of seqByRun) {
      expect(seqs, `run ${runId} in history order`).to.deep.equal(seqs.map((_, i) => i + 1));
    }
    expect(new Set(accepted.map((r) => bodyOf(r).data.runId)).size).to.equal(ledger.runs.size);
    await waitFor('the log says delivered', async () => {
      const rows = await testDb()('webhook_deliveries')
        .where({ endpoint_id: endpoint.id })
        .whereNot({ status: 'delivered' })
        .count({ n: '*' });
      return Number((rows[0] as { n: number }).n) === 0;
    });
  });
});
