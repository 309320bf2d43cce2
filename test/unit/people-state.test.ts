// The pure transitions of people's work: a rejection sending the run back (values kept, the
// count kept, the limit failing it), what the clock owes a step (overdue, escalations once each,
// an approval's timeout), claims, and the inbox's terms (none for a plain run).
import { expect } from 'chai';
import { SYSTEM } from '../../src/audit/actor.js';
import { DomainError } from '../../src/errors.js';
import type { RunRecord } from '../../src/runs/run-record.js';
import {
  applyPending,
  claimStep,
  newRun,
  requestStepCompletion,
  unclaimStep,
  wakeStep,
} from '../../src/runs/run-state.js';
import { taskTermStatements, termsOf } from '../../src/tasks/task-terms.js';
import type { Template } from '../../src/templates/template.js';
import { TEST_ACTOR } from '../support/actors.js';

const HOUR = 3600_000;
const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

const expense: Template = {
  id: 'tpl',
  organizationId: 'org',
  version: 1,
  name: 'Expense',
  pages: [
    { name: 'Submit', inputFields: [{ inputId: 'amount', fieldName: 'Amount', required: true }] },
    {
      name: 'Approve',
      kind: 'approval',
      onReject: { action: 'reopen', page: 'Submit' },
      maxRejections: 2,
      decisionTimeout: { hours: 48, decision: 'approved' },
      inputFields: [],
    },
    {
      name: 'Pay',
      dueInHours: 1,
      candidateGroups: ['finance'],
      escalations: [
        { overdueByHours: 0, addCandidateGroups: ['leads'] },
        { overdueByHours: 2, assignTo: 'boss' },
      ],
      inputFields: [],
    },
  ],
};

/** Applies a completion (with a decision, when given) at `ms`. */
function complete(run: RunRecord, ms: number, decision?: 'approved' | 'rejected'): RunRecord {
  const requested = requestStepCompletion(run, {}, at(ms), TEST_ACTOR, undefined, {
    decision,
    completedBy: 'mia',
  });
  return applyPending(requested, at(ms + 1));
}

function atApproval(): RunRecord {
  const run = applyPending(
    newRun('run', 'org', expense, { amount: '5' }, {}, t0, TEST_ACTOR, { team: 'blue' }),
    at(1),
  );
  return complete(run, 10);
}

describe('people: approvals', () => {
  it('sends a rejection back with the values kept, counting it, and fails at the limit', () => {
    const run = atApproval();
    expect(run.document.steps[1]!.decision_due_at).to.equal(at(11 + 48 * HOUR).toISOString());
    const back = complete(run, 20, 'rejected');
    expect(back.status).to.equal('active');
    expect(back.currentStepName).to.equal('Submit');
    expect(back.document.input_fields).to.deep.equal({ amount: '5' });
    expect(back.document.steps[1]).to.deep.include({ status: 'waiting', rejections: 1 });
    expect(back.document.steps[1]!.decision).to.equal(undefined);
    expect(back.events.map((e) => e.type)).to.include.members(['step.rejected', 'step.reopened']);
    const again = complete(complete(back, 30), 40, 'rejected');
    expect(again.status).to.equal('failed');
    expect(again.document.error!.message).to.match(/rejected 2 times/);
    expect(again.currentStepWakeAt, 'a failed run owes the clock nothing').to.equal(null);
  });

  it('refuses a completion of an approval without a decision', () => {
    expect(() => requestStepCompletion(atApproval(), {}, at(20), TEST_ACTOR))
      .to.throw(DomainError)
      .with.property('code', 'decision_required');
  });

  it("applies the page's default decision once nobody decided in time, as the system", () => {
    const run = atApproval();
    const deadline = run.document.steps[1]!.decision_due_at!;
    expect(run.currentStepWakeAt!.toISOString()).to.equal(deadline);
    expect(wakeStep(run, new Date(Date.parse(deadline) - 1))).to.equal(undefined);
    const decided = wakeStep(run, new Date(deadline))!;
    expect(decided.currentStepName).to.equal('Pay');
    const event = decided.events.find((e) => e.type === 'step.approved')!;
    expect(event.actor).to.deep.equal(SYSTEM);
    expect(event.data).to.include({ timedOut: true, step: 'Approve' });
    // A person's decision waiting for a worker wins: the clock leaves the run alone.
    const waiting = requestStepCompletion(run, {}, at(20), TEST_ACTOR, undefined, {
      decision: 'rejected',
    });
    expect(wakeStep(waiting, new Date(deadline))).to.equal(undefined);
  });
});

describe('people: the clock and escalations', () => {
  it('marks overdue and escalates in order, each once per visit', () => {
    const pay = complete(atApproval(), 20, 'approved');
    const due = Date.parse(pay.document.steps[2]!.due_date!);
    expect(pay.currentStepWakeAt!.getTime()).to.equal(due);
    const first = wakeStep(pay, new Date(due))!;
    const made = first.events.slice(pay.events.length); // events accumulate until stored
    expect(made.map((e) => e.type)).to.deep.equal(['step.overdue', 'step.escalated']);
    expect(first.document.steps[2]).to.deep.include({
      escalated: 1,
      candidate_groups: ['finance', 'leads'],
      assignee: null,
    });
    expect(first.currentStepWakeAt!.getTime(), 'the next escalation').to.equal(due + 2 * HOUR);
    expect(wakeStep(first, new Date(due + HOUR)), 'nothing more owed yet').to.equal(undefined);
    const second = wakeStep(first, new Date(due + 2 * HOUR))!;
    expect(second.document.steps[2]).to.deep.include({ escalated: 2, assignee: 'boss' });
    expect(second.events.at(-1)!.data).to.include({ escalation: 1, assignee: 'boss' });
    expect(second.currentStepWakeAt).to.equal(null);
    expect(wakeStep(second, new Date(due + 10 * HOUR))).to.equal(undefined);
  });
});

describe('people: claims and the inbox terms', () => {
  it('refuses a claim of a step someone else holds, unless overridden', () => {
    const pay = complete(atApproval(), 20, 'approved');
    const fay = claimStep(pay, 'Pay', 'fay', false, at(30), TEST_ACTOR)!;
    expect(fay.currentStepAssignee).to.equal('fay');
    expect(claimStep(fay, 'Pay', 'fay', false, at(31), TEST_ACTOR), 'held already').to.equal(
      undefined,
    );
    expect(() => claimStep(fay, 'Pay', 'finn', false, at(31), TEST_ACTOR))
      .to.throw(DomainError)
      .with.property('code', 'step_already_claimed');
    expect(claimStep(fay, 'Pay', 'finn', true, at(31), TEST_ACTOR)!.currentStepAssignee).to.equal(
      'finn',
    );
    expect(() => unclaimStep(fay, 'Pay', 'finn', at(31), TEST_ACTOR))
      .to.throw(DomainError)
      .with.property('code', 'step_not_held');
  });

  it('gives a task its terms: an approval, candidates while unclaimed, labels; none when plain', () => {
    const approval = atApproval();
    expect(termsOf(approval).sort()).to.deep.equal(['k:approval', 'l:team:blue']);
    const pay = complete(approval, 20, 'approved');
    expect(termsOf(pay).sort()).to.deep.equal(['g:finance', 'l:team:blue']);
    const claimed = claimStep(pay, 'Pay', 'fay', false, at(30), TEST_ACTOR)!;
    expect(termsOf(claimed)).to.deep.equal(['l:team:blue']);
    expect(taskTermStatements([{ before: pay, after: claimed }])).to.have.length(2);

    const plain: Template = {
      ...expense,
      pages: [
        { name: 'A', inputFields: [] },
        { name: 'B', inputFields: [] },
      ],
    };
    const run = applyPending(newRun('p', 'org', plain, {}, {}, t0, TEST_ACTOR), at(1));
    const next = applyPending(requestStepCompletion(run, {}, at(5), TEST_ACTOR), at(6));
    expect(termsOf(run)).to.deep.equal([]);
    expect(
      taskTermStatements([{ before: run, after: next }]),
      'a plain run writes no term rows',
    ).to.deep.equal([]);
  });
});
