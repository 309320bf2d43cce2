import { SYSTEM } from '../../src/audit/actor.js';
import { TEST_ACTOR } from '../support/actors.js';
import { expect } from 'chai';
import { DomainError, type DomainErrorCode } from '../../src/errors.js';
import { resourceJson, toResource } from '../../src/runs/run-views.js';
import {
  applyPending,
  cancelRun,
  failRun,
  wakeStep,
  retryRun,
  newRun,
  requestStepCompletion,
} from '../../src/runs/run-state.js';
import {
  documentJson,
  storedDocumentJson,
  hasPendingChange,
  RunStateError,
  type RunRecord,
} from '../../src/runs/run-record.js';
import type { Template } from '../../src/templates/template.js';

const template: Template = {
  id: 'tpl',
  organizationId: 'org',
  version: 1,
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
  return applyPending(
    newRun('run', 'org', template, inputs, { One: 'ann' }, t0, TEST_ACTOR),
    at(10),
  );
}

/** The change is refused with this code (and field, when given), and a message for a person. */
function expectRefusal(fn: () => unknown, code: DomainErrorCode, message: RegExp, field?: string) {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal(code);
    expect((err as Error).message).to.match(message);
    if (field !== undefined) expect((err as DomainError).field).to.equal(field);
    return;
  }
  expect.fail('expected an error');
}

describe('run state', () => {
  it('creates a pending run that owes its start', () => {
    const run = newRun('run', 'org', template, { a: 'x' }, {}, t0, TEST_ACTOR);
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
    const first = requestStepCompletion(started(), { b: 'y' }, at(20), TEST_ACTOR);
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
    const done = applyPending(requestStepCompletion(second, {}, at(40), TEST_ACTOR), at(50));
    expect(done).to.include({
      status: 'completed',
      currentStepIndex: null,
      currentStepName: null,
      appliedSeq: 3,
    });
    expectRefusal(
      () => requestStepCompletion(done, {}, at(60), TEST_ACTOR),
      'run_not_active',
      /completed/,
    );
  });

  it('refuses to apply a change twice', () => {
    const run = started();
    expect(() => applyPending(run, at(20))).to.throw(RunStateError);
  });

  it('never moves last activity backwards, whatever the clock says', () => {
    const request = requestStepCompletion(started(), {}, at(20), TEST_ACTOR);
    const applied = applyPending(request, at(-5000));
    expect(applied.lastActivity).to.deep.equal(at(10));
  });

  it('checks a completion: required fields, fields of the page, one at a time, the named step', () => {
    expectRefusal(
      () => requestStepCompletion(started({}), {}, at(20), TEST_ACTOR),
      'missing_required_field',
      /required field of step 'One' missing: a/,
      '/input_fields/a',
    );
    expectRefusal(
      () => requestStepCompletion(started({}), { a: ' ' }, at(20), TEST_ACTOR),
      'missing_required_field',
      /missing: a/,
      '/input_fields/a',
    );
    expectRefusal(
      () => requestStepCompletion(started(), { c: 'z' }, at(20), TEST_ACTOR),
      'unknown_input_field',
      /'c' does not belong to the current step 'One'/,
      '/input_fields/c',
    );
    const pending = requestStepCompletion(started(), {}, at(20), TEST_ACTOR);
    expectRefusal(
      () => requestStepCompletion(pending, {}, at(30), TEST_ACTOR),
      'completion_pending',
      /already being applied/,
    );
    expectRefusal(
      () => requestStepCompletion(started(), {}, at(20), TEST_ACTOR, 'Two'),
      'step_not_current',
      /'Two' is not the current step/,
      '/step_name',
    );
    expect(requestStepCompletion(started(), {}, at(20), TEST_ACTOR, 'One').requestedSeq).to.equal(
      2,
    );
    expectRefusal(
      () =>
        requestStepCompletion(
          newRun('r', 'o', template, {}, {}, t0, TEST_ACTOR),
          {},
          at(1),
          TEST_ACTOR,
        ),
      'run_not_started',
      /not started/,
    );
  });

  it('keeps a failed run with its reason and nothing owed', () => {
    const failed = failRun(newRun('run', 'org', template, {}, {}, t0, TEST_ACTOR), 'broken', at(5));
    expect(failed.status).to.equal('failed');
    expect(failed.document.error).to.deep.equal({ message: 'broken', at: at(5).toISOString() });
    expect(hasPendingChange(failed)).to.equal(false);
  });
});

describe('run events and the changes made at once', () => {
  const types = (run: RunRecord) => run.events.map((e) => [e.seq, e.type]);

  it('describes every change with its events, numbered in the run', () => {
    const fresh = newRun('run', 'org', template, { a: 'x' }, { One: 'ann' }, t0, TEST_ACTOR);
    expect(types(fresh)).to.deep.equal([[1, 'run.created']]);
    expect(fresh.eventSeq).to.equal(1);
    // A record read back from MySQL carries no events; each change carries its own.
    const stored = { ...fresh, events: [] };
    const run = applyPending(stored, at(10));
    expect(run.events).to.deep.equal([
      {
        seq: 2,
        type: 'run.started',
        at: at(10).toISOString(),
        data: { step: 'One', assignee: 'ann', dueDate: at(10 + 2 * 3600_000).toISOString() },
        // A worker starts a run by itself.
        actor: SYSTEM,
      },
    ]);
    const two = applyPending(
      { ...requestStepCompletion(run, { b: 'y' }, at(20), TEST_ACTOR), events: [] },
      at(30),
    );
    expect(two.events).to.deep.equal([
      {
        seq: 3,
        type: 'step.completed',
        at: at(30).toISOString(),
        data: { step: 'One', inputFields: { b: 'y' }, nextStep: 'Two' },
        // The worker applies it; the key that asked for it completed the step.
        actor: TEST_ACTOR,
      },
    ]);
    const done = applyPending(
      { ...requestStepCompletion(two, {}, at(40), TEST_ACTOR), events: [] },
      at(50),
    );
    expect(types(done)).to.deep.equal([
      [4, 'step.completed'],
      [5, 'run.completed'],
    ]);
    expect(done.eventSeq).to.equal(5);
  });

  it('cancels a pending or active run at once, dropping the change that waits', () => {
    const pending = { ...newRun('r', 'o', template, {}, {}, t0, TEST_ACTOR), events: [] };
    const cancelled = cancelRun(pending, 'no longer needed', at(5), TEST_ACTOR);
    expect(cancelled).to.include({
      status: 'cancelled',
      currentStepName: null,
      pendingSince: null,
    });
    expect(hasPendingChange(cancelled)).to.equal(false);
    expect(cancelled.appliedSeq).to.equal(cancelled.requestedSeq);
    expect(cancelled.events).to.deep.equal([
      {
        seq: 2,
        type: 'run.cancelled',
        at: at(5).toISOString(),
        data: { reason: 'no longer needed' },
        actor: TEST_ACTOR,
      },
    ]);
    const active = { ...requestStepCompletion(started(), {}, at(20), TEST_ACTOR), events: [] };
    const stopped = cancelRun(active, undefined, at(25), TEST_ACTOR);
    expect(stopped.document.steps.map((s) => s.status)).to.deep.equal(['cancelled', 'waiting']);
    expect(stopped.document.pending).to.equal(null);
    expect(stopped.events[0]!.data).to.deep.equal({ step: 'One' });
    expectRefusal(
      () => cancelRun(stopped, undefined, at(30), TEST_ACTOR),
      'run_not_cancellable',
      /cancelled/,
    );
    expectRefusal(
      () => requestStepCompletion(stopped, {}, at(30), TEST_ACTOR),
      'run_not_active',
      /cancelled/,
    );
  });

  it('retries only a failed run that holds its failed change', () => {
    const failed = failRun(
      { ...newRun('r', 'o', template, {}, {}, t0, TEST_ACTOR), events: [] },
      'down',
      at(5),
    );
    expect(types(failed)).to.deep.equal([[2, 'run.failed']]);
    const retried = retryRun({ ...failed, events: [] }, at(6), TEST_ACTOR);
    expect(retried).to.include({ status: 'pending' });
    expect(retried.document.error).to.equal(null);
    expect(hasPendingChange(retried)).to.equal(true);
    expect(retried.events[0]).to.deep.include({
      seq: 3,
      type: 'run.retried',
      data: { change: 'start' },
    });
    expect(applyPending(retried, at(7)).status).to.equal('active');
    const failedStep = failRun(
      requestStepCompletion(started(), {}, at(20), TEST_ACTOR),
      'x',
      at(21),
    );
    expect(retryRun(failedStep, at(22), TEST_ACTOR)).to.include({ status: 'active' });
    expectRefusal(
      () => retryRun(started(), at(30), TEST_ACTOR),
      'run_not_retryable',
      /only a failed run/,
    );
    const nothingHeld = { ...failed, document: { ...failed.document, pending: null } };
    expectRefusal(
      () => retryRun(nothingHeld, at(30), TEST_ACTOR),
      'run_not_retryable',
      /no change to retry/,
    );
  });

  it('marks the current step overdue only when it is still current and past due (its wake time)', () => {
    const run = { ...started(), events: [] };
    const due = run.currentStepDueDate!.getTime();
    expect(wakeStep(run, new Date(due - 1))).to.equal(undefined);
    const marked = wakeStep(run, new Date(due + 1))!;
    expect(marked.currentStepOverdue).to.equal(true);
    expect(run.currentStepWakeAt, 'woken at the due date').to.deep.equal(new Date(due));
    expect(marked.currentStepWakeAt, 'nothing more owed').to.equal(null);
    expect(marked.document.steps[0]!.overdue).to.equal(true);
    expect(marked.lastActivity).to.deep.equal(run.lastActivity);
    expect(marked.events).to.deep.equal([
      {
        seq: 3,
        type: 'step.overdue',
        at: new Date(due + 1).toISOString(),
        data: { step: 'One', dueDate: new Date(due).toISOString() },
        actor: SYSTEM,
      },
    ]);
    expect(wakeStep(marked, new Date(due + 2)), 'marked once').to.equal(undefined);
    const completing = requestStepCompletion(run, {}, at(20), TEST_ACTOR);
    expect(wakeStep(completing, new Date(due + 1)), 'being completed').to.equal(undefined);
    const moved = applyPending(completing, at(30));
    expect(wakeStep(moved, new Date(due + 1)), 'completed first').to.equal(undefined);
    expect(wakeStep(cancelRun(run, undefined, at(20), TEST_ACTOR), new Date(due + 1))).to.equal(
      undefined,
    );
  });
});

describe('run state with names that shadow Object.prototype', () => {
  it('treats pages and inputs named like prototype members as plain data', () => {
    const tricky: Template = {
      id: 't',
      organizationId: 'o',
      version: 1,
      name: 'Tricky',
      pages: [
        {
          name: 'constructor',
          inputFields: [{ inputId: 'toString', fieldName: 'T', required: true }],
        },
      ],
    };
    const run = applyPending(newRun('r', 'o', tricky, {}, {}, t0, TEST_ACTOR), at(1));
    expect(run.currentStepAssignee).to.equal(null);
    expectRefusal(
      () => requestStepCompletion(run, {}, at(2), TEST_ACTOR),
      'missing_required_field',
      /missing: toString/,
      '/input_fields/toString',
    );
    expect(requestStepCompletion(run, { toString: 'ok' }, at(2), TEST_ACTOR).requestedSeq).to.equal(
      2,
    );
  });

  describe('the WorkflowRun resource as JSON', () => {
    it('is exactly the resource object serialized, for a new, an active and a failed run', () => {
      const fresh = newRun(
        'run"1',
        'org',
        template,
        { a: 'quote " \\ \u2028' },
        {},
        t0,
        TEST_ACTOR,
      );
      for (const run of [fresh, started(), failRun(started(), 'broken', at(20))]) {
        const text = resourceJson(run);
        expect(JSON.parse(text)).to.deep.equal(toResource(run));
        expect(Object.keys(JSON.parse(text) as object)).to.deep.equal(Object.keys(toResource(run)));
      }
    });

    it('stays true when a changed run gets a new document', () => {
      const run = started();
      const before = resourceJson(run);
      const next = requestStepCompletion(run, { a: 'changed' }, at(30), TEST_ACTOR);
      expect(resourceJson(next)).to.not.equal(before);
      expect(JSON.parse(resourceJson(next))).to.deep.equal(toResource(next));
      expect(documentJson(next.document)).to.equal(JSON.stringify(next.document));
    });

    it('is stored without only its template pages, whatever the template is called', () => {
      for (const name of ['Onboarding', 'a } b', '"}', '{"pages":[]}', '\\', '\u{1F600}}']) {
        const named: Template = { ...template, id: `id ${name}`, name };
        for (const run of [newRun('r', 'org', named, { a: '}' }, {}, t0, TEST_ACTOR)]) {
          expect(documentJson(run.document)).to.equal(JSON.stringify(run.document));
          const { template: full, ...rest } = run.document;
          expect(JSON.parse(storedDocumentJson(run.document))).to.deep.equal({
            template: { id: full.id, name: full.name, version: full.version },
            ...rest,
          });
        }
      }
    });
  });
});
