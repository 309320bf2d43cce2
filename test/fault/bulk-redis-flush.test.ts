// Scenario: Redis loses a bulk action's job midway. A bulk cancel over 1,000 runs is worked in
// small batches; midway its Redis is flushed twice:
//   - first while its worker is working it: the job, its lock and its deduplication key are
//     gone, so the reconciler offers the action a second job while the first is still being
//     worked (two runners on one action: the cursor guard must keep every count exact);
//   - then after that worker was SIGKILLed: the job it held is flushed with everything else, no
//     stalled job is left for another worker to take over, and MySQL alone says the action is
//     still running. Only the reconciler's offer of a job to each running action finishes it.
// The action must complete with matched = done = 1,000, nothing skipped, and exactly one
// run.cancelled event per run.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

const TOTAL = 1000;
/** Small batches, so that the action lasts long enough to be flushed midway, twice. */
const WORKER_ENV = { BULK_BATCH_SIZE: '5' };

interface BulkView {
  id: string;
  status: string;
  matched: number;
  done: number;
  skipped: Record<string, number>;
}

describe('fault: FLUSHALL of Redis midway through a bulk cancel', function () {
  this.timeout(240_000);

  let redis: PrivateRedis;
  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    redis = await startPrivateRedis();
    api = await startApi(redis.env);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await redis?.stop();
  });

  const progress = async (id: string) =>
    (await client.call<BulkView>(`/get-bulk-action?id=${encodeURIComponent(id)}`)).body;
  const reached = (id: string, done: number) =>
    waitFor(
      `${done} runs cancelled`,
      async () => {
        const view = await progress(id);
        return view.done >= done ? view : undefined;
      },
      60_000,
      10,
    );

  it('completes with exact counts: the reconciler offers the running action a job again', async () => {
    const ids: string[] = [];
    for (let i = 0; i < TOTAL; i += 50) {
      const replies = await Promise.all(
        Array.from({ length: Math.min(50, TOTAL - i) }, () =>
          client.createRun(createBody(tenant, { labels: { drill: 'flush' } })),
        ),
      );
      for (const r of replies) {
        expect(r.status, r.text).to.equal(200);
        ids.push(r.body.id as string);
      }
    }
    worker = await startWorker({ ...redis.env, ...WORKER_ENV });
    const started = await client.call<BulkView>('/bulk-cancel-workflow-runs', {
      filter: { label: ['drill:flush'] },
    });
    expect(started.status, started.text).to.equal(202);
    const id = started.body.id;

    // Flush while the worker works the action.
    await reached(id, TOTAL / 5);
    await redis.flushAll();
    const atFirst = await progress(id);
    expect(atFirst.status, 'flushed before the end').to.equal('running');

    // Kill the worker, flush the job it held, start another worker.
    await reached(id, (2 * TOTAL) / 5);
    await worker.stop('SIGKILL');
    await redis.flushAll();
    const atKill = await progress(id);
    expect(atKill.status, 'killed before the end').to.equal('running');
    expect(atKill.done).to.be.below(TOTAL);
    worker = await startWorker({ ...redis.env, ...WORKER_ENV });

    const view = await waitFor(
      'bulk action to complete',
      async () => {
        const read = await progress(id);
        return read.status === 'completed' ? read : undefined;
      },
      60_000,
    );
    expect(view).to.include({ matched: TOTAL, done: TOTAL });
    expect(view.skipped).to.deep.equal({});
    const rows = (await testDb()('run_events')
      .whereIn('run_id', ids)
      .andWhere({ type: 'run.cancelled' })
      .groupBy('run_id')
      .select('run_id')
      .count({ n: '*' })) as Array<{ run_id: string; n: number | string }>;
    const cancels = new Map(rows.map((r) => [r.run_id, Number(r.n)]));
    expect(cancels.size).to.equal(TOTAL);
    for (const runId of ids) expect(cancels.get(runId), runId).to.equal(1);
    const statuses = (await testDb()('workflow_runs')
      .whereIn('id', ids)
      .groupBy('status')
      .select('status')
      .count({ n: '*' })) as Array<{ status: string; n: number | string }>;
    expect(statuses.map((r) => [r.status, Number(r.n)])).to.deep.equal([['cancelled', TOTAL]]);
    expect(worker.running).to.equal(true);
  });
});
