// A run's history: every change of a run is an event, written in the same transaction as the
// change itself (by every writer of runs: RunStore), so an event exists only if its change was
// committed, and every committed change has its event. This one vocabulary is what clients see
// as the run's history and what is delivered to subscribers.
import { sqlLiteral } from '../lib/sql-literal.js';

export const RUN_EVENT_TYPES = [
  'run.created',
  'run.started',
  'step.completed',
  'step.overdue',
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.retried',
] as const;

export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

export interface RunEvent {
  /** 1, 2, 3, … within the run: the order of its history. */
  seq: number;
  type: RunEventType;
  /** ISO 8601 time of the change. */
  at: string;
  /** What the change concerned (the step, its assignee, the reason), in camelCase. */
  data: Record<string, unknown>;
}

/** An event on its way to the table: the run it belongs to beside it. */
export interface RunEventRow {
  runId: string;
  organizationId: string;
  event: RunEvent;
}

const COLUMNS = '(`run_id`, `organization_id`, `seq`, `type`, `at`, `data`)';

/**
 * One event's values in the order of COLUMNS, as SQL literals like the runs' own INSERT. `at`
 * is always a UTC ISO time (toISOString): its DATETIME(3) literal is cut from it, not made by
 * parsing it into a Date again (a worker writes hundreds of events a batch).
 */
export function eventLiterals({ runId, organizationId, event }: RunEventRow): string {
  return `${sqlLiteral(runId)}, ${sqlLiteral(organizationId)}, ${event.seq}, ${sqlLiteral(event.type)}, ${sqlLiteral(event.at.slice(0, 23).replace('T', ' '))}, ${sqlLiteral(JSON.stringify(event.data))}`;
}

/** One event as a row of an INSERT's VALUES. */
export function eventValues(row: RunEventRow): string {
  return `(${eventLiterals(row)})`;
}

/**
 * The INSERT of events given as eventValues. A second attempt to write an event the run
 * already has (same run, same seq) is refused by the table's unique key, which rolls back the
 * change it came with.
 */
export function insertEventsSql(values: readonly string[]): string {
  return `INSERT INTO run_events ${COLUMNS} VALUES ${values.join(', ')}`;
}

/** The start of an INSERT … SELECT of events: the SELECT gives COLUMNS' values (eventLiterals). */
export const INSERT_EVENTS_SELECT = `INSERT INTO run_events ${COLUMNS} SELECT`;

/** The stored form of an event, as read back. */
export interface RunEventTableRow {
  id: number;
  run_id: string;
  organization_id: string;
  seq: number;
  type: RunEventType;
  at: Date;
  data: string;
}

export function fromEventRow(row: RunEventTableRow): RunEvent {
  return {
    seq: Number(row.seq),
    type: row.type,
    at: row.at.toISOString(),
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}
