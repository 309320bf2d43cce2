// Scenario 2: FLUSHALL Redis in the middle of a stream of creates and completes; every run
// still reaches the state its accepted requests imply. MySQL says what is owed: the reconciler
// must enqueue again whatever the flush threw away.
//
// The first flush is made to hit queued work for sure: the queue is paused (BullMQ's global
// pause, a flag in Redis) until the organization's turn is queued with changes piled up behind
// it in MySQL, and the flush removes the turn and the flag together, leaving those changes
// with no job at all. The second flush lands wherever the stream happens to be.
import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { openRunsQueue } from '../support/queue.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import { testDb } from '../support/root-hooks.js';
import { driveRun, expectLedgerApplied, inPool, Ledger } from '../support/run-ledger.js';
import { waitFor } from '../support/wait.js';

const RUNS = 60;
const CLIENTS = 10;
/** Runs created just before the last flush, with no request after them. */
const LAST = 5;

describe('fault: FLUSHALL of Redis during a stream of requests @cluster', function () {
  this.timeout(90000);

  let redis: PrivateRedis;
  let queue: Queue;
  let api: ApiProcess;
  let workers: ServiceProcess[];
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    redis = await startPrivateRedis();
    queue = openRunsQueue(redis);
    const env = redis.env;
    [api, ...workers] = await Promise.all([startApi(env), startWorker(env), startWorker(env)]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), ...(workers ?? []).map((w) => w.stop())]);
    await queue?.close();
    await redis?.stop();
  });

  it('brings every run to the state its accepted requests imply', async () => {
    const ledger = new Ledger();
    let flushedOwed = 0;
    const owedRuns = async () => {
      const [rows] = (await testDb().raw(
        'SELECT COUNT(*) AS n FROM workflow_runs WHERE organization_id = ? AND pending_since IS NOT NULL',
        [tenant.orgId],
      )) as [Array<{ n: number }>];
      return Number(rows[0]!.n);
    };

    const flusher = (async () => {
      await waitFor('a third of the runs', () => ledger.runs.size >= RUNS / 3, 30000);
      await queue.pause();
      await waitFor(
        'changes to pile up behind a queued turn',
        async () => {
          const counts = await queue.getJobCounts('wait', 'prioritized');
          const owed = await owedRuns();
          return counts.wait! + counts.prioritized! >= 1 && owed >= 5 && owed;
        },
        30000,
      ).then((owed) => (flushedOwed = owed));
      await redis.flushAll();

      await waitFor('two thirds of the runs', () => ledger.runs.size >= (2 * RUNS) / 3, 30000);
      await redis.flushAll();
    })();
    flusher.catch(() => undefined); // awaited below, once the clients are done

    // Each client creates a run, then completes 0, 1 or 2 of its steps.
    const plans = Array.from({ length: RUNS }, (_, i) => i % 3);
    await inPool(plans, CLIENTS, (steps, i) => driveRun(client, tenant, ledger, `f${i}`, steps));
    await flusher;

    // A last flush with changes owed and no request after it: a later request of the
    // organization would give it a turn that applies every change it owes, so here nothing
    // but the reconciler can.
    await queue.pause();
    await Promise.all(
      Array.from({ length: LAST }, (_, i) => driveRun(client, tenant, ledger, `last${i}`, 0)),
    );
    await waitFor('the last runs to wait behind the paused queue', async () => {
      return (await owedRuns()) >= LAST;
    });
    await redis.flushAll();

    expect(flushedOwed, 'changes left with no job by the first flush').to.be.at.least(5);
    expect(ledger.runs.size).to.equal(RUNS + LAST);
    await expectLedgerApplied(testDb(), ledger, { exact: true });
    expect(ledger.completions).to.equal(RUNS);
    expect(workers.every((w) => w.running)).to.equal(true);
  });
});
