// The three spec endpoints as a strict client generated from the spec reads them: every body in
// every state a run can be in is checked against the spec's schemas (test/support/spec-schemas),
// by the Client itself. A field with no value is left out; a field that is present has the
// spec's type, never null.
import { expect } from 'chai';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { assertSpec } from '../support/spec-schemas.js';
import { waitFor } from '../support/wait.js';

const CURRENT_STEP = ['currentStepName', 'currentStepAssignee', 'currentStepDueDate'] as const;

describe('contract: response bodies as the spec types them', () => {
  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    // One attempt per job, so a broken run fails at once.
    api = await startApi({ JOB_ATTEMPTS: '1' });
    tenant = await createTenant(testDb(), {
      name: 'Contract',
      pages: [
        { name: 'Intake', dueInHours: 2, inputFields: [{ inputId: 'a', fieldName: 'A' }] },
        { name: 'Review', inputFields: [] }, // no fields, no due time
      ],
    });
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  async function listed(id: string): Promise<Record<string, unknown>> {
    const res = await client.listRuns();
    expect(res.status).to.equal(200);
    const run = res.body.find((r) => r.id === id);
    if (!run) throw new Error(`run ${id} not listed`);
    return run;
  }

  async function listedWhen(id: string, test: (run: Record<string, unknown>) => boolean) {
    return waitFor(`run ${id} to change`, async () => {
      const run = await listed(id);
      return test(run) ? run : undefined;
    });
  }

  it('answers empty lists as bare arrays', async () => {
    const empty = await createTenant(testDb());
    const runs = await new Client(api.url, empty.key).listRuns();
    expect(runs.status).to.equal(200);
    expect(runs.body).to.deep.equal([]);
  });

  it('lists a template whose page has no input fields', async () => {
    const res = await client.listTemplates();
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal([
      {
        id: tenant.template.id,
        name: 'Contract',
        inputFields: [{ pageName: 'Intake', inputId: 'a', fieldName: 'A' }],
      },
    ]);
    const bare = await createTenant(testDb(), {
      name: 'Nothing to fill',
      pages: [{ name: 'Only', inputFields: [] }],
    });
    const other = await new Client(api.url, bare.key).listTemplates();
    expect(other.body).to.deep.equal([
      { id: bare.template.id, name: 'Nothing to fill', inputFields: [] },
    ]);
  });

  it('leaves out the current step of a pending run, and never answers null', async () => {
    const created = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    expect(created.status).to.equal(200);
    const run = await listed(created.body.id as string);
    expect(run.status).to.equal('pending');
    for (const field of CURRENT_STEP) expect(run, field).not.to.have.property(field);
  });

  it('gives an active run its step, and leaves out an assignee or due date it lacks', async () => {
    worker = await startWorker({ JOB_ATTEMPTS: '1' });
    const assigned = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: { a: 'x' },
      user_assignments: { Intake: 'alice' },
    });
    const unassigned = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    const a = await listedWhen(assigned.body.id as string, (r) => r.status === 'active');
    expect(a).to.include({ currentStepName: 'Intake', currentStepAssignee: 'alice' });
    expect(a.currentStepDueDate).to.be.a('string');
    const u = await listedWhen(unassigned.body.id as string, (r) => r.status === 'active');
    expect(u).to.include({ currentStepName: 'Intake' });
    expect(u.currentStepDueDate).to.be.a('string');
    expect(u).not.to.have.property('currentStepAssignee');

    // The second page has no due time and nobody assigned.
    const done = await client.completeStep({
      workflow_run_id: unassigned.body.id,
      step_name: 'Intake',
    });
    expect(done.status).to.equal(202);
    const review = await listedWhen(
      unassigned.body.id as string,
      (r) => r.currentStepName === 'Review',
    );
    expect(review.status).to.equal('active');
    expect(review).not.to.have.property('currentStepAssignee');
    expect(review).not.to.have.property('currentStepDueDate');

    // Completed: no current step at all.
    await client.completeStep({ workflow_run_id: unassigned.body.id, step_name: 'Review' });
    const completed = await listedWhen(
      unassigned.body.id as string,
      (r) => r.status === 'completed',
    );
    for (const field of CURRENT_STEP) expect(completed, field).not.to.have.property(field);
  });

  it('lists a failed run without a current step', async () => {
    // A worker meets a run it cannot apply (its pending change skips ahead) and marks it failed.
    await worker?.stop();
    const created = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    const id = created.body.id as string;
    const row = await testDb()('workflow_runs').where({ id }).first();
    const doc = JSON.parse(row.run_json);
    doc.pending.seq = 9;
    await testDb()('workflow_runs')
      .where({ id })
      .update({ run_json: JSON.stringify(doc) });
    worker = await startWorker({ JOB_ATTEMPTS: '1' });
    const failed = await listedWhen(id, (r) => r.status === 'failed');
    for (const field of CURRENT_STEP) expect(failed, field).not.to.have.property(field);
  });

  it('checks error bodies too: {message} with a string, on every endpoint', () => {
    // The Client checks every error body it receives; this proves that check can fail.
    expect(() => assertSpec('Error', { message: null })).to.throw(/Error/);
    expect(() =>
      assertSpec('WorkflowRunSummaryList', [
        { id: 'x', lastActivity: 'now', workflowName: 'w', status: 's' },
      ]),
    ).to.throw(/date-time/);
    expect(() =>
      assertSpec('WorkflowRunSummaryList', [
        {
          id: 'x',
          lastActivity: '2026-01-01T00:00:00.000Z',
          workflowName: 'w',
          status: 's',
          currentStepAssignee: null,
        },
      ]),
    ).to.throw(/currentStepAssignee/);
  });
});
