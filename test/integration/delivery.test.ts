// At-least-once delivery with an exactly-once effect: extra jobs for a run change nothing, and
// a run that cannot be applied ends failed with its reason instead of being dropped.
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { applyRunsJob, type ApplyRunsData } from '../../src/jobs/apply-runs.js';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { testEnv } from '../support/env.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

describe('job delivery', () => {
  let api: ApiProcess;
  let tenant: Tenant;
  let client: Client;
  let queue: Queue<ApplyRunsData>;
  const workers: ServiceProcess[] = [];

  before(async () => {
    api = await startApi();
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    queue = new Queue<ApplyRunsData>(applyRunsJob.queue, {
      connection: { url: testEnv.REDIS_URL },
      prefix: testEnv.QUEUE_PREFIX,
    });
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  after(async () => {
    await api?.stop();
    await queue?.close();
  });

  const queueIdle = async () => {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed');
    return (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0) === 0;
  };
  const row = (id: string) => testDb()('workflow_runs').where({ id }).first();
  const duplicates = (id: string, n: number, tag: string) =>
    queue.addBulk(
      Array.from({ length: n }, (_, i) => ({
        name: 'apply',
        // An organization's turn, each with an id of its own: BullMQ's deduplication does not
        // hold them back, so both workers work the same turn at once.
        data: { organizationId: tenant.orgId },
        opts: { jobId: `dup-${tag}-${id}-${i}` },
      })),
    );

  it('applies each change once when its job is delivered several times, to two workers at once', async () => {
    // No worker yet: the original job and its duplicates all wait in the queue together.
    const res = await client.createRun(createBody(tenant));
    const id = res.body.id as string;
    await duplicates(id, 5, 'start');
    workers.push(...(await Promise.all([startWorker(), startWorker()])));
    await waitFor('run to start', async () => (await row(id)).status === 'active');
    await waitFor('queue to drain', queueIdle);
    const started = await row(id);
    expect(started).to.include({ applied_seq: 1, requested_seq: 1, current_step_index: 0 });

    // The same again for a completion, duplicates delivered after the change was applied too.
    expect(
      (await client.completeStep({ workflow_run_id: id, step_name: 'Request' })).status,
    ).to.equal(202);
    await duplicates(id, 5, 'complete');
    await waitFor('step 2', async () => (await row(id)).current_step_index === 1);
    await duplicates(id, 5, 'late');
    await waitFor('queue to drain', queueIdle);
    const after = await row(id);
    expect(after).to.include({
      status: 'active',
      applied_seq: 2,
      requested_seq: 2,
      current_step_index: 1,
    });
    const doc = JSON.parse(after.run_json);
    expect(doc.steps[0].status).to.equal('completed');
    expect(doc.steps[1].status).to.equal('active');
    expect(after.last_activity.getTime()).to.be.at.least(started.last_activity.getTime());
  });

  it('marks a run failed, with the reason in run_json, when it cannot be applied', async () => {
    const res = await client.createRun(createBody(tenant));
    const id = res.body.id as string;
    // Break the stored run before any worker sees it: its pending change names a step it lacks.
    const stored = JSON.parse((await row(id)).run_json);
    stored.pending.seq = 7;
    await testDb()('workflow_runs')
      .where({ id })
      .update({ run_json: JSON.stringify(stored) });
    workers.push(await startWorker({ JOB_ATTEMPTS: '3', JOB_BACKOFF_MS: '50' }));
    const failed = await waitFor('run to fail', async () => {
      const r = await row(id);
      return r.status === 'failed' ? r : undefined;
    });
    const doc = JSON.parse(failed.run_json);
    expect(doc.error.message).to.match(/pending change 7 does not follow applied 0/);
    expect(failed.pending_since).to.equal(null);
    const listed = (await client.listRuns()).body.find((r) => r.id === id);
    expect(listed?.status).to.equal('failed');
  });

  it('fails only the run the database will not store, and applies its batch neighbours', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push((await client.createRun(createBody(tenant))).body.id as string);
    // A step name wider than its column: the worker's batched UPDATE is refused for this run.
    const bad = ids[2]!;
    const stored = JSON.parse((await row(bad)).run_json);
    stored.steps[0].name = 'x'.repeat(300);
    await testDb()('workflow_runs')
      .where({ id: bad })
      .update({ run_json: JSON.stringify(stored) });
    workers.push(await startWorker({ JOB_ATTEMPTS: '2', JOB_BACKOFF_MS: '50' }));
    for (const id of ids.filter((x) => x !== bad)) {
      await waitFor('neighbour to start', async () => (await row(id)).status === 'active');
    }
    const failed = await waitFor('bad run to fail', async () => {
      const r = await row(bad);
      return r.status === 'failed' ? r : undefined;
    });
    expect(JSON.parse(failed.run_json).error.message).to.match(
      /could not store the run: Data too long/,
    );
  });
});
