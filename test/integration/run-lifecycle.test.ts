// A run driven from create to completed through a real worker process.
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
import { waitFor } from '../support/wait.js';

describe('run lifecycle @cluster', () => {
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

  async function summary(id: string) {
    const res = await client.listRuns();
    return res.body.find((r) => r.id === id);
  }

  it('creates a pending run, starts it, and completes every step in order', async () => {
    const created = await client.createRun(createBody(tenant));
    expect(created.status).to.equal(200);
    const run = created.body;
    expect(run).to.include({
      organization_id: tenant.orgId,
      template_id: tenant.template.id,
      status: 'pending',
    });
    expect(Object.keys(run).sort()).to.deep.equal([
      'id',
      'last_activity',
      'organization_id',
      'run_json',
      'status',
      'template_id',
    ]);
    expect(new Date(run.last_activity as string).toISOString()).to.equal(run.last_activity);
    const id = run.id as string;

    const started = await waitFor('run to start', async () => {
      const s = await summary(id);
      return s?.status === 'active' ? s : undefined;
    });
    expect(started).to.include({
      workflowName: 'Purchase request',
      currentStepName: 'Request',
      currentStepAssignee: 'alice',
    });
    const due =
      Date.parse(started.currentStepDueDate as string) - Date.parse(started.lastActivity as string);
    expect(due).to.equal(24 * 3600 * 1000);
    expect(Date.parse(started.lastActivity as string)).to.be.at.least(
      Date.parse(run.last_activity as string),
    );

    const first = await client.completeStep({
      workflow_run_id: id,
      input_fields: { note: 'urgent' },
    });
    expect(first.status).to.equal(202);
    expect(first.body.status).to.equal('active');

    const second = await waitFor('step 2', async () => {
      const s = await summary(id);
      return s?.currentStepName === 'Approval' ? s : undefined;
    });
    expect(second).to.include({ status: 'active', currentStepAssignee: 'bob' });
    expect(second).not.to.have.property('currentStepDueDate'); // the page has no due time
    expect(Date.parse(second.lastActivity as string)).to.be.at.least(
      Date.parse(started.lastActivity as string),
    );

    const last = await client.completeStep({
      workflow_run_id: id,
      input_fields: { approver: 'carol' },
    });
    expect(last.status).to.equal(202);
    const done = await waitFor('completion', async () => {
      const s = await summary(id);
      return s?.status === 'completed' ? s : undefined;
    });
    for (const field of ['currentStepName', 'currentStepAssignee', 'currentStepDueDate']) {
      expect(done, field).not.to.have.property(field);
    }

    const row = await testDb()('workflow_runs').where({ id }).first();
    const doc = JSON.parse(row.run_json);
    expect(doc.input_fields).to.deep.equal({
      item: 'Laptop',
      amount: '1200',
      note: 'urgent',
      approver: 'carol',
    });
    expect(doc.steps.map((s: { status: string }) => s.status)).to.deep.equal([
      'completed',
      'completed',
    ]);
    expect(doc.template.name).to.equal('Purchase request');
    expect(row.applied_seq).to.equal(3);
    expect(row.requested_seq).to.equal(3);
    expect(row.pending_since).to.equal(null);
  });
});
