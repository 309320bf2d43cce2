// POST /complete-workflow-step: the checks made before a completion is stored, and the 409
// for the loser of two concurrent completions of the same step.
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

describe('POST /complete-workflow-step @cluster', () => {
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;

  before(async () => {
    [api, worker] = await Promise.all([startApi(), startWorker()]);
    tenant = await createTenant(testDb());
    other = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  const row = (id: string) => testDb()('workflow_runs').where({ id }).first();

  async function activeRun(body: Record<string, unknown> = createBody(tenant)): Promise<string> {
    const res = await client.createRun(body);
    expect(res.status).to.equal(200);
    const id = res.body.id as string;
    await waitFor('run to start', async () => (await row(id)).status === 'active');
    return id;
  }

  it('answers 202 with the run as stored, the completion pending', async () => {
    const id = await activeRun();
    const res = await client.completeStep({ workflow_run_id: id, input_fields: { note: 'hi' } });
    expect(res.status).to.equal(202);
    expect(res.body).to.include({ id, organization_id: tenant.orgId, status: 'active' });
    const doc = res.body.run_json as { pending: Record<string, unknown>; template: unknown };
    expect(doc.pending).to.include({ type: 'complete_step', step: 0, seq: 2 });
    // Read back from MySQL, where the document holds its template by id only: the answer
    // carries the template's pages all the same.
    expect(doc.template).to.deep.equal({
      id: tenant.template.id,
      name: tenant.template.name,
      version: 1,
      pages: tenant.template.pages,
    });
    await waitFor('step 2', async () => (await row(id)).current_step_name === 'Approval');
  });

  it('refuses a missing required field with 400 and stores nothing', async () => {
    const id = await activeRun({ ...createBody(tenant), input_fields: { item: 'Desk' } });
    const before = await row(id);
    const res = await client.completeStep({ workflow_run_id: id });
    expect(res.status).to.equal(400);
    expect(res.body)
      .to.have.property('message')
      .that.matches(/required.*amount/);
    const blank = await client.completeStep({
      workflow_run_id: id,
      input_fields: { amount: '  ' },
    });
    expect(blank.status).to.equal(400);
    expect(await row(id)).to.deep.equal(before);
    const ok = await client.completeStep({ workflow_run_id: id, input_fields: { amount: '10' } });
    expect(ok.status).to.equal(202);
  });

  it('refuses fields of another step and unexpected fields with 400', async () => {
    const id = await activeRun();
    const res = await client.completeStep({ workflow_run_id: id, input_fields: { approver: 'x' } });
    expect(res.status).to.equal(400);
    expect(res.body)
      .to.have.property('message')
      .that.matches(/'approver' does not belong to the current step 'Request'/);
    const extra = await client.completeStep({ workflow_run_id: id, status: 'completed' });
    expect(extra.status).to.equal(400);
    expect(extra.body)
      .to.have.property('message')
      .that.matches(/unexpected field 'status'/);
    const missing = await client.completeStep({});
    expect(missing.status).to.equal(400);
  });

  it("answers 404 for an unknown run and for another organization's run, the same way", async () => {
    const foreignRes = await new Client(api.url, other.key).createRun(createBody(other));
    const foreignId = foreignRes.body.id as string;
    await waitFor('foreign run to start', async () => (await row(foreignId)).status === 'active');
    const before = await row(foreignId);
    const foreign = await client.completeStep({ workflow_run_id: foreignId, input_fields: {} });
    const unknown = await client.completeStep({
      workflow_run_id: '01a1fe60-0000-7000-8000-000000000000',
    });
    expect(foreign.status).to.equal(404);
    expect(unknown.status).to.equal(404);
    expect(foreign.body).to.have.property('message');
    expect(await row(foreignId)).to.deep.equal(before);
  });

  it('answers 409 when step_name is not the current step (a late retry), and stores nothing', async () => {
    const id = await activeRun();
    expect(
      (await client.completeStep({ workflow_run_id: id, step_name: 'Request' })).status,
    ).to.equal(202);
    await waitFor('step 2', async () => (await row(id)).current_step_index === 1);
    const before = await row(id);
    const retry = await client.completeStep({ workflow_run_id: id, step_name: 'Request' });
    expect(retry.status).to.equal(409);
    expect(retry.body)
      .to.have.property('message')
      .that.matches(/not the current step/);
    expect(await row(id)).to.deep.equal(before);
  });

  it('answers 409 for a completed run', async () => {
    const id = await activeRun();
    expect((await client.completeStep({ workflow_run_id: id })).status).to.equal(202);
    await waitFor('step 2', async () => (await row(id)).current_step_index === 1);
    expect(
      (await client.completeStep({ workflow_run_id: id, input_fields: { approver: 'x' } })).status,
    ).to.equal(202);
    await waitFor('completion', async () => (await row(id)).status === 'completed');
    const res = await client.completeStep({ workflow_run_id: id });
    expect(res.status).to.equal(409);
    expect(res.body)
      .to.have.property('message')
      .that.matches(/completed/);
  });

  it('lets exactly one of many concurrent completions of the same step win; the others get 409', async () => {
    const id = await activeRun();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        client.completeStep({
          workflow_run_id: id,
          step_name: 'Request',
          input_fields: { note: 'same' },
        }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 202)).to.have.length(1);
    expect(statuses.filter((s) => s === 409)).to.have.length(7);
    for (const a of answers.filter((x) => x.status === 409))
      expect(a.body).to.have.property('message');
    await waitFor('step 2', async () => (await row(id)).current_step_index === 1);
    // One step applied, not two: the run waits on Approval, not completed.
    const stored = await row(id);
    expect(stored).to.include({ status: 'active', applied_seq: 2, requested_seq: 2 });
  });
});
