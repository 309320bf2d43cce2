// The list and retention benchmarks' data: an organization's runs written in bulk. One run is
// made and stored the way the service does it, and the database copies it in chunks with
// INSERT ... SELECT over MariaDB's sequence tables, each copy with its own id.
// - seedRuns (list, inbox): started runs; a few columns vary with the copy's number, so that the
//   filters have minorities to find, spread evenly through the organization's runs (see
//   SEEDED_FILTERS, SEEDED_TASK_FILTERS), with the inbox's term rows.
// - seedFinishedRuns (retention): completed runs, finished at a given time in the past, each
//   with the history a completed run has (its run_events rows, copied with it).
// - copyRun itself (rules): copies of a run owing a step's completion, for a worker to drain.
import { SYSTEM } from '../src/audit/actor.js';
import type { Db } from '../src/db.js';
import { newId } from '../src/lib/ids.js';
import type { RunRecord } from '../src/runs/run-record.js';
import { applyPending, newRun, requestStepCompletion } from '../src/runs/run-state.js';
import { INSERT_COLUMNS } from '../src/runs/run-columns.js';
import { sqlLiteral } from '../src/lib/sql-literal.js';
import { APPROVAL_TERM, groupTerm, labelTerm } from '../src/tasks/task-terms.js';
import { TemplateStore } from '../src/templates/template-store.js';
import { insertRuns } from './insert-runs.js';
import { BENCH_TEMPLATE, INPUT_FIELDS, USER_ASSIGNMENTS, type Tenant } from './fixtures.js';

const CHUNK = 100_000;

// Every stored column but the id, which each copy gets anew.
const COLUMNS = INSERT_COLUMNS.filter((c) => c !== 'id');

/**
 * Columns that vary with the copy's number s.seq: the minorities the list and inbox filters
 * find (an assignee, none, overdue, another template), and due dates spread over a thousand
 * minutes, one task in ten without one.
 */
const varied = (rareTemplateId: string): Partial<Record<(typeof COLUMNS)[number], string>> => ({
  status:
    "CASE WHEN s.seq % 10 = 0 THEN 'completed' WHEN s.seq % 100 = 5 THEN 'failed' ELSE r.status END",
  current_step_assignee:
    "CASE WHEN s.seq % 100 = 7 THEN 'rare-assignee' WHEN s.seq % 100 = 13 THEN NULL ELSE r.current_step_assignee END",
  current_step_overdue: 'CASE WHEN s.seq % 50 = 3 THEN 1 ELSE 0 END',
  current_step_due_date:
    'CASE WHEN s.seq % 10 = 1 THEN NULL ELSE DATE_ADD(COALESCE(r.current_step_due_date, r.created_at), INTERVAL s.seq % 1000 MINUTE) END',
  template_id: `CASE WHEN s.seq % 100 = 19 THEN ${sqlLiteral(rareTemplateId)} ELSE r.template_id END`,
});

/** Filtered list queries whose matches are 1 in 100 or rarer, and one of 1 in 10, seeded above. */
export const SEEDED_FILTERS = {
  status: 'status=completed',
  statuses: 'status=failed,completed',
  assignee: 'assignee=rare-assignee',
  overdue: 'overdue=true',
  label: 'label=cohort:rare',
} as const;

/**
 * The inbox's queries (GET /get-tasks), each a minority of 1 in 100 or rarer but the first two
 * (every task, in each order); `{rareTemplate}` and `{dueBefore}` are filled in by the phase.
 */
export const SEEDED_TASK_FILTERS = {
  all: '',
  started: 'order=started',
  assignee: 'assignee=rare-assignee',
  unassigned: 'unassigned=true',
  claimable: 'claimable_by=nobody&group=rare-group',
  overdue: 'overdue=true',
  dueBefore: 'due_before={dueBefore}',
  template: 'template_id={rareTemplate}',
  approval: 'kind=approval',
  label: 'label=cohort:rare',
} as const;

/** The label 1 run in 101 carries (SEEDED_FILTERS.label), as the service writes it. */
// Every 101st run by its row's seq: a modulus prime to the copy numbers' tens, so that the
// labelled runs are as often active as the others (the statuses vary by copy number).
const SEEDED_LABEL = { key: 'cohort', value: 'rare', everyNth: 101, remainder: 11 } as const;

/**
 * Gives the organization `count` started runs (and a second template, which 1 in 100 of them
 * name); returns the seconds it took and that template's id.
 */
export async function seedRuns(
  db: Db,
  tenant: Tenant,
  count: number,
): Promise<{ seconds: number; rareTemplateId: string }> {
  const started = Date.now();
  const rare = await new TemplateStore(db).insert(tenant.orgId, {
    ...BENCH_TEMPLATE,
    name: 'Bench rare template',
  });
  const now = new Date();
  const prototype = applyPending(
    newRun(newId(), tenant.orgId, tenant.template, INPUT_FIELDS, USER_ASSIGNMENTS, now, SYSTEM),
    now,
  );
  await insertRuns(db, [prototype]);
  await copyRun(db, prototype.id, count - 1, varied(rare.id), false);
  // The seeded label: a run_labels row per labelled run, as a create with labels writes it.
  await db.raw(
    'INSERT INTO run_labels (organization_id, label_key, label_value, run_seq, run_id) ' +
      'SELECT organization_id, ?, ?, seq, id FROM workflow_runs ' +
      'WHERE organization_id = ? AND seq % ? = ?',
    [
      SEEDED_LABEL.key,
      SEEDED_LABEL.value,
      tenant.orgId,
      SEEDED_LABEL.everyNth,
      SEEDED_LABEL.remainder,
    ],
  );
  await seedTaskTerms(db, tenant.orgId);
  return { seconds: (Date.now() - started) / 1000, rareTemplateId: rare.id };
}

/**
 * The inbox's term rows of the seeded runs, as a change of each would write them
 * (src/tasks/task-terms.ts): the unassigned ones' candidate group, an approval for 1 in 100,
 * and the label's; active runs only.
 */
async function seedTaskTerms(db: Db, organizationId: string): Promise<void> {
  const insert = (term: string, where: string) =>
    db.raw(
      'INSERT INTO run_task_terms (organization_id, term, task_due, task_started, run_seq) ' +
        `SELECT organization_id, ?, task_due, task_started, seq FROM workflow_runs r ` +
        `WHERE organization_id = ? AND task_due IS NOT NULL AND ${where}`,
      [term, organizationId],
    );
  await insert(groupTerm('rare-group'), 'current_step_assignee IS NULL');
  await insert(APPROVAL_TERM, 'seq % 103 = 17');
  await insert(
    labelTerm(SEEDED_LABEL.key, SEEDED_LABEL.value),
    `seq % ${SEEDED_LABEL.everyNth} = ${SEEDED_LABEL.remainder}`,
  );
}

/**
 * Copies the stored run `count` times, in chunks (a chunk's runs, then with `events` their
 * history, copied from the run's own run_events rows). Copies get UUIDv7-shaped ids: a random
 * prefix, then a counter, so they are unique and arrive in index order like the service's
 * time-ordered ids.
 */
export async function copyRun(
  db: Db,
  prototypeId: string,
  count: number,
  varied: Partial<Record<(typeof COLUMNS)[number], string>>,
  events: boolean,
): Promise<void> {
  const idPrefix = newId().slice(0, 24);
  const copyId = "CONCAT(?, LPAD(HEX(s.seq), 12, '0'))";
  for (let from = 1; from <= count; from += CHUNK) {
    const to = Math.min(count, from + CHUNK - 1);
    await db.raw(
      `INSERT INTO workflow_runs (id, ${COLUMNS.join(', ')})
       SELECT ${copyId}, ${COLUMNS.map((c) => varied[c] ?? `r.${c}`).join(', ')}
       FROM workflow_runs r JOIN seq_${from}_to_${to} s
       WHERE r.id = ?
       ORDER BY s.seq`,
      [idPrefix, prototypeId],
    );
    if (!events) continue;
    await db.raw(
      `INSERT INTO run_events (run_id, organization_id, seq, type, at, data, actor, dispatched)
       SELECT ${copyId}, e.organization_id, e.seq, e.type, e.at, e.data, e.actor, e.dispatched
       FROM run_events e JOIN seq_${from}_to_${to} s
       WHERE e.run_id = ?
       ORDER BY s.seq, e.seq`,
      [idPrefix, prototypeId],
    );
  }
}

/** Values for each input of the page (what a user would fill in). */
const filled = (run: RunRecord, step: number) =>
  Object.fromEntries(
    (run.document.template.pages[step]?.inputFields ?? []).map((f) => [f.inputId, 'bench']),
  );

/**
 * Gives the organization `count` completed runs that finished at `finishedAt`, each with the
 * history of a run that went through every step (created, started, each step completed,
 * completed), already dispatched (owed to no webhook). Returns the seconds it took.
 */
export async function seedFinishedRuns(
  db: Db,
  tenant: Tenant,
  count: number,
  finishedAt: Date,
): Promise<number> {
  const started = Date.now();
  let run = applyPending(
    newRun(
      newId(),
      tenant.orgId,
      tenant.template,
      INPUT_FIELDS,
      USER_ASSIGNMENTS,
      finishedAt,
      SYSTEM,
    ),
    finishedAt,
  );
  while (run.status === 'active' && run.document.current_step !== null) {
    const step = run.document.current_step;
    run = applyPending(
      requestStepCompletion(run, filled(run, step), finishedAt, SYSTEM),
      finishedAt,
    );
  }
  if (run.status !== 'completed') throw new Error(`seed: the prototype run is ${run.status}`);
  await insertRuns(db, [run]);
  await db('run_events').where({ run_id: run.id }).update({ dispatched: true });
  await copyRun(db, run.id, count - 1, {}, true);
  return (Date.now() - started) / 1000;
}
