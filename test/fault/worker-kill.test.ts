// Scenario 1: kill -9 a worker while it holds jobs; a second worker finishes them all, and
// each step is applied once, even when the dead worker's last write reaches MySQL late.
//
// Worker A talks to MySQL through a proxy that holds back its guarded UPDATEs, so A takes the
// jobs, reads the runs and then hangs with every job in hand and nothing applied. It is
// killed with SIGKILL; worker B takes the work over (stalled jobs, reconciler). Once B has
// applied the starts and a later step completion, the proxy delivers A's held UPDATEs: a
// write from a dead process landing late. The applied_seq guard must make it match nothing.
import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { testEnv } from '../support/env.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { openRunsQueue } from '../support/queue.js';
import { RedisServer } from '../support/redis-server.js';
import { testDb } from '../support/root-hooks.js';
import {
  completeNextStep,
  createRun,
  expectLedgerApplied,
  Ledger,
  ledgerProblems,
  storedRuns,
  type ToldRun,
} from '../support/run-ledger.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';
import type { RunDocument } from '../../src/runs/run-record.js';

const RUNS = 30;

describe('fault: a worker killed with -9 while it holds jobs', function () {
  this.timeout(90000);

  let redis: RedisServer;
  let mysqlProxy: TcpProxy;
  let queue: Queue;
  let api: ApiProcess;
  let workerA: ServiceProcess;
  let workerB: ServiceProcess | undefined;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    redis = await RedisServer.start();
    const db = new URL(testEnv.DATABASE_URL!);
    mysqlProxy = await TcpProxy.start({ host: db.hostname, port: Number(db.port || 3306) });
    queue = openRunsQueue(redis);
    const env = { REDIS_URL: redis.url };
    [api, workerA] = await Promise.all([
      startApi(env),
      // Worker A only holds jobs: its own reconciler is kept out of the way, so the jobs it
      // holds are exactly the ones the API enqueued.
      startWorker({
        ...env,
        DATABASE_URL: mysqlProxy.urlFor(testEnv.DATABASE_URL!),
        RECONCILE_INTERVAL_MS: '3600000',
      }),
    ]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), workerA?.stop('SIGKILL'), workerB?.stop()]);
    await queue?.close();
    await mysqlProxy?.close();
    await redis?.stop();
  });

  it('finishes every held job in a second worker, applying each step once', async () => {
    const ledger = new Ledger();
    // From here on worker A's writes stop at the proxy (its reads still pass).
    mysqlProxy.holdFrom((chunk) => chunk.includes('UPDATE workflow_runs'));
    const created = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => createRun(client, tenant, ledger, `k${i}`)),
    );
    const runs = created.filter((r): r is ToldRun => r !== undefined);
    expect(ledger.unexpected).to.deep.equal([]);

    await waitFor('worker A to hold every job with its writes stuck', async () => {
      const counts = await queue.getJobCounts('active', 'wait');
      // A job names a batch of runs, so "every job" is every job the API enqueued: none waits.
      return counts.active! > 0 && counts.wait === 0 && mysqlProxy.holding > 0;
    });
    const before = await storedRuns(
      testDb(),
      runs.map((r) => r.id),
    );
    expect([...before.values()].filter((r) => r.applied_seq !== 0)).to.deep.equal([]);

    expect(await workerA.stop('SIGKILL')).to.equal(null);
    workerB = await startWorker({ REDIS_URL: redis.url });
    await expectLedgerApplied(testDb(), ledger, { exact: true, timeoutMs: 30000 });

    // Move every run on (step 0 completed, step 1 active) before the dead worker's writes land.
    const giveUpAt = Date.now() + 30000;
    await Promise.all(runs.map((run) => completeNextStep(client, tenant, run, ledger, giveUpAt)));
    await expectLedgerApplied(testDb(), ledger, { exact: true });
    const seen = await storedRuns(
      testDb(),
      runs.map((r) => r.id),
    );

    const late = await mysqlProxy.releaseHeld();
    expect(late, 'held writes of the dead worker').to.be.greaterThan(0);
    // The late writes have been executed by MySQL; they must have changed nothing.
    expect(await ledgerProblems(testDb(), ledger, { exact: true })).to.deep.equal([]);
    const after = await storedRuns(
      testDb(),
      runs.map((r) => r.id),
    );
    for (const run of runs) {
      const earlier = seen.get(run.id)!;
      const later = after.get(run.id)!;
      const stepEarlier = (JSON.parse(earlier.run_json) as RunDocument).steps[0]!;
      const stepLater = (JSON.parse(later.run_json) as RunDocument).steps[0]!;
      expect(stepLater.completed_at, `step 0 of ${run.id} completed once`).to.equal(
        stepEarlier.completed_at,
      );
      expect(later.last_activity.getTime(), `last activity of ${run.id}`).to.equal(
        earlier.last_activity.getTime(),
      );
    }

    // And the runs still finish normally.
    await Promise.all(runs.map((run) => completeNextStep(client, tenant, run, ledger, giveUpAt)));
    await expectLedgerApplied(testDb(), ledger, { exact: true });
    expect(ledger.completions).to.equal(2 * RUNS);
  });
});
