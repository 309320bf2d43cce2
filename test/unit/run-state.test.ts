import { expect } from 'chai';
import { HttpError } from '../../src/errors.js';
import { resourceJson, toResource } from '../../src/runs/run-views.js';
import {
  applyPending,
  documentJson,
  failRun,
  hasPendingChange,
  newRun,
  requestStepCompletion,
  RunStateError,
  type RunRecord,
} from '../../src/runs/run-state.js';
import type { Template } from '../../src/templates/template.js';

const template: Template = {
  id: 'tpl',
  organizationId: 'org',
  name: 'Onboarding',
  pages: [
    {
      name: 'One',
      dueInHours: 2,
      inputFields: [
        { inputId: 'a', fieldName: 'A', required: true },
        { inputId: 'b', fieldName: 'B' },
      ],
    },
    { name: 'Two', inputFields: [{ inputId: 'c', fieldName: 'C' }] },
  ],
};

const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

function started(inputs: Record<string, string> = { a: 'x' }): RunRecord {
  return applyPending(newRun('run', 'org', template, inputs, { One: 'ann' }, t0), at(10));
}

function expectHttp(fn: () => unknown, status: number, message: RegExp) {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(HttpError);
    expect((err as HttpError).status).to.equal(status);
    expect((err as Error).message).to.match(message);
    return;
  }
  expect.fail('expected an error');
}

describe('run state', () => {
  it('creates a pending run that owes its start', () => {
    const run = newRun('run', 'org', template, { a: 'x' }, {}, t0);
    expect(run).to.include({
      status: 'pending',
      requestedSeq: 1,
      appliedSeq: 0,
      currentStepName: null,
    });
    expect(run.pendingSince).to.equal(t0);
    expect(hasPendingChange(run)).to.equal(true);
    expect(run.document.steps.map((s) => s.status)).to.deep.equal(['waiting', 'waiting']);
  });

  it('starts a run at its first page with assignee and due date', () => {
    const run = started();
    expect(run).to.include({
      status: 'active',
      currentStepIndex: 0,
      currentStepName: 'One',
      currentStepAssignee: 'ann',
      appliedSeq: 1,
    });
    expect(run.currentStepDueDate!.toISOString()).to.equal(at(10 + 2 * 3600_000).toISOString());
    expect(run.lastActivity).to.deep.equal(at(10));
    expect(run.pendingSince).to.equal(null);
    expect(hasPendingChange(run)).to.equal(false);
  });

  it('moves through the pages to completed, merging inputs', () => {
    const first = requestStepCompletion(started(), { b: 'y' }, at(20));
    expect(first).to.include({ requestedSeq: 2, appliedSeq: 1 });
    const second = applyPending(first, at(30));
    expect(second).to.include({
      status: 'active',
      currentStepName: 'Two',
      currentStepAssignee: null,
      currentStepDueDate: null,
    });
    expect(second.document.input_fields).to.deep.equal({ a: 'x', b: 'y' });
    expect(second.document.steps[0]!.completed_at).to.equal(at(30).toISOString());
    const done = applyPending(requestStepCompletion(second, {}, at(40)), at(50));
    expect(done).to.include({
      status: 'completed',
      currentStepIndex: null,
      currentStepName: null,
      appliedSeq: 3,
    });
    expectHttp(() => requestStepCompletion(done, {}, at(60)), 409, /completed/);
  });

  it('refuses to apply a change twice', () => {
    const run = started();
    expect(() => applyPending(run, at(20))).to.throw(RunStateError);
  });

  it('never moves last activity backwards, whatever the clock says', () => {
    const request = requestStepCompletion(started(), {}, at(20));
    const applied = applyPending(request, at(-5000));
    expect(applied.lastActivity).to.deep.equal(at(10));
  });

  it('checks a completion: required fields, fields of the page, one at a time, the named step', () => {
    expectHttp(
      () => requestStepCompletion(started({}), {}, at(20)),
      400,
      /required field of step 'One' missing: a/,
    );
    expectHttp(() => requestStepCompletion(started({}), { a: ' ' }, at(20)), 400, /missing: a/);
    expectHttp(
      () => requestStepCompletion(started(), { c: 'z' }, at(20)),
      400,
      /'c' does not belong to the current step 'One'/,
    );
    const pending = requestStepCompletion(started(), {}, at(20));
    expectHttp(() => requestStepCompletion(pending, {}, at(30)), 409, /already being applied/);
    expectHttp(
      () => requestStepCompletion(started(), {}, at(20), 'Two'),
      409,
      /'Two' is not the current step/,
    );
    expect(requestStepCompletion(started(), {}, at(20), 'One').requestedSeq).to.equal(2);
    expectHttp(
      () => requestStepCompletion(newRun('r', 'o', template, {}, {}, t0), {}, at(1)),
      409,
      /not started/,
    );
  });

  it('keeps a failed run with its reason and nothing owed', () => {
    const failed = failRun(newRun('run', 'org', template, {}, {}, t0), 'broken', at(5));
    expect(failed.status).to.equal('failed');
    expect(failed.document.error).to.deep.equal({ message: 'broken', at: at(5).toISOString() });
    expect(hasPendingChange(failed)).to.equal(false);
  });
});

describe('run state with names that shadow Object.prototype', () => {
  it('treats pages and inputs named like prototype members as plain data', () => {
    const tricky: Template = {
      id: 't',
      organizationId: 'o',
      name: 'Tricky',
      pages: [
        {
          name: 'constructor',
          inputFields: [{ inputId: 'toString', fieldName: 'T', required: true }],
        },
      ],
    };
    const run = applyPending(newRun('r', 'o', tricky, {}, {}, t0), at(1));
    expect(run.currentStepAssignee).to.equal(null);
    expectHttp(() => requestStepCompletion(run, {}, at(2)), 400, /missing: toString/);
    expect(requestStepCompletion(run, { toString: 'ok' }, at(2)).requestedSeq).to.equal(2);
  });

  describe('the WorkflowRun resource as JSON', () => {
    it('is exactly the resource object serialized, for a new, an active and a failed run', () => {
      const fresh = newRun('run"1', 'org', template, { a: 'quote " \\ \u2028' }, {}, t0);
      for (const run of [fresh, started(), failRun(started(), 'broken', at(20))]) {
        const text = resourceJson(run);
        expect(JSON.parse(text)).to.deep.equal(toResource(run));
        expect(Object.keys(JSON.parse(text) as object)).to.deep.equal(Object.keys(toResource(run)));
      }
    });

    it('stays true when a changed run gets a new document', () => {
      const run = started();
      const before = resourceJson(run);
      const next = requestStepCompletion(run, { a: 'changed' }, at(30));
      expect(resourceJson(next)).to.not.equal(before);
      expect(JSON.parse(resourceJson(next))).to.deep.equal(toResource(next));
      expect(documentJson(next.document)).to.equal(JSON.stringify(next.document));
    });
  });
});
