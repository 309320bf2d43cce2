// POST /cancel-workflow-run and /retry-workflow-run: cancel takes effect at once, also over a
// change that waits for a worker; retry requests a failed run's failed change again.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { sleep, waitFor } from '../support/wait.js';

type History = Array<{ seq: number; type: string; data: Record<string, unknown> }>;

describe('cancel and retry @cluster', () => {
  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    api = await startApi({ JOB_ATTEMPTS: '1' });
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  const row = (id: string) => testDb()('workflow_runs').where({ id }).first();
  const history = async (id: string) => (await client.getRun(id)).body.history as History;

  async function ensureWorker() {
    worker ??= await startWorker({ JOB_ATTEMPTS: '1' });
  }

  async function activeRun(): Promise<string> {
    await ensureWorker();
    const id = (await client.createRun(createBody(tenant))).body.id as string;
    await waitFor('run to start', async () => (await row(id)).status === 'active');
    return id;
  }

  it('cancels an active run at once, with its reason in the history', async () => {
    const id = await activeRun();
    const res = await client.cancelRun({ workflow_run_id: id, reason: 'duplicate request' });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id, status: 'cancelled' });
    const listed = (await client.listRuns()).body.find((r) => r.id === id)!;
    expect(listed.status).to.equal('cancelled');
    expect(listed).not.to.have.property('currentStepName');
    const detail = (await client.getRun(id)).body;
    expect((detail.steps as Array<{ status: string }>).map((s) => s.status)).to.deep.equal([
      'cancelled',
      'waiting',
    ]);
    expect((await history(id)).at(-1)).to.deep.include({
      seq: 3,
      type: 'run.cancelled',
      data: { reason: 'duplicate request', step: 'Request' },
    });
  });

  it('answers 409 to cancelling an ended run, and to completing a cancelled one', async () => {
    const id = await activeRun();
    expect((await client.cancelRun({ workflow_run_id: id })).status).to.equal(200);
    const again = await client.cancelRun({ workflow_run_id: id });
    expect(again.status).to.equal(409);
    expect(again.body.message).to.match(/cancelled/);
    const complete = await client.completeStep({ workflow_run_id: id });
    expect(complete.status).to.equal(409);
    expect((await history(id)).map((e) => e.type)).to.deep.equal([
      'run.created',
      'run.started',
      'run.cancelled',
    ]);
  });

  it('wins over a start that waits for a worker: the worker later does nothing', async () => {
    await worker?.stop();
    worker = undefined;
    const id = (await client.createRun(createBody(tenant))).body.id as string;
    const res = await client.cancelRun({ workflow_run_id: id });
    expect(res.status).to.equal(200);
    expect(res.body.status).to.equal('cancelled');
    await ensureWorker();
    await sleep(2500); // the job, and a reconciler round, have had their chance
    const stored = await row(id);
    expect(stored.status).to.equal('cancelled');
    expect(stored.pending_since).to.equal(null);
    expect((await history(id)).map((e) => e.type)).to.deep.equal(['run.created', 'run.cancelled']);
  });

  it('wins over a waiting completion, and nothing is applied after it, under races', async () => {
    await ensureWorker();
    const ids = await Promise.all(Array.from({ length: 12 }, () => activeRun()));
    // Half race the first step's completion, half the last step's (whose change would make
    // two events: step.completed and run.completed).
    const last = ids.slice(6);
    for (const id of last) {
      expect(
        (await client.completeStep({ workflow_run_id: id, step_name: 'Request' })).status,
      ).to.equal(202);
    }
    for (const id of last) {
      await waitFor('step 2', async () => (await row(id)).current_step_name === 'Approval');
    }
    const answers = await Promise.all(
      ids.map(async (id, i) => {
        const [complete, cancel] = await Promise.all([
          client.completeStep({
            workflow_run_id: id,
            step_name: i < 6 ? 'Request' : 'Approval',
            input_fields: i < 6 ? {} : { approver: 'x' },
          }),
          client.cancelRun({ workflow_run_id: id }),
        ]);
        return { id, complete: complete.status, cancel: cancel.status };
      }),
    );
    await sleep(1500);
    for (const { id, cancel } of answers) {
      expect(cancel, 'cancel never loses to a pending change').to.be.oneOf([200, 409]);
      const stored = await row(id);
      const types = (await history(id)).map((e) => e.type);
      if (cancel === 409) {
        // Only when the run had already completed: then nothing else came after.
        expect(stored.status).to.equal('completed');
        expect(types.at(-1)).to.equal('run.completed');
        continue;
      }
      expect(stored.status).to.equal('cancelled');
      expect(types.at(-1), `${id}: ${types.join(', ')}`).to.equal('run.cancelled');
      expect(types.filter((t) => t === 'run.cancelled')).to.have.length(1);
      const seqs = (await history(id)).map((e) => e.seq);
      expect(seqs).to.deep.equal(seqs.map((_, i) => i + 1));
    }
  });

  it('wins over a start racing it: a run cancelled as it is created is never started after', async () => {
    await ensureWorker();
    const ids = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const id = (await client.createRun(createBody(tenant))).body.id as string;
        const cancel = await client.cancelRun({ workflow_run_id: id });
        expect(cancel.status).to.equal(200);
        return id;
      }),
    );
    await sleep(1500);
    for (const id of ids) {
      expect((await row(id)).status).to.equal('cancelled');
      const types = (await history(id)).map((e) => e.type);
      expect(types.at(-1), `${id}: ${types.join(', ')}`).to.equal('run.cancelled');
      expect(types.filter((t) => t === 'run.cancelled')).to.have.length(1);
    }
  });

  it('retries a failed run: its failed change is applied again', async () => {
    await ensureWorker();
    await worker?.stop();
    worker = undefined;
    const id = (await client.createRun(createBody(tenant))).body.id as string;
    // The run cannot be applied (its pending change skips ahead): a worker marks it failed.
    const broken = JSON.parse((await row(id)).run_json);
    broken.pending.seq = 9;
    await testDb()('workflow_runs')
      .where({ id })
      .update({ run_json: JSON.stringify(broken) });
    await ensureWorker();
    await waitFor('run to fail', async () => (await row(id)).status === 'failed');
    expect((await client.getRun(id)).body.error).to.have.property('message');

    // An operator mends the data, then the client retries.
    const mended = JSON.parse((await row(id)).run_json);
    mended.pending.seq = 1;
    await testDb()('workflow_runs')
      .where({ id })
      .update({ run_json: JSON.stringify(mended) });
    const res = await client.retryRun({ workflow_run_id: id });
    expect(res.status).to.equal(202);
    expect(res.body.status).to.equal('pending');
    await waitFor('run to start', async () => (await row(id)).status === 'active');
    const detail = (await client.getRun(id)).body;
    expect(detail).not.to.have.property('error');
    expect((detail.history as History).map((e) => e.type)).to.deep.equal([
      'run.created',
      'run.failed',
      'run.retried',
      'run.started',
    ]);
  });

  it('answers 409 to retrying a run that is not failed, and 404 to another organization', async () => {
    const id = await activeRun();
    const res = await client.retryRun({ workflow_run_id: id });
    expect(res.status).to.equal(409);
    expect(res.body.message).to.match(/only a failed run/);

    const other = await createTenant(testDb());
    const stranger = new Client(api.url, other.key);
    for (const send of [
      () => stranger.cancelRun({ workflow_run_id: id }),
      () => stranger.retryRun({ workflow_run_id: id }),
    ]) {
      const answer = await send();
      expect(answer.status).to.equal(404);
    }
    expect((await row(id)).status).to.equal('active');
  });

  it('refuses bad bodies with 400 and stores nothing', async () => {
    const id = await activeRun();
    for (const body of [{}, { workflow_run_id: id, reason: '' }, { workflow_run_id: id, x: 1 }]) {
      expect((await client.cancelRun(body)).status, JSON.stringify(body)).to.equal(400);
    }
    expect((await client.retryRun({ workflow_run_id: 5 })).status).to.equal(400);
    expect((await row(id)).status).to.equal('active');
  });
});
