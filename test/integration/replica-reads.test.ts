// Reads from a MariaDB replica (DATABASE_REPLICA_URLS), with read-your-writes across API
// processes. The harness starts its own primary and replica (test/support/mariadb-pair.ts):
// the machine's MariaDB writes no binary log. Skipped, with a message, where mariadbd is
// missing.
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { createDb, type Db } from '../../src/db.js';
import { migrate } from '../../src/migrate.js';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import { MariadbPair, mariadbPairMissing } from '../support/mariadb-pair.js';
import { startApi, type ApiProcess } from '../support/processes.js';

type Json = Record<string, unknown>;

describe('reads from a replica, with read-your-writes', function () {
  this.timeout(120000);
  let pair: MariadbPair;
  let primaryDb: Db;
  let one: ApiProcess;
  let two: ApiProcess;
  let tenant: Tenant;

  before(async function () {
    const missing = mariadbPairMissing();
    if (missing) {
      process.stderr.write(`\n  SKIPPED: the replica tests need a MariaDB server: ${missing}\n\n`);
      this.skip();
    }
    pair = await MariadbPair.start();
    const config = loadConfig({ DATABASE_URL: pair.url('primary') });
    await migrate(config);
    primaryDb = createDb(config);
    tenant = await createTenant(primaryDb);
    await pair.waitCaughtUp();
    const env = { ...pair.env, REPLICA_CHECK_INTERVAL_MS: '250' };
    [one, two] = await Promise.all([startApi(env), startApi(env)]);
    await Promise.all([one, two].map((api) => api.waitForLine(/"msg":"replica in service"/)));
  });

  after(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await primaryDb?.destroy();
    await pair?.stop();
  });

  async function create(api: ApiProcess, of: Tenant = tenant): Promise<string> {
    const res = await request<Json>(`${api.url}/create-workflow-run`, {
      key: of.key,
      body: createBody(of),
    });
    expect(res.status, res.text).to.equal(200);
    return res.body.id as string;
  }

  /** The newest run listed, and the run in full, read through `api`. */
  async function readBack(api: ApiProcess, id: string, of: Tenant = tenant): Promise<void> {
    const list = await request<Json[]>(`${api.url}/get-workflow-runs?limit=1`, { key: of.key });
    expect(list.status, list.text).to.equal(200);
    expect(list.body[0]?.id, 'the newest run listed').to.equal(id);
    const full = await request<Json>(`${api.url}/get-workflow-run?id=${id}`, { key: of.key });
    expect(full.status, full.text).to.equal(200);
    expect(full.body.id).to.equal(id);
  }

  /** SELECTs the replica was sent while `work` ran. */
  async function replicaSelects(work: () => Promise<void>): Promise<number> {
    const before = pair.replicaStatus('Com_select');
    await work();
    return pair.replicaStatus('Com_select') - before;
  }

  it('a run created through one process is listed and read in full through another at once, 1,000 times', async () => {
    const selects = await replicaSelects(async () => {
      for (let i = 0; i < 1000; i++) {
        const id = await create(one);
        try {
          await readBack(two, id);
        } catch (err) {
          throw new Error(`round ${i + 1}: ${(err as Error).message}`, { cause: err });
        }
      }
    });
    // Two reads a round that may go to the replica: most of them did (each is a wait and a
    // read there, so about 4 SELECTs a round when they all do).
    expect(selects, 'SELECTs the replica served').to.be.above(1000);
  });

  it("with the replica's SQL thread stopped, reads are right (served by the primary), then return to the replica", async () => {
    pair.stopReplicaSql();
    try {
      const whileStopped = await replicaSelects(async () => {
        for (let i = 0; i < 100; i++) {
          const id = await create(i % 2 ? one : two);
          await readBack(i % 2 ? two : one, id);
        }
      });
      // The replica is taken out after a few timed-out waits: afterwards only the periodic
      // checks (one every 250 ms per process) reach it, not the 200 reads.
      expect(whileStopped, 'SELECTs the replica was sent while stopped').to.be.below(100);
    } finally {
      pair.startReplicaSql();
    }
    await Promise.all(
      [one, two].map((api) =>
        waitForNewLine(api, /"msg":"replica in service"/, countLines(api, /replica in service/)),
      ),
    );
    const afterStart = await replicaSelects(async () => {
      for (let i = 0; i < 100; i++) {
        const id = await create(one);
        await readBack(two, id);
      }
    });
    expect(afterStart, 'SELECTs the replica served once started again').to.be.above(200);
  });

  it('with the replica killed (-9), no request fails; reads return to it once it is back', async () => {
    const inService = [one, two].map((api) => countLines(api, /replica in service/));
    // Reads run on both processes all along: the kill lands while some are under way on the
    // replica (pooled connections) and before any check has noticed it.
    // Each loop its own organization, so that the newest run listed is the loop's own.
    const tenants = [tenant, ...(await Promise.all([1, 2, 3].map(() => createTenant(primaryDb))))];
    await pair.waitCaughtUp();
    let running = true;
    let rounds = 0;
    const loops = tenants.map(async (of, n) => {
      while (running) {
        const id = await create(n % 2 ? one : two, of);
        await readBack(n % 2 ? two : one, id, of);
        rounds++;
      }
    });
    const stopAll = () => {
      running = false;
      return Promise.all(loops);
    };
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await pair.killReplica();
      await new Promise((resolve) => setTimeout(resolve, 2000));
    } finally {
      await stopAll();
    }
    expect(rounds).to.be.above(50);
    await pair.restartReplica();
    await Promise.all(
      [one, two].map((api, i) => waitForNewLine(api, /"msg":"replica in service"/, inService[i]!)),
    );
    const afterRestart = await replicaSelects(async () => {
      for (let i = 0; i < 100; i++) {
        const id = await create(two);
        await readBack(one, id);
      }
    });
    expect(afterRestart, 'SELECTs the replica served once back').to.be.above(200);
  });
});

function countLines(api: ApiProcess, re: RegExp): number {
  return api.lines.filter((line) => re.test(line)).length;
}

/** Waits for a line matching `re` after the first `seen` such lines. */
async function waitForNewLine(
  api: ApiProcess,
  re: RegExp,
  seen: number,
  timeoutMs = 30000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (countLines(api, re) <= seen) {
    if (Date.now() > end) throw new Error(`no new line matching ${re} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
