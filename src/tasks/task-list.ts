// The task inbox's reads: a page of an organization's tasks (every active run's current step),
// filtered, in one of two orders, from a keyset position. Each page is a range scan of one
// index chosen by the filters (driverOf), reading about `limit` entries when the other filters
// match most of what it reads, at any organization size:
//   - run_task_terms (claimable_by: one scan per candidate term, merged; kind=approval; a label),
//     each in either order;
//   - workflow_runs' task indexes (migrations/20261128010000_task_inbox.ts) by assignee (or
//     none), template, or overdue, ordered by due date then start; the inbox without those
//     filters reads the overdue index's two halves (overdue and not) and merges them. Ordered by
//     start alone, only the unfiltered inbox has its index; the others read the matching tasks
//     (active runs only, never the finished ones) and sort them.
// The other filters are checked on each run the scan reads (a primary-key lookup from a term).
import type { Db } from '../db.js';
import type { LabelMatch } from '../runs/run-labels.js';
import { APPROVAL_TERM, groupTerm, labelTerm, userTerm } from './task-terms.js';

export type TaskOrder = 'due' | 'started';

export interface TaskFilter {
  assignee?: string;
  /** Unclaimed tasks this user may claim, as a candidate user or through one of the groups. */
  claimableBy?: { user: string; groups: readonly string[] };
  unassigned?: boolean;
  overdue?: boolean;
  dueBefore?: Date;
  dueAfter?: Date;
  templateId?: string;
  kind?: 'step' | 'approval';
  labels?: LabelMatch[];
}

/** Where a page starts: after this task, in the page's order (due is ignored ordered by start). */
export interface TaskPosition {
  due: Date;
  started: Date;
  seq: number;
}

/** What a task list reads of a run. */
export interface TaskRow {
  seq: number;
  id: string;
  template_id: string;
  workflow_name: string;
  current_step_index: number;
  current_step_name: string;
  current_step_assignee: string | null;
  current_step_due_date: Date | null;
  current_step_overdue: number;
  task_due: Date;
  task_started: Date;
  run_json: string;
  template_version: number;
}

const TASK_COLUMNS = [
  'seq',
  'id',
  'template_id',
  'template_version',
  'workflow_name',
  'current_step_index',
  'current_step_name',
  'current_step_assignee',
  'current_step_due_date',
  'current_step_overdue',
  'task_due',
  'task_started',
  'run_json',
] as const;

/** The index (or terms) a page scans. */
type Driver =
  | { table: 'terms'; terms: string[] }
  /**
   * A scan of one of the runs' task indexes: for each of `values`, the range where `column`
   * holds it (one scan each, merged); none: the whole index.
   */
  | { table: 'runs'; index: string; column?: string; values?: Array<string | number | null> };

function driverOf(filter: TaskFilter, order: TaskOrder): Driver {
  if (filter.claimableBy) {
    const { user, groups } = filter.claimableBy;
    return { table: 'terms', terms: [userTerm(user), ...groups.map(groupTerm)] };
  }
  if (filter.kind === 'approval') return { table: 'terms', terms: [APPROVAL_TERM] };
  const label = filter.labels?.[0];
  if (label) return { table: 'terms', terms: [labelTerm(label.key, label.value)] };
  const assignee = 'workflow_runs_tasks_assignee';
  if (filter.assignee !== undefined) {
    return {
      table: 'runs',
      index: assignee,
      column: 'current_step_assignee',
      values: [filter.assignee],
    };
  }
  if (filter.unassigned === true) {
    return { table: 'runs', index: assignee, column: 'current_step_assignee', values: [null] };
  }
  if (filter.templateId !== undefined) {
    return {
      table: 'runs',
      index: 'workflow_runs_tasks_template',
      column: 'template_id',
      values: [filter.templateId],
    };
  }
  // By due date, every task is in the overdue index: its two halves (overdue or not), merged.
  // One index fewer for every change of every run to keep (see the migration).
  const overdue = filter.overdue === undefined ? [0, 1] : [filter.overdue ? 1 : 0];
  if (filter.overdue !== undefined || order === 'due') {
    return {
      table: 'runs',
      index: 'workflow_runs_tasks_overdue',
      column: 'current_step_overdue',
      values: overdue,
    };
  }
  return { table: 'runs', index: 'workflow_runs_tasks_started' };
}

type Value = string | number | Date;

/**
 * `x` after the position, in the order: (due, started, seq) or (started, seq), expanded so
 * that MariaDB's range optimizer reads it as ranges of the index.
 */
function after(x: string, seq: string, order: TaskOrder, at: TaskPosition | null) {
  if (!at) {
    return { sql: `${x}.task_due IS NOT NULL AND ${x}.task_started IS NOT NULL`, values: [] };
  }
  if (order === 'started') {
    return {
      sql: `(${x}.task_started > ? OR (${x}.task_started = ? AND ${seq} > ?))`,
      values: [at.started, at.started, at.seq],
    };
  }
  return {
    sql:
      `(${x}.task_due > ? OR (${x}.task_due = ? AND ${x}.task_started > ?) ` +
      `OR (${x}.task_due = ? AND ${x}.task_started = ? AND ${seq} > ?))`,
    values: [at.due, at.due, at.started, at.due, at.started, at.seq],
  };
}

const orderBy = (x: string, seq: string, order: TaskOrder) =>
  order === 'due' ? `${x}.task_due, ${x}.task_started, ${seq}` : `${x}.task_started, ${seq}`;

/** Whether the run `r` has a term (organization, term): a primary-key lookup by its order. */
const HAS_TERM =
  'EXISTS (SELECT 1 FROM run_task_terms k WHERE k.organization_id = ? AND k.term = ? ' +
  'AND k.task_due = r.task_due AND k.task_started = r.task_started AND k.run_seq = r.seq)';

/** The filters not answered by the driver, checked on the run `r` (and its terms). */
function checks(
  organizationId: string,
  filter: TaskFilter,
  driver: Driver,
): { sql: string[]; values: Value[] } {
  const sql: string[] = [];
  const values: Value[] = [];
  const add = (condition: string, ...v: Value[]) => {
    sql.push(condition);
    values.push(...v);
  };
  const drivenBy = (column: string) => driver.table === 'runs' && driver.column === column;
  if (filter.assignee !== undefined && !drivenBy('current_step_assignee')) {
    add('r.current_step_assignee = ?', filter.assignee);
  }
  if (
    filter.unassigned !== undefined &&
    !(filter.unassigned && drivenBy('current_step_assignee'))
  ) {
    add(
      filter.unassigned ? 'r.current_step_assignee IS NULL' : 'r.current_step_assignee IS NOT NULL',
    );
  }
  if (filter.templateId !== undefined && !drivenBy('template_id')) {
    add('r.template_id = ?', filter.templateId);
  }
  if (filter.overdue !== undefined && !drivenBy('current_step_overdue')) {
    add('r.current_step_overdue = ?', filter.overdue ? 1 : 0);
  }
  // On the run's own task_due, so that a scan of a task index reads them as its range.
  if (filter.dueBefore) add('r.task_due < ?', filter.dueBefore);
  if (filter.dueAfter)
    add('r.task_due > ? AND r.current_step_due_date IS NOT NULL', filter.dueAfter);
  const drivenByTerm = (t: string) => driver.table === 'terms' && driver.terms.includes(t);
  if (filter.kind === 'approval' && !drivenByTerm(APPROVAL_TERM)) {
    add(HAS_TERM, organizationId, APPROVAL_TERM);
  }
  if (filter.kind === 'step') add(`NOT ${HAS_TERM}`, organizationId, APPROVAL_TERM);
  for (const label of filter.labels ?? []) {
    const t = labelTerm(label.key, label.value);
    if (!drivenByTerm(t)) add(HAS_TERM, organizationId, t);
  }
  // Claimable: nobody holds it (its candidate terms exist only then, but a term row and its run
  // are read apart: the run says).
  if (filter.claimableBy) add('r.current_step_assignee IS NULL');
  return { sql, values };
}

/**
 * A page of the organization's tasks after `at`, in `order`, at most `limit`. Rows come whole
 * (run_json too) for the task's view: its candidates, kind and labels are in its document.
 */
export async function listTasks(
  db: Db,
  organizationId: string,
  filter: TaskFilter,
  order: TaskOrder,
  limit: number,
  at: TaskPosition | null,
): Promise<TaskRow[]> {
  const driver = driverOf(filter, order);
  const extra = checks(organizationId, filter, driver);
  const columns = TASK_COLUMNS.map((c) => `r.${c}`).join(', ');

  if (driver.table === 'terms') {
    const index = order === 'due' ? 'PRIMARY' : 'run_task_terms_started';
    const pages = await Promise.all(
      [...new Set(driver.terms)].map(async (termValue) => {
        const keyset = after('t', 't.run_seq', order, at);
        const where = ['t.organization_id = ?', 't.term = ?', keyset.sql, 'r.organization_id = ?'];
        const values: Value[] = [organizationId, termValue, ...keyset.values, organizationId];
        // The due range on the scan itself, as for the runs' indexes.
        if (filter.dueBefore) {
          where.push('t.task_due < ?');
          values.push(filter.dueBefore);
        }
        if (filter.dueAfter) {
          where.push('t.task_due > ?');
          values.push(filter.dueAfter);
        }
        const [rows] = (await db.raw(
          `SELECT STRAIGHT_JOIN ${columns} FROM run_task_terms t FORCE INDEX (${index}) ` +
            'JOIN workflow_runs r ON r.seq = t.run_seq ' +
            // The run as the term says: a row changed since (read apart) is left to its terms.
            'AND r.task_due = t.task_due AND r.task_started = t.task_started ' +
            `WHERE ${[...where, ...extra.sql].join(' AND ')} ` +
            `ORDER BY ${orderBy('t', 't.run_seq', order)} LIMIT ?`,
          [...values, ...extra.values, limit],
        )) as [TaskRow[]];
        return rows;
      }),
    );
    return mergePages(pages, order, limit);
  }

  const scan = async (value: string | number | null | undefined): Promise<TaskRow[]> => {
    const keyset = after('r', 'r.seq', order, at);
    const where = ['r.organization_id = ?'];
    const values: Value[] = [organizationId];
    if (driver.column !== undefined) {
      if (value === null) where.push(`r.${driver.column} IS NULL`);
      else {
        where.push(`r.${driver.column} = ?`);
        values.push(value!);
      }
    }
    where.push(keyset.sql);
    values.push(...keyset.values);
    const [rows] = (await db.raw(
      `SELECT ${columns} FROM workflow_runs r FORCE INDEX (${driver.index}) ` +
        `WHERE ${[...where, ...extra.sql].join(' AND ')} ` +
        `ORDER BY ${orderBy('r', 'r.seq', order)} LIMIT ?`,
      [...values, ...extra.values, limit],
    )) as [TaskRow[]];
    return rows;
  };
  const values = driver.values ?? [undefined];
  if (values.length === 1) return scan(values[0]);
  return mergePages(await Promise.all(values.map(scan)), order, limit);
}

/** Sorted pages of several scans as one: each run once, in order, at most `limit`. */
function mergePages(pages: TaskRow[][], order: TaskOrder, limit: number): TaskRow[] {
  const seen = new Set<number>();
  const rows: TaskRow[] = [];
  for (const row of pages.flat().sort((a, b) => compare(a, b, order))) {
    if (seen.has(Number(row.seq))) continue;
    seen.add(Number(row.seq));
    rows.push(row);
    if (rows.length === limit) break;
  }
  return rows;
}

function compare(a: TaskRow, b: TaskRow, order: TaskOrder): number {
  if (order === 'due') {
    const due = a.task_due.getTime() - b.task_due.getTime();
    if (due !== 0) return due;
  }
  const started = a.task_started.getTime() - b.task_started.getTime();
  if (started !== 0) return started;
  return Number(a.seq) - Number(b.seq);
}
