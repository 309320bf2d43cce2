// The statements that write runs (run-sql.ts), as text: every column a change alters is one
// its statement writes, values are escaped literals, and each form has the shape MySQL needs.
// (That MySQL takes them and what it stores: test/integration/applied-writes.test.ts.)
import { TEST_ACTOR } from '../support/actors.js';
import { expect } from 'chai';
import { sqlLiteral } from '../../src/lib/sql-literal.js';
import { INSERT_COLUMNS, RUN_COLUMNS, toRow, type RunColumn } from '../../src/runs/run-columns.js';
import {
  ROW_BY_ROW_MAX,
  appliedWrite,
  type AppliedWrite,
  changeAtOnceSql,
  insertEventsStatements,
  eventRowsOf,
  insertRunsStatements,
  requestSql,
  unreadableFailedStatements,
  type AppliedChange,
  assumptionsHold,
  templateGuardSql,
} from '../../src/runs/run-sql.js';
import {
  applyPending,
  cancelRun,
  failRun,
  wakeStep,
  newRun,
  requestStepCompletion,
  retryRun,
} from '../../src/runs/run-state.js';
import type { RunRecord } from '../../src/runs/run-record.js';
import type { Template } from '../../src/templates/template.js';

const template: Template = {
  id: 'tpl',
  organizationId: 'org',
  version: 1,
  name: "Onboarding 'quoted' \\ back",
  pages: [
    { name: 'One', dueInHours: 1, inputFields: [{ inputId: 'a', fieldName: 'A' }] },
    { name: 'Two', inputFields: [{ inputId: 'b', fieldName: 'B' }] },
  ],
};

const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const fresh = (run: RunRecord): RunRecord => ({ ...run, events: [] }); // as read from MySQL

const created = fresh(
  newRun('run-1', 'org', template, { a: "it's \\ \n\0 ✓" }, { One: 'ann' }, t0, TEST_ACTOR),
);
const started = fresh(applyPending(created, at(10)));
const requested = fresh(requestStepCompletion(started, { a: 'x' }, at(20), TEST_ACTOR));
const failed = fresh(failRun(requested, 'could not', at(30)));

/** Every change the state machine makes, with the statement form that stores it. */
const changes: Array<{
  name: string;
  form: 'applied' | 'atOnce' | 'request';
  change: AppliedChange;
}> = [
  {
    name: 'start',
    form: 'applied',
    change: { before: created, after: applyPending(created, at(10)) },
  },
  {
    name: 'next step',
    form: 'applied',
    change: { before: requested, after: applyPending(requested, at(25)) },
  },
  {
    name: 'last step',
    form: 'applied',
    change: (() => {
      const last = fresh(
        requestStepCompletion(fresh(applyPending(requested, at(25))), {}, at(26), TEST_ACTOR),
      );
      return { before: last, after: applyPending(last, at(27)) };
    })(),
  },
  { name: 'request', form: 'request', change: { before: started, after: requested } },
  {
    name: 'cancel',
    form: 'atOnce',
    change: { before: requested, after: cancelRun(requested, 'no', at(30), TEST_ACTOR) },
  },
  { name: 'fail', form: 'atOnce', change: { before: requested, after: failed } },
  {
    name: 'retry',
    form: 'atOnce',
    change: { before: failed, after: retryRun(failed, at(40), TEST_ACTOR) },
  },
  {
    name: 'overdue',
    form: 'atOnce',
    change: { before: started, after: wakeStep(started, at(2 * 3600_000))! },
  },
];

/** The columns whose stored value the change alters. */
function altered({ before, after }: AppliedChange): RunColumn[] {
  const a = toRow(before);
  const b = toRow(after);
  return INSERT_COLUMNS.filter((c) => sqlLiteral(a[c]) !== sqlLiteral(b[c]));
}

/** The columns a statement assigns (`col = …` in its SET). */
function assigned(sql: string): Set<string> {
  const set = /\bSET (.*?) WHERE\b/s.exec(sql)?.[1] ?? '';
  return new Set([...set.matchAll(/(?:^|, )(?:r\.)?`?(\w+)`? = /g)].map((m) => m[1]!));
}

/** The first statement a worker's write sends: its UPDATE. */
function firstStatement(write: AppliedWrite): string {
  return ('statements' in write ? write.statements : write.updates)[0]!;
}

describe('run statements', () => {
  for (const { name, form, change } of changes) {
    it(`write every column the change alters: ${name}`, () => {
      const columns = altered(change);
      expect(columns.length, 'the change alters something').to.be.greaterThan(0);
      const statements =
        form === 'request'
          ? [requestSql(change.before, change.after)]
          : form === 'atOnce'
            ? [changeAtOnceSql(change).update]
            : [
                firstStatement(appliedWrite([change], 'utf8mb4_general_ci')),
                // the joined form, for batches past ROW_BY_ROW_MAX
                firstStatement(
                  appliedWrite(
                    Array.from({ length: ROW_BY_ROW_MAX + 1 }, () => change),
                    'utf8mb4_general_ci',
                  ),
                ),
              ];
      for (const sql of statements) {
        const written = assigned(sql);
        for (const column of columns)
          expect([...written], `${column} in ${sql}`).to.include(column);
        // and never what identifies the run
        for (const column of INSERT_COLUMNS.filter((c) => RUN_COLUMNS[c].role === 'identity')) {
          expect([...written]).to.not.include(column);
        }
      }
    });
  }

  it('insert every column of a new run, values as escaped literals, no placeholders', () => {
    const [sql, more] = insertRunsStatements([created, started]);
    expect(more).to.equal(undefined);
    const columns = /\(([^)]*)\) VALUES/.exec(sql!)![1]!.split(', ');
    expect(columns).to.deep.equal(INSERT_COLUMNS.map((c) => `\`${c}\``));
    // The JSON document's quote, backslash, newline and NUL are escaped for a quoted literal.
    expect(sql).to.include(String.raw`"it\'s \\\\ \\n\\u0000 ✓"`);
    expect(sql).to.include(String.raw`'Onboarding \'quoted\' \\ back'`);
    expect(sql).to.not.match(/\?/);
  });

  it('insert events guarded against a second writer of the same change', () => {
    const [sql] = insertEventsStatements(eventRowsOf([applyPending(created, at(10))]));
    expect(sql).to.match(
      /^INSERT INTO run_events \(`run_id`, .*\) VALUES \('run-1', 'org', 2, 'run\.started', '2026-01-01 00:00:00\.010', /,
    );
    expect(sql).to.match(/ON DUPLICATE KEY UPDATE run_events\.seq = run_events\.seq$/);
  });

  it('guard each change by the version its writer read', () => {
    const write = appliedWrite([changes[0]!.change], 'utf8mb4_general_ci');
    if (!('statements' in write)) throw new Error('one change goes as statements');
    const [update, event] = write.statements;
    expect(update).to.match(/WHERE id = 'run-1' AND applied_seq = 0 AND event_seq = 1$/);
    // the event is written only if the row now holds this change
    expect(event).to.match(
      /FROM workflow_runs WHERE id = 'run-1' AND applied_seq = 1 AND event_seq = 2 AND status = 'active'/,
    );
    const { update: cancel } = changeAtOnceSql(changes[4]!.change);
    expect(cancel).to.match(
      /WHERE id = 'run-1' AND applied_seq = 1 AND event_seq = 2 AND requested_seq = 2$/,
    );
    expect(requestSql(started, requested)).to.match(
      /AND requested_seq = 1 AND applied_seq = 1 AND event_seq = 2 AND status = 'active'$/,
    );
  });

  it('mark a run whose document cannot be read failed, keeping what it held', () => {
    const { update, event } = unreadableFailedStatements(
      {
        id: 'r',
        organization_id: 'o',
        run_json: "{broken'",
        current_step_name: null,
        applied_seq: 3,
        event_seq: 4,
      },
      'bad',
      at(1),
    );
    expect(update).to.include(String.raw`"unreadable_run_json":"{broken\'"`);
    expect(update).to.match(
      /AND applied_seq = 3 AND event_seq = 4 AND status IN \('pending', 'active'\)$/,
    );
    expect(event).to.include(`'r', 'o', 5, 'run.failed'`);
  });
});

describe("new runs' template assumptions", () => {
  const head = (id: string, latest: number, archived = 0) => ({
    id,
    latest_version: latest,
    archived,
  });

  it('hold while each head is as assumed: the latest version, or (pinned) only not archived', () => {
    const latest = { templateId: 't', latestVersion: 2 };
    const pinned = { templateId: 'u', latestVersion: undefined };
    expect(assumptionsHold([latest, pinned], [head('t', 2), head('u', 7)])).to.equal(true);
    expect(assumptionsHold([latest], [head('t', 3)]), 'a newer version saved').to.equal(false);
    expect(assumptionsHold([latest], [head('t', 2, 1)]), 'archived').to.equal(false);
    expect(assumptionsHold([pinned], [head('u', 7, 1)]), 'pinned, archived').to.equal(false);
    expect(assumptionsHold([latest], []), 'the head not read').to.equal(false);
  });

  it('are read once per template, without a lock', () => {
    const sql = templateGuardSql([
      { templateId: "t'1", latestVersion: 1 },
      { templateId: "t'1", latestVersion: undefined },
      { templateId: 't2', latestVersion: 4 },
    ]);
    expect(sql).to.equal(
      "SELECT id, latest_version, archived FROM workflow_templates WHERE id IN ('t\\'1', 't2')",
    );
  });
});
