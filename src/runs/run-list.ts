// The runs list: a page of an organization's run summaries, newest first, filtered.
import type { Db } from '../db.js';
import type { RunRow } from './run-columns.js';
import type { LabelMatch } from './run-labels.js';
import { RUN_STATUSES, type RunStatus } from './run-status.js';

/** Filters of the runs list; all optional, all combined. */
export interface RunFilter {
  statuses?: RunStatus[];
  templateId?: string;
  /** With templateId: runs using this version of the template. */
  templateVersion?: number;
  /** With templateId: runs whose current step is this page. */
  step?: string;
  assignee?: string;
  overdue?: boolean;
  updatedAfter?: Date;
  updatedBefore?: Date;
  createdAfter?: Date;
  createdBefore?: Date;
  /** Labels the run must all have. */
  labels?: LabelMatch[];
  /** Runs a schedule created (read through its fires: src/schedules/). */
  scheduleId?: string;
}

/** What a list (or anything showing run summaries) reads of a run. */
export const SUMMARY_COLUMNS = [
  'seq',
  'id',
  'workflow_name',
  'status',
  'current_step_name',
  'current_step_assignee',
  'current_step_due_date',
  'last_activity',
] as const satisfies ReadonlyArray<keyof RunRow>;

/** What a list reads of a run. */
export type RunSummaryRow = Pick<RunRow, (typeof SUMMARY_COLUMNS)[number]>;

/**
 * The index a page scans: the organization, then the most selective filter given (assignee,
 * template, overdue, status), then seq (see migrations).
 */
function indexFor(filter: RunFilter, status: RunStatus | undefined): string {
  if (filter.assignee !== undefined) return 'workflow_runs_org_assignee_seq';
  if (filter.templateId !== undefined) return 'workflow_runs_org_template_seq';
  if (filter.overdue !== undefined) return 'workflow_runs_org_overdue_seq';
  if (status !== undefined) return 'workflow_runs_org_status_seq';
  return 'workflow_runs_org_seq';
}

/** The runs of one index's scan (indexFor) that pass the filter (but labels: see listByLabel). */
function scanOf(db: Db, organizationId: string, filter: RunFilter, status: RunStatus | undefined) {
  const query = db<RunSummaryRow>(
    db.raw(`?? FORCE INDEX (${indexFor(filter, status)})`, ['workflow_runs']),
  ).where('organization_id', organizationId);
  if (status !== undefined) query.andWhere('status', status);
  if (filter.assignee !== undefined) query.andWhere('current_step_assignee', filter.assignee);
  if (filter.templateId !== undefined) query.andWhere('template_id', filter.templateId);
  if (filter.templateVersion !== undefined) {
    query.andWhere('template_version', filter.templateVersion);
  }
  if (filter.step !== undefined) query.andWhere('current_step_name', filter.step);
  if (filter.overdue !== undefined) query.andWhere('current_step_overdue', filter.overdue ? 1 : 0);
  if (filter.updatedAfter) query.andWhere('last_activity', '>', filter.updatedAfter);
  if (filter.updatedBefore) query.andWhere('last_activity', '<', filter.updatedBefore);
  if (filter.createdAfter) query.andWhere('created_at', '>', filter.createdAfter);
  if (filter.createdBefore) query.andWhere('created_at', '<', filter.createdBefore);
  return query;
}

/**
 * A page of the organization's runs, newest first, before the given seq, filtered. Each page
 * is a range scan of one index (indexFor), so a page costs the same however many runs the
 * organization has; the other filters are checked on the rows the scan reads. Several
 * statuses are one scan each, merged. FORCE INDEX: without it MariaDB may read an index by its
 * equality columns only ("ref") and filter seq < cursor row by row, so a page N rows deep
 * would read N rows.
 */
export async function listRunSummaries(
  db: Db,
  organizationId: string,
  limit: number,
  beforeSeq: number | null,
  filter: RunFilter = {},
): Promise<RunSummaryRow[]> {
  const scan = (status: RunStatus | undefined): Promise<RunSummaryRow[]> => {
    const query = scanOf(db, organizationId, filter, status)
      .select(...SUMMARY_COLUMNS)
      .orderBy('seq', 'desc')
      .limit(limit);
    if (beforeSeq !== null) query.andWhere('seq', '<', beforeSeq);
    return query as unknown as Promise<RunSummaryRow[]>;
  };
  if (entryScan(filter)) return listByEntries(db, organizationId, limit, beforeSeq, filter);
  const statuses = filter.statuses ?? [];
  if (statuses.length <= 1) return scan(statuses[0]);
  // One scan per status, each at most a page; the newest `limit` of them all are the page.
  const pages = await Promise.all(statuses.map((status) => scan(status)));
  return pages
    .flat()
    .sort((a, b) => Number(b.seq) - Number(a.seq))
    .slice(0, limit);
}

/**
 * Whether a page is read from entries that name runs rather than from a runs index: a
 * schedule's fires, or a label's rows.
 */
function entryScan(filter: RunFilter): boolean {
  return filter.scheduleId !== undefined || (filter.labels ?? []).length > 0;
}

/**
 * A page of runs read through entries that name them: a keyset range scan of the schedule's
 * fires (organization, schedule, run seq) when the filter names a schedule, else of run_labels'
 * primary key (organization, key, value, run seq) for the first label, newest first from the
 * cursor, each entry joined to its run by seq (a primary-key lookup); the labels are one
 * primary-key lookup each, and the other filters are checked on the runs the scan reads.
 * STRAIGHT_JOIN keeps the entries in front, so a page reads about `limit` entries when the other
 * filters match most runs, at any organization size.
 */
async function listByEntries(
  db: Db,
  organizationId: string,
  limit: number,
  beforeSeq: number | null,
  filter: RunFilter,
): Promise<RunSummaryRow[]> {
  const { from, where, values } = entryWhere(organizationId, beforeSeq, filter);
  const [rows] = (await db.raw(
    `SELECT STRAIGHT_JOIN ${SUMMARY_COLUMNS.map((c) => `r.${c}`).join(', ')} ` +
      `FROM ${from} JOIN workflow_runs r ON r.seq = l.run_seq ` +
      `WHERE ${where.join(' AND ')} ORDER BY l.run_seq DESC LIMIT ?`,
    [...values, limit],
  )) as [RunSummaryRow[]];
  return rows;
}

/**
 * The FROM and WHERE of an entry scan: the entries `l` (a schedule's fires, or the first
 * label's rows) before the cursor, their runs `r` of the organization, the labels and the other
 * filters.
 */
function entryWhere(
  organizationId: string,
  beforeSeq: number | null,
  filter: RunFilter,
): { from: string; where: string[]; values: Array<string | number | Date> } {
  let labels = filter.labels ?? [];
  let from: string;
  const where: string[] = [];
  const values: Array<string | number | Date> = [];
  if (filter.scheduleId !== undefined) {
    from = 'schedule_fires l FORCE INDEX (schedule_fires_runs)';
    where.push('l.organization_id = ?', 'l.schedule_id = ?', 'l.run_seq IS NOT NULL');
    values.push(organizationId, filter.scheduleId);
  } else {
    const [first, ...others] = labels;
    from = 'run_labels l FORCE INDEX (PRIMARY)';
    where.push('l.organization_id = ?', 'l.label_key = ?', 'l.label_value = ?');
    values.push(organizationId, first!.key, first!.value);
    labels = others;
  }
  if (beforeSeq !== null) {
    where.push('l.run_seq < ?');
    values.push(beforeSeq);
  }
  where.push('r.organization_id = ?');
  values.push(organizationId);
  for (const label of labels) {
    where.push(
      'EXISTS (SELECT 1 FROM run_labels o WHERE o.organization_id = ? AND o.label_key = ? ' +
        'AND o.label_value = ? AND o.run_seq = l.run_seq)',
    );
    values.push(organizationId, label.key, label.value);
  }
  const statuses = filter.statuses ?? [];
  if (statuses.length > 0) {
    where.push(`r.status IN (${statuses.map(() => '?').join(', ')})`);
    values.push(...statuses);
  }
  const also: Array<[string, string | number | Date | undefined]> = [
    ['r.current_step_assignee = ?', filter.assignee],
    ['r.template_id = ?', filter.templateId],
    ['r.template_version = ?', filter.templateVersion],
    ['r.current_step_name = ?', filter.step],
    [
      'r.current_step_overdue = ?',
      filter.overdue === undefined ? undefined : filter.overdue ? 1 : 0,
    ],
    ['r.last_activity > ?', filter.updatedAfter],
    ['r.last_activity < ?', filter.updatedBefore],
    ['r.created_at > ?', filter.createdAfter],
    ['r.created_at < ?', filter.createdBefore],
  ];
  for (const [condition, value] of also) {
    if (value === undefined) continue;
    where.push(condition);
    values.push(value);
  }
  return { from, where, values };
}

/** The most runs a count reads of one status (GET /count-workflow-runs). */
export const RUN_COUNT_LIMIT = 10_000;

/** GET /count-workflow-runs's answer: runs matching a filter, by status, each up to `limit`. */
export interface RunCounts {
  byStatus: Record<RunStatus, number>;
  total: number;
  limit: number;
  exceeded: RunStatus[];
}

/**
 * How many of the organization's runs match the filter, by status. Each status is counted by
 * one bounded scan of the index a page would read (at most `limit` entries; a label filter
 * reads its label's entries), so a count costs at most `limit` index reads a status at any
 * organization size, and a status with more is reported as `limit` and `exceeded`.
 */
export async function countRuns(
  db: Db,
  organizationId: string,
  filter: RunFilter,
  limit: number,
): Promise<RunCounts> {
  const statuses = filter.statuses ?? RUN_STATUSES;
  const count = async (status: RunStatus): Promise<number> => {
    if (entryScan(filter)) {
      const { from, where, values } = entryWhere(organizationId, null, {
        ...filter,
        statuses: [status],
      });
      const [rows] = (await db.raw(
        `SELECT COUNT(*) AS n FROM (SELECT STRAIGHT_JOIN 1 FROM ${from} ` +
          `JOIN workflow_runs r ON r.seq = l.run_seq WHERE ${where.join(' AND ')} LIMIT ?) AS t`,
        [...values, limit],
      )) as [Array<{ n: number | string }>];
      return Number(rows[0]!.n);
    }
    const inner = scanOf(db, organizationId, filter, status).select(db.raw('1')).limit(limit);
    const [row] = (await db.count({ n: '*' }).from(inner.as('t'))) as Array<{ n: number | string }>;
    return Number(row!.n);
  };
  const counts = await Promise.all(statuses.map(count));
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  statuses.forEach((status, i) => (byStatus[status] = counts[i]!));
  return {
    byStatus,
    total: counts.reduce((a, b) => a + b, 0),
    limit,
    exceeded: statuses.filter((status) => byStatus[status] >= limit),
  };
}
