// Scenario 3: Redis unreachable for a while, then back. Meanwhile create and complete still
// answer 200/202 (the request is in MySQL) and /readyz answers 503; afterwards every accepted
// request is applied, and no process was restarted by hand.
//
// The processes reach a private redis-server through a TCP proxy. First the proxy cuts them
// off (Redis keeps its data); then the server itself is killed and started again empty.
import { expect } from 'chai';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { RedisServer } from '../support/redis-server.js';
import { testDb } from '../support/root-hooks.js';
import {
  completeNextStep,
  createRun,
  expectLedgerApplied,
  Ledger,
  type ToldRun,
} from '../support/run-ledger.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { sleep, waitFor } from '../support/wait.js';

const RUNS = 10;
/** Longer than RECONCILE_AFTER_MS + RECONCILE_INTERVAL_MS of the test environment. */
const OUTAGE_MS = 3000;

describe('fault: Redis unreachable for a while', function () {
  this.timeout(90000);

  let redis: RedisServer;
  let proxy: TcpProxy;
  let api: ApiProcess;
  let worker: ServiceProcess;
  let pids: number[];

  before(async () => {
    redis = await RedisServer.start();
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: redis.port });
    const env = { REDIS_URL: proxy.urlFor(redis.url) };
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
    pids = [api.pid, worker.pid];
  });

  // A failed test must not leave the next one without Redis.
  afterEach(async () => {
    proxy.resume();
    if (!redis.running) await redis.launch();
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await proxy?.close();
    await redis?.stop();
  });

  const readyz = async () => (await request(`${api.url}/readyz`)).status;

  /**
   * Runs with their start applied, then the outage: while it lasts, new runs are created and
   * a step of each earlier run is completed, all accepted. Then everything must be applied
   * and the runs must go on to the end.
   */
  async function throughOutage(goAway: () => Promise<void>, comeBack: () => Promise<void>) {
    // An organization of its own, so that MySQL can be compared with the ledger exactly.
    const tenant: Tenant = await createTenant(testDb());
    const client = new Client(api.url, tenant.key);
    const ledger = new Ledger();
    const tag = (i: number) => `${Date.now() % 100000}-${i}`;
    const ready = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => createRun(client, tenant, ledger, `a${tag(i)}`)),
    );
    await expectLedgerApplied(testDb(), ledger, { exact: true });

    await goAway();
    await waitFor('/readyz to answer 503', async () => (await readyz()) === 503);

    const created = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => createRun(client, tenant, ledger, `b${tag(i)}`)),
    );
    const giveUpAt = Date.now() + 10000;
    const completed = await Promise.all(
      ready.map((run) => completeNextStep(client, tenant, run!, ledger, giveUpAt)),
    );
    expect(ledger.unexpected, 'answers while Redis is away').to.deep.equal([]);
    expect(completed.every(Boolean), 'every completion accepted').to.equal(true);
    // The outage outlasts the reconciler's delay, so its passes meet the outage too.
    await sleep(OUTAGE_MS);
    expect(await readyz(), '/readyz while Redis is away').to.equal(503);

    await comeBack();
    await waitFor('/readyz to answer 200', async () => (await readyz()) === 200, 20000);
    await expectLedgerApplied(testDb(), ledger, { exact: true });

    // Fully recovered: the rest of every run goes through as usual.
    const runs = [...ready, ...created].filter((r): r is ToldRun => r !== undefined);
    const end = Date.now() + 20000;
    for (let step = 0; step < 2; step++) {
      await Promise.all(
        runs
          .filter((run) => run.completions.length < 2)
          .map((run) => completeNextStep(client, tenant, run, ledger, end)),
      );
    }
    await expectLedgerApplied(testDb(), ledger, { exact: true });
    expect(ledger.completions).to.equal(4 * RUNS);
    expect([api.pid, worker.pid], 'same processes').to.deep.equal(pids);
    expect(api.running && worker.running).to.equal(true);
  }

  it('accepts while cut off from Redis, and applies everything once it is back', () =>
    throughOutage(
      async () => proxy.pause(),
      async () => proxy.resume(),
    ));

  it('recovers when Redis is killed and comes back empty', () =>
    throughOutage(
      () => redis.kill(),
      () => redis.launch(),
    ));
});
