// GET /get-workflow-run: one run in full, and its history, event for event what clients were
// told; the events are written in the same transaction as each change.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

type Detail = {
  status: string;
  steps: Array<Record<string, unknown>>;
  history: Array<{ seq: number; type: string; at: string; data: Record<string, unknown> }>;
  [key: string]: unknown;
};

describe('one run in full: GET /get-workflow-run @cluster', () => {
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    [api, worker] = await Promise.all([startApi(), startWorker()]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  async function detailWhen(id: string, test: (d: Detail) => boolean): Promise<Detail> {
    return waitFor(`run ${id}`, async () => {
      const res = await client.getRun(id);
      expect(res.status).to.equal(200);
      const detail = res.body as Detail;
      return test(detail) ? detail : undefined;
    });
  }

  it('shows the run, its steps and a history that matches every change, in order', async () => {
    const created = await client.createRun(createBody(tenant));
    const id = created.body.id as string;
    const started = await detailWhen(id, (d) => d.status === 'active');
    expect(started).to.include({
      id,
      templateId: tenant.template.id,
      workflowName: 'Purchase request',
      currentStepName: 'Request',
      currentStepAssignee: 'alice',
      createdAt: created.body.last_activity,
    });
    expect(started.inputFields).to.deep.equal({ item: 'Laptop', amount: '1200' });
    expect(started.userAssignments).to.deep.equal({ Request: 'alice', Approval: 'bob' });
    expect(started.steps[0]).to.include({ name: 'Request', status: 'active', overdue: false });
    expect(started.steps[0]!.dueDate).to.equal(started.currentStepDueDate);
    expect(started.steps[1]).to.deep.equal({ name: 'Approval', status: 'waiting', overdue: false });

    const first = await client.completeStep({
      workflow_run_id: id,
      step_name: 'Request',
      input_fields: { note: 'urgent' },
    });
    expect(first.status).to.equal(202);
    await detailWhen(id, (d) => d.currentStepName === 'Approval');
    await client.completeStep({
      workflow_run_id: id,
      step_name: 'Approval',
      input_fields: { approver: 'carol' },
    });
    const done = await detailWhen(id, (d) => d.status === 'completed');
    expect(done).not.to.have.property('currentStepName');
    expect(done.steps.map((s) => s.status)).to.deep.equal(['completed', 'completed']);
    expect(done.inputFields).to.deep.equal({
      item: 'Laptop',
      amount: '1200',
      note: 'urgent',
      approver: 'carol',
    });

    expect(done.history.map((e) => [e.seq, e.type])).to.deep.equal([
      [1, 'run.created'],
      [2, 'run.started'],
      [3, 'step.completed'],
      [4, 'step.completed'],
      [5, 'run.completed'],
    ]);
    const [made, start, step1, step2, end] = done.history;
    expect(made!.at).to.equal(created.body.last_activity);
    expect(made!.data).to.deep.equal({
      templateId: tenant.template.id,
      templateVersion: 1,
      workflowName: 'Purchase request',
    });
    expect(start!.data).to.deep.equal({
      step: 'Request',
      assignee: 'alice',
      dueDate: started.currentStepDueDate,
    });
    expect(start!.at).to.equal(started.steps[0]!.startedAt);
    expect(step1!.data).to.deep.equal({
      step: 'Request',
      inputFields: { note: 'urgent' },
      nextStep: 'Approval',
      nextAssignee: 'bob',
    });
    expect(step1!.at).to.equal(done.steps[0]!.completedAt);
    expect(step2!.data).to.deep.equal({ step: 'Approval', inputFields: { approver: 'carol' } });
    expect(end!.at).to.equal(done.lastActivity);
    const times = done.history.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => a - b)).to.deep.equal(times);
  });

  it('has exactly one event per change in MySQL, however the worker was told', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push((await client.createRun(createBody(tenant))).body.id as string);
    for (const id of ids) await detailWhen(id, (d) => d.status === 'active');
    const rows = await testDb()('run_events')
      .whereIn('run_id', ids)
      .select('run_id', 'seq', 'type');
    expect(rows).to.have.length(40);
    for (const id of ids) {
      expect(rows.filter((r) => r.run_id === id).map((r) => [r.seq, r.type])).to.have.deep.members([
        [1, 'run.created'],
        [2, 'run.started'],
      ]);
    }
  });

  it('answers 404 for an unknown run and for another organization’s, and 400 without an id', async () => {
    const other = await createTenant(testDb());
    const foreign = (await new Client(api.url, other.key).createRun(createBody(other))).body
      .id as string;
    for (const id of [foreign, 'no-such-run']) {
      const res = await client.getRun(id);
      expect(res.status).to.equal(404);
      expect(res.body.message).to.match(/not found/);
    }
    const missing = await request<{ message: string }>(`${api.url}/get-workflow-run`, {
      key: tenant.key,
    });
    expect(missing.status).to.equal(400);
    expect(missing.body.message).to.match(/id/);
  });
});
