// The inbox's terms: what a task is found by that its run's own columns cannot index (a
// candidate user or group of an unclaimed step, an approval, a label), one row each in
// run_task_terms, in the inbox's order (task_due, task_started, run seq). This module says which
// terms a run's task has, and writes the statements that keep a changed run's rows as its task
// is now, for every writer of runs' changes (run-sql.ts, the bulk actions) to send after the
// run's UPDATE in the same transaction. A run without terms before or after a change (a plain
// run without labels) gets no statement at all.
import { sqlLiteral, valuesTable } from '../lib/sql-literal.js';
import type { RunRecord } from '../runs/run-record.js';

/** The term of a task that waits for a decision. */
export const APPROVAL_TERM = 'k:approval';
export const userTerm = (user: string) => `u:${user}`;
export const groupTerm = (group: string) => `g:${group}`;
export const labelTerm = (key: string, value: string) => `l:${key}:${value}`;

/**
 * The terms of the run's task: none unless the run is active with a current step. Candidates
 * count only while nobody holds the step (they are who may claim it); labels and an approval
 * while the step is current.
 */
export function termsOf(run: RunRecord): string[] {
  const doc = run.document;
  if (run.status !== 'active' || doc.current_step === null) return [];
  const step = doc.steps[doc.current_step];
  if (!step) return [];
  const terms: string[] = [];
  if (doc.template.pages[doc.current_step]?.kind === 'approval') terms.push(APPROVAL_TERM);
  if (step.assignee === null) {
    for (const user of step.candidate_users ?? []) terms.push(userTerm(user));
    for (const group of step.candidate_groups ?? []) terms.push(groupTerm(group));
  }
  for (const [key, value] of Object.entries(doc.labels ?? {})) terms.push(labelTerm(key, value));
  return [...new Set(terms)];
}

/**
 * The DELETE of the term rows of the runs `where` selects from workflow_runs `r` (each run's
 * rows found by its seq): for every writer that ends or changes a run's task.
 */
export function deleteTermsSql(where: string): string {
  return (
    'DELETE t FROM workflow_runs r FORCE INDEX (workflow_runs_id_unique) ' +
    `STRAIGHT_JOIN run_task_terms t FORCE INDEX (run_task_terms_run) ON t.run_seq = r.seq WHERE ${where}`
  );
}

/** What the rows of a run's terms hold: the terms and the task's place in the inbox's order. */
function rowsKey(run: RunRecord): string {
  const terms = termsOf(run);
  if (terms.length === 0) return '';
  return JSON.stringify([
    terms,
    run.currentStepDueDate?.getTime() ?? null,
    run.currentStepStartedAt?.getTime() ?? null,
  ]);
}

/**
 * The statements that make the terms' rows of changed runs what their tasks are now: for each
 * run whose rows would differ, a DELETE of its rows and an INSERT of its terms, each taking
 * effect only if the run's row holds the change (its id, applied_seq and event_seq after it), so
 * a writer whose change another writer made first, or that lost its guard, writes nothing. The
 * rows take the task's order (task_due, task_started, seq) from the run's row itself.
 */
export function taskTermStatements(
  changes: ReadonlyArray<{ before: RunRecord | undefined; after: RunRecord }>,
): string[] {
  const statements: string[] = [];
  for (const { before, after } of changes) {
    const key = rowsKey(after);
    if (key === (before ? rowsKey(before) : '')) continue;
    const held =
      `r.id = ${sqlLiteral(after.id)} AND r.applied_seq = ${after.appliedSeq} ` +
      `AND r.event_seq = ${after.eventSeq}`;
    statements.push(deleteTermsSql(held));
    const terms = termsOf(after);
    if (terms.length === 0) continue;
    statements.push(
      'INSERT INTO run_task_terms (organization_id, term, task_due, task_started, run_seq) ' +
        'SELECT r.organization_id, v.term, r.task_due, r.task_started, r.seq ' +
        `FROM workflow_runs r JOIN ${valuesTable(
          ['term'],
          terms.map((term) => `(${sqlLiteral(term)})`),
        )} AS v ON v.term IS NOT NULL ` +
        `WHERE ${held} AND r.task_due IS NOT NULL AND r.task_started IS NOT NULL`,
    );
  }
  return statements;
}
