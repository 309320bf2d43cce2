// Moving a run onto another version, as a pure transition with a clock the test gives: the plan's
// checks, steps kept, passed over and waiting, values carried, dropped and defaulted, the step
// the run is at with its clock counted again from its start, and every refusal.
import { expect } from 'chai';
import { DomainError } from '../../src/errors.js';
import type { RunRecord } from '../../src/runs/run-record.js';
import {
  applyPending,
  migrateRun,
  newRun,
  planMigration,
  requestStepCompletion,
  wakeStep,
} from '../../src/runs/run-state.js';
import { taskTermStatements, termsOf } from '../../src/tasks/task-terms.js';
import type { Template } from '../../src/templates/template.js';
import { TEST_ACTOR } from '../support/actors.js';

const HOUR = 3600_000;
const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

const v1: Template = {
  id: 'tpl',
  organizationId: 'org',
  version: 1,
  name: 'Onboarding',
  pages: [
    {
      name: 'Details',
      inputFields: [
        { inputId: 'name', fieldName: 'Name' },
        { inputId: 'legacy', fieldName: 'Legacy code' },
        { inputId: 'days', fieldName: 'Days' },
      ],
    },
    { name: 'Review', dueInHours: 24 * 7, inputFields: [{ inputId: 'ok', fieldName: 'OK' }] },
    { name: 'Done', inputFields: [] },
  ],
};

/** Version 2: a page added before Review, Review due in a day, `legacy` gone, `days` a number. */
const v2: Template = {
  ...v1,
  version: 2,
  name: 'Onboarding (fixed)',
  pages: [
    {
      name: 'Details',
      inputFields: [
        { inputId: 'name', fieldName: 'Name' },
        { inputId: 'days', fieldName: 'Days', type: 'number', integer: true },
        { inputId: 'office', fieldName: 'Office', default: 'Berlin' },
      ],
    },
    { name: 'Equipment', inputFields: [] },
    {
      name: 'Manager review',
      dueInHours: 24,
      candidateGroups: ['managers'],
      inputFields: [{ inputId: 'ok', fieldName: 'OK' }],
    },
    { name: 'Done', inputFields: [] },
  ],
};

function complete(run: RunRecord, ms: number): RunRecord {
  return applyPending(requestStepCompletion(run, {}, at(ms), TEST_ACTOR), at(ms + 1));
}

/** A run of v1 at Review (started at 11 ms), with the values given. */
function atReview(values: Record<string, string> = { name: 'Ada', legacy: 'X1', days: '3' }) {
  const run = applyPending(
    newRun('run', 'org', v1, values, { Review: 'rita', Done: 'dan' }, t0, TEST_ACTOR),
    at(1),
  );
  return complete(run, 10);
}

const renamed = { Review: 'Manager review' };

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('migrating a run: the plan', () => {
  it('maps by name, with page_map over it, and keeps the order', () => {
    expect(planMigration(v1, v2, renamed).targetOf).to.deep.equal([0, 2, 3]);
    expect(planMigration(v1, v2).targetOf).to.deep.equal([0, undefined, 3]);
    expect(planMigration(v1, v2, { Done: null, ...renamed }).targetOf).to.deep.equal([
      0,
      2,
      undefined,
    ]);
  });

  it('refuses names neither version has, two pages onto one, and a crossed order', () => {
    const unknown = refusal(() => planMigration(v1, v2, { Nope: 'Done' }));
    expect(unknown).to.include({ code: 'invalid_page_map', field: '/page_map/Nope' });
    const noTarget = refusal(() => planMigration(v1, v2, { Review: 'Nope' }));
    expect(noTarget).to.include({ code: 'invalid_page_map', field: '/page_map/Review' });
    const twice = refusal(() => planMigration(v1, v2, { Review: 'Done' }));
    expect(twice.code).to.equal('invalid_page_map');
    expect(twice.message).to.match(/both map to 'Done'/);
    const crossed = refusal(() =>
      planMigration(v1, v2, { Details: 'Equipment', Review: 'Details' }),
    );
    expect(crossed.code).to.equal('invalid_page_map');
    expect(crossed.message).to.match(/keep their order/);
  });
});

describe('migrating a run', () => {
  it('moves forward: steps done kept, a new page passed over, values carried, dropped and defaulted', () => {
    const run = atReview();
    const now = at(2 * HOUR);
    const { after, report } = migrateRun(run, planMigration(v1, v2, renamed), now, TEST_ACTOR);
    expect(after.templateVersion).to.equal(2);
    expect(after.workflowName).to.equal('Onboarding (fixed)');
    expect(after.status).to.equal('active');
    const [details, equipment, review, done] = after.document.steps;
    expect(details).to.deep.equal({ ...run.document.steps[0], name: 'Details' });
    expect(equipment).to.deep.include({ name: 'Equipment', status: 'skipped' });
    expect(equipment!.skipped_at).to.equal(now.toISOString());
    expect(review).to.deep.include({
      name: 'Manager review',
      status: 'active',
      assignee: 'rita',
      started_at: at(11).toISOString(),
      // Counted again from the step's start: a day, not the week of version 1.
      due_date: at(11 + 24 * HOUR).toISOString(),
      candidate_groups: ['managers'],
    });
    expect(done).to.deep.include({ name: 'Done', status: 'waiting' });
    expect(after.document.current_step).to.equal(2);
    expect(after.currentStepName).to.equal('Manager review');
    expect(after.currentStepDueDate).to.deep.equal(at(11 + 24 * HOUR));
    expect(after.currentStepWakeAt).to.deep.equal(at(11 + 24 * HOUR));
    expect(after.document.input_fields).to.deep.equal({ name: 'Ada', days: '3', office: 'Berlin' });
    expect(after.document.user_assignments).to.deep.equal({
      'Manager review': 'rita',
      Done: 'dan',
    });
    expect(report).to.deep.equal({
      fromVersion: 1,
      toVersion: 2,
      workflowName: 'Onboarding (fixed)',
      pageMap: { Details: 'Details', Review: 'Manager review', Done: 'Done' },
      step: 'Manager review',
      assignee: 'rita',
      dueDate: at(11 + 24 * HOUR).toISOString(),
      droppedFields: { legacy: 'X1' },
      defaultedFields: ['office'],
      skippedSteps: ['Equipment'],
    });
    const made = after.events.slice(run.events.length);
    expect(made).to.have.length(1);
    expect(made[0]).to.deep.include({ type: 'run.migrated', seq: run.eventSeq + 1, data: report });
    expect(after.lastActivity).to.deep.equal(now);
    // The step has candidates now, but rita holds it: nobody can claim it.
    expect(termsOf(after)).to.deep.equal([]);
  });

  it('moves back to an older version, and a run moved there and back is where it was', () => {
    const run = atReview();
    const forward = migrateRun(run, planMigration(v1, v2, renamed), at(HOUR), TEST_ACTOR).after;
    const back = migrateRun(
      forward,
      planMigration(v2, v1, { 'Manager review': 'Review' }),
      at(2 * HOUR),
      TEST_ACTOR,
    );
    expect(back.after.templateVersion).to.equal(1);
    expect(back.report.unmappedPages).to.deep.equal(['Equipment']);
    expect(back.report.droppedFields).to.deep.equal({ office: 'Berlin' });
    expect(back.after.document.steps.map((s) => [s.name, s.status])).to.deep.equal([
      ['Details', 'completed'],
      ['Review', 'active'],
      ['Done', 'waiting'],
    ]);
    expect(back.after.currentStepDueDate).to.deep.equal(run.currentStepDueDate);
    // The skipped Equipment step is left behind; legacy was dropped on the way forward.
    expect(back.after.document.input_fields).to.deep.equal({ name: 'Ada', days: '3' });
  });

  it('refuses an unmapped current step, an incompatible value (or drops it), and runs that cannot move', () => {
    const run = atReview();
    const unmapped = refusal(() => migrateRun(run, planMigration(v1, v2), at(HOUR), TEST_ACTOR));
    expect(unmapped).to.include({ code: 'migration_step_unmapped', field: '/page_map/Review' });
    expect(unmapped.message).to.match(/'Review'/);

    const bad = atReview({ name: 'Ada', days: 'three' });
    const incompatible = refusal(() =>
      migrateRun(bad, planMigration(v1, v2, renamed), at(HOUR), TEST_ACTOR),
    );
    expect(incompatible).to.include({
      code: 'migration_incompatible_value',
      field: '/input_fields/days',
    });
    const dropped = migrateRun(bad, planMigration(v1, v2, renamed, true), at(HOUR), TEST_ACTOR);
    expect(dropped.report.droppedFields).to.deep.equal({ days: 'three' });
    expect(dropped.report.incompatibleFields).to.deep.equal(['days']);
    expect(dropped.after.document.input_fields).to.not.have.property('days');

    const same = refusal(() => migrateRun(run, planMigration(v1, v1), at(HOUR), TEST_ACTOR));
    expect(same.code).to.equal('migration_same_version');
    const pending = requestStepCompletion(run, {}, at(HOUR), TEST_ACTOR);
    expect(
      refusal(() => migrateRun(pending, planMigration(v1, v2, renamed), at(HOUR), TEST_ACTOR)).code,
    ).to.equal('completion_pending');
    const ended = complete(complete(run, 20), 30);
    expect(ended.status).to.equal('completed');
    expect(
      refusal(() => migrateRun(ended, planMigration(v1, v2, renamed), at(HOUR), TEST_ACTOR)).code,
    ).to.equal('run_not_migratable');
  });

  it('carries a pending run over: its start, waiting for a worker, starts it on the target', () => {
    const run = newRun('run', 'org', v1, { name: 'Ada' }, {}, t0, TEST_ACTOR);
    const { after } = migrateRun(run, planMigration(v1, v2, renamed), at(5), TEST_ACTOR);
    expect(after.status).to.equal('pending');
    expect(after.document.pending?.type).to.equal('start');
    expect(after.document.steps.every((s) => s.status === 'waiting')).to.equal(true);
    const started = applyPending(after, at(10));
    expect(started.currentStepName).to.equal('Details');
    expect(started.templateVersion).to.equal(2);
  });

  it('keeps an overdue step overdue only while its new due time has passed, and the clock wakes it at the new time', () => {
    const run = atReview();
    // Version 1's week has passed: the step is overdue.
    const overdue = wakeStep(run, at(8 * 24 * HOUR))!;
    expect(overdue.currentStepOverdue).to.equal(true);
    // A target whose due time is later than now: no longer overdue, woken at the new due time.
    const later: Template = {
      ...v2,
      version: 3,
      pages: v2.pages.map((p, i) => (i === 2 ? { ...p, dueInHours: 24 * 30 } : p)),
    };
    const moved = migrateRun(
      overdue,
      planMigration(v1, later, renamed),
      at(9 * 24 * HOUR),
      TEST_ACTOR,
    ).after;
    expect(moved.currentStepOverdue).to.equal(false);
    expect(moved.currentStepWakeAt).to.deep.equal(at(11 + 30 * 24 * HOUR));
    expect(wakeStep(moved, at(29 * 24 * HOUR))).to.equal(undefined);
    const again = wakeStep(moved, at(31 * 24 * HOUR))!;
    expect(again.events.slice(moved.events.length).map((e) => e.type)).to.deep.equal([
      'step.overdue',
    ]);
    // A target due sooner: still overdue, and not marked again.
    const sooner = migrateRun(
      overdue,
      planMigration(v1, v2, renamed),
      at(9 * 24 * HOUR),
      TEST_ACTOR,
    ).after;
    expect(sooner.currentStepOverdue).to.equal(true);
    expect(sooner.currentStepWakeAt).to.equal(null);
    // Not yet overdue, but the new due time has passed: the clock owes it at once.
    const fresh = migrateRun(
      run,
      planMigration(v1, v2, renamed),
      at(2 * 24 * HOUR),
      TEST_ACTOR,
    ).after;
    expect(fresh.currentStepWakeAt).to.deep.equal(at(11 + 24 * HOUR));
    const woken = wakeStep(fresh, at(2 * 24 * HOUR))!;
    expect(woken.events.slice(fresh.events.length).map((e) => e.type)).to.deep.equal([
      'step.overdue',
    ]);
  });

  it("rewrites the inbox's terms when the step's candidates change", () => {
    const run = applyPending(newRun('run', 'org', v1, {}, {}, t0, TEST_ACTOR), at(1));
    const atReviewUnassigned = complete(run, 10);
    const { after } = migrateRun(
      atReviewUnassigned,
      planMigration(v1, v2, renamed),
      at(HOUR),
      TEST_ACTOR,
    );
    expect(termsOf(after)).to.deep.equal(['g:managers']);
    expect(taskTermStatements([{ before: atReviewUnassigned, after }])).to.have.length(2);
  });
});
