// The service on a three-node MariaDB Galera cluster (test/support/galera-cluster.ts), one
// writer node: what Galera asks of a schema and of the code, checked on a real cluster. The
// Galera pass (npm run test:galera) runs this directory; skipped, saying so, where mariadbd,
// rsync or the galera-4 provider is missing.
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { createConnection } from 'mysql2/promise';
import { createDb, writeTransaction, type Db } from '../../src/db.js';
import { registry } from '../../src/metrics/metrics.js';
import { migrate } from '../../src/migrate.js';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { GaleraCluster, galeraMissing } from '../support/galera-cluster.js';
import { request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { sleep, waitFor } from '../support/wait.js';

type Json = Record<string, unknown>;

describe('@galera the service on a three-node Galera cluster', function () {
  this.timeout(180000);
  let cluster: GaleraCluster;
  let db: Db;
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;

  before(async function () {
    const missing = galeraMissing();
    if (missing) {
      process.stderr.write(`\n  SKIPPED: the Galera tests need a Galera cluster: ${missing}\n\n`);
      this.skip();
    }
    cluster = await GaleraCluster.start();
    const config = loadConfig({ DATABASE_URL: cluster.url(0) });
    await migrate(config);
    db = createDb(config);
    tenant = await createTenant(db);
    const env = { DATABASE_URL: cluster.url(0) };
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await db?.destroy();
    await cluster?.stop();
  });

  it('migrates on the cluster, every table with a primary key (Galera replicates none without)', async () => {
    const [rows] = (await db.raw(
      `SELECT t.table_name AS name FROM information_schema.tables t
        WHERE t.table_schema = DATABASE() AND t.table_type = 'BASE TABLE'
          AND NOT EXISTS (SELECT 1 FROM information_schema.table_constraints c
                           WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name
                             AND c.constraint_type = 'PRIMARY KEY')`,
    )) as [Array<{ name: string }>];
    expect(rows.map((row) => row.name)).to.deep.equal([]);
    // Every node has the schema: DDL is replicated in total order.
    for (const node of cluster.nodes) {
      expect(node.sql(`SELECT COUNT(*) FROM ${cluster.database}.knex_migrations`)).to.not.equal(
        '0',
      );
    }
  });

  it('creates runs and a worker starts them; every node holds them, the events numbered without gaps', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await request<Json>(`${api.url}/create-workflow-run`, {
        key: tenant.key,
        body: createBody(tenant),
      });
      expect(res.status, res.text).to.equal(200);
      ids.push(res.body.id as string);
    }
    await waitFor(
      'every run started (active at its first step)',
      async () => {
        const rows = (await db('workflow_runs').whereIn('id', ids).select('status')) as Array<{
          status: string;
        }>;
        return rows.length === ids.length && rows.every((row) => row.status === 'active');
      },
      30000,
    );
    const events = (await db('run_events').whereIn('run_id', ids).orderBy('id').pluck('id')).map(
      Number,
    );
    expect(events.length).to.be.greaterThanOrEqual(40); // created and started, each run
    // The live streams, webhooks and insights read events behind a watermark that waits out a
    // gap in the ids (a transaction still open): ids stepping by the cluster's size would be
    // gaps everywhere. One writer numbers them one by one.
    const steps = new Set(events.slice(1).map((id, i) => id - events[i]!));
    expect([...steps]).to.deep.equal([1]);
    for (const node of cluster.nodes) {
      const count = node.sql(
        `SET SESSION wsrep_sync_wait = 1; SELECT COUNT(*) FROM ${cluster.database}.run_events`,
      );
      expect(Number(count.split('\n').at(-1))).to.equal(events.length);
    }
  });

  it('is not ready on a node that steps ids by more than one, and says why', async () => {
    // Galera's default (wsrep_auto_increment_control) steps them by the cluster's size.
    const node = cluster.nodes[1]!;
    node.sql('SET GLOBAL auto_increment_increment = 3');
    const env = { DATABASE_URL: cluster.url(1) };
    try {
      const [stepping, steppingWorker] = await Promise.all([startApi(env), startWorker(env)]);
      try {
        const why = /the database steps new ids by 3 \(auto_increment_increment\), not 1/;
        await stepping.waitForLine(why, 20000);
        await steppingWorker.waitForLine(why, 20000);
        const readyz = await fetch(`${stepping.url}/readyz`);
        expect(readyz.status).to.equal(503);
      } finally {
        await Promise.all([stepping.stop(), steppingWorker.stop()]);
      }
      // Set right (connections made from then on take it), the processes started are ready.
      node.sql('SET GLOBAL auto_increment_increment = 1');
      const [fixed, fixedWorker] = await Promise.all([startApi(env), startWorker(env)]);
      try {
        await fixed.ready(30000);
        await fixedWorker.waitForLine(/"msg":"worker ready"/, 30000);
      } finally {
        await Promise.all([fixed.stop(), fixedWorker.stop()]);
      }
    } finally {
      node.sql('SET GLOBAL auto_increment_increment = 1');
    }
  });

  it('a write conflict between two nodes (1213 at COMMIT) runs the loser again: both applied, once each', async () => {
    // Two writers at once, each on its own node: Galera certifies the first COMMIT and fails
    // the other (the row locks of one node do not see the other's).
    await db.raw('CREATE TABLE galera_counter (id INT PRIMARY KEY, n INT NOT NULL)');
    await db.raw('INSERT INTO galera_counter VALUES (1, 0)');
    const nodes = [0, 1].map((i) => createDb(loadConfig({ DATABASE_URL: cluster.url(i) })));
    const retries = async () =>
      (await registry.getSingleMetric('wrs_db_write_conflict_retries_total')!.get()).values[0]
        ?.value ?? 0;
    const retriedBefore = await retries();
    try {
      let updated = 0;
      let bothUpdated!: () => void;
      const gate = new Promise<void>((resolve) => (bothUpdated = resolve));
      const tries = [0, 0];
      const outcomes = await Promise.allSettled(
        nodes.map((node, i) =>
          writeTransaction(node, 10000, async (query) => {
            tries[i]!++;
            await query('UPDATE galera_counter SET n = n + 1 WHERE id = 1');
            if (++updated === 2) bothUpdated();
            await gate; // each has changed the row on its node before either commits
          }),
        ),
      );
      expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled']);
      expect(tries[0]! + tries[1]!, 'tries: one of them ran again').to.equal(3);
      expect((await retries()) - retriedBefore).to.equal(1);
      const [rows] = (await db.raw('SELECT n FROM galera_counter WHERE id = 1')) as [
        Array<{ n: number }>,
      ];
      expect(rows[0]!.n, 'each change applied once').to.equal(2);
    } finally {
      await Promise.all(nodes.map((node) => node.destroy()));
    }
  });

  it('a read on another node waits until that node has applied what the cluster committed before it', async () => {
    await db.raw('CREATE TABLE galera_marks (id INT PRIMARY KEY)');
    const node = cluster.nodes[1]!;
    // Sessions of the service (given DATABASE_NODES) and a plain one, both on node 2.
    const follower = createDb(
      loadConfig({ DATABASE_URL: cluster.url(1), DATABASE_NODES: `127.0.0.1:${node.port}` }),
    );
    const plain = createDb(loadConfig({ DATABASE_URL: cluster.url(1) }));
    // Node 2 stops applying the cluster's writes while a session holds a global read lock.
    const lock = await createConnection({ host: '127.0.0.1', port: node.port, user: 'root' });
    try {
      await Promise.all([follower.raw('SELECT 1'), plain.raw('SELECT 1')]);
      await lock.query('FLUSH TABLES WITH READ LOCK');
      await db.raw('INSERT INTO galera_marks VALUES (1)'); // committed: certified by every node
      // Not applied on node 2 yet: a plain read there misses it.
      expect(await plain('galera_marks').where({ id: 1 }).first()).to.equal(undefined);
      let seen = false;
      const read = follower('galera_marks')
        .where({ id: 1 })
        .first()
        .then((row: unknown) => ((seen = true), row));
      await sleep(500);
      expect(seen, 'the read waits while the write is not applied').to.equal(false);
      await lock.query('UNLOCK TABLES');
      expect(await read).to.deep.equal({ id: 1 });
    } finally {
      await lock.end();
      await Promise.all([follower.destroy(), plain.destroy()]);
    }
  });
});
