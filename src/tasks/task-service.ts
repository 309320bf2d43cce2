// The task inbox: the query's filters as a TaskFilter, its cursor as a keyset position, and each
// row as a Task. Reads go where the runs list's go (the reader: a replica when configured).
import { DomainError, pointer } from '../errors.js';
import { decodePosition, encodePosition } from '../http/pagination.js';
import type { Principal } from '../auth/principal.js';
import { parseTime } from '../runs/run-filter.js';
import { parseLabelFilter } from '../runs/run-labels.js';
import type { RunDocument } from '../runs/run-record.js';
import type { RunStore } from '../runs/run-store.js';
import type { TaskFilter, TaskOrder, TaskPosition, TaskRow } from './task-list.js';
import type { Task, TaskListQuery } from './task-schemas.js';

/** A page of tasks, and where the next one starts (none: this is the last). */
export interface TaskPage {
  tasks: Task[];
  next: string | undefined;
}

export class TaskService {
  constructor(private readonly runs: RunStore) {}

  /** A page of at most `limit` tasks. */
  async list(principal: Principal, query: TaskListQuery, limit: number): Promise<TaskPage> {
    const order: TaskOrder = query.order ?? 'due';
    const at = query.cursor === undefined ? null : decodeTaskCursor(query.cursor, order);
    const rows = await this.runs.listTasks(
      principal.organizationId,
      toTaskFilter(query),
      order,
      limit + 1,
      at,
    );
    const visible = rows.slice(0, limit);
    const pagesOf = await this.runs.templatesFor(visible);
    const last = visible[visible.length - 1];
    return {
      tasks: visible.map((row) => toTask(row, pagesOf)),
      next: rows.length > limit && last ? encodeTaskCursor(last, order) : undefined,
    };
  }
}

/** The filter of a query already checked against its schema. */
export function toTaskFilter(query: TaskListQuery): TaskFilter {
  if (query.group !== undefined && query.claimable_by === undefined) {
    throw new DomainError(
      'invalid_query',
      'group is the group of a claimable_by user: give claimable_by with it',
      pointer('group'),
    );
  }
  return {
    assignee: query.assignee,
    claimableBy:
      query.claimable_by === undefined
        ? undefined
        : { user: query.claimable_by, groups: [...new Set(query.group ?? [])] },
    unassigned: query.unassigned,
    overdue: query.overdue,
    dueBefore: parseTime(query.due_before, 'due_before'),
    dueAfter: parseTime(query.due_after, 'due_after'),
    templateId: query.template_id,
    kind: query.kind,
    labels: parseLabelFilter(query.label),
  };
}

/** A cursor: the last task sent, in the page's order (a page of another order refuses it). */
function encodeTaskCursor(row: TaskRow, order: TaskOrder): string {
  return encodePosition({
    o: order,
    d: row.task_due.getTime(),
    t: row.task_started.getTime(),
    s: Number(row.seq),
  });
}

function decodeTaskCursor(cursor: string, order: TaskOrder): TaskPosition {
  return decodePosition(cursor, (parsed) => {
    const p = parsed as { o?: unknown; d?: unknown; t?: unknown; s?: unknown } | null;
    const ms = (v: unknown): v is number =>
      typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
    if (p?.o !== order || !ms(p.d) || !ms(p.t) || !ms(p.s) || p.s === 0) return undefined;
    return { due: new Date(p.d), started: new Date(p.t), seq: p.s };
  });
}

/** A row as a Task: its candidates and labels from its document, its kind from its page. */
function toTask(row: TaskRow, pagesOf: Awaited<ReturnType<RunStore['templatesFor']>>): Task {
  const doc = JSON.parse(row.run_json) as Pick<RunDocument, 'steps' | 'labels'>;
  const step = doc.steps[row.current_step_index];
  const page = pagesOf(row.template_id, Number(row.template_version))?.pages[
    row.current_step_index
  ];
  return {
    runId: row.id,
    workflowName: row.workflow_name,
    templateId: row.template_id,
    step: row.current_step_name,
    kind: page?.kind ?? 'step',
    ...(row.current_step_assignee !== null ? { assignee: row.current_step_assignee } : {}),
    candidateUsers: step?.candidate_users ?? [],
    candidateGroups: step?.candidate_groups ?? [],
    ...(row.current_step_due_date ? { dueDate: row.current_step_due_date.toISOString() } : {}),
    overdue: Boolean(row.current_step_overdue),
    startedAt: row.task_started.toISOString(),
    labels: doc.labels ?? {},
  };
}
