// Only in a cluster run (npm run test:cluster), beside the lifecycle tests and the Redis-flush
// drill that run there unchanged: the processes really use the cluster (the rate limiter too),
// and every BullMQ queue's keys sit in one hash slot.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { JOB_KINDS } from '../../src/jobs/kinds.js';
import { testEnv } from '../support/env.js';
import { createBody, createTenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testCluster, testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

/** Every key under the test's prefix on every master, with its slot. */
async function clusterKeys(): Promise<Array<{ key: string; slot: number }>> {
  const cluster = testCluster();
  const found: Array<{ key: string; slot: number }> = [];
  for (const keys of await cluster.commandOnEach<string[]>('KEYS', `${testEnv.QUEUE_PREFIX}:*`)) {
    for (const key of keys) {
      const [slot] = await cluster.commandOnEach<number>('CLUSTER', 'KEYSLOT', key);
      found.push({ key, slot: slot! });
    }
  }
  return found;
}

describe('on a Redis Cluster @cluster', function () {
  this.timeout(60000);
  let api: ApiProcess;
  let worker: ServiceProcess;

  before(async () => {
    [api, worker] = await Promise.all([
      startApi({ REDIS_URL: 'redis://127.0.0.1:1' }), // never used: the cluster wins
      startWorker({ REDIS_URL: 'redis://127.0.0.1:1' }),
    ]);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  it('runs on the cluster, all of each queue’s keys in one hash slot', async () => {
    const tenant = await createTenant(testDb());
    const client = new Client(api.url, tenant.key);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(String((await client.createRun(createBody(tenant))).body.id));
    await waitFor('every run active', async () => {
      const list = await client.listRuns();
      return ids.every((id) => list.body.find((r) => r.id === id)?.status === 'active');
    });

    const keys = await clusterKeys();
    const byGroup = new Map<string, Set<number>>();
    for (const { key, slot } of keys) {
      const group = /:ratelimit:/.test(key) ? 'ratelimit' : key.split(':')[1]!;
      byGroup.set(group, (byGroup.get(group) ?? new Set()).add(slot));
    }
    expect([...byGroup.keys()]).to.include.members([
      JOB_KINDS.applyRuns.queue,
      JOB_KINDS.stepDue.queue,
      'ratelimit',
    ]);
    // BullMQ's scripts touch several keys of a queue at once: they must share a slot. (The rate
    // limiter's script touches one key, so its keys need not.)
    for (const queue of [JOB_KINDS.applyRuns.queue, JOB_KINDS.stepDue.queue]) {
      expect([...byGroup.get(queue)!], queue).to.have.length(1);
    }

    // Ready once warmed up (its warm-up may still run on a busy machine).
    expect(await api.ready()).to.include({ redis: true });
  });

  it('keeps nothing on the single Redis the machine also runs', async () => {
    const single = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    try {
      await single.connect();
      expect(await single.keys(`${testEnv.QUEUE_PREFIX}:*`)).to.deep.equal([]);
    } finally {
      single.disconnect();
    }
  });
});
