// The statements that write runs and their events, as text: pure functions, the only runs
// module that writes literal SQL (every value a sqlLiteral; see lib/sql-literal.ts for why the
// service writes literals rather than placeholders on these paths). RunStore sends them.
//
// Every state change is a guarded UPDATE: it names the version it read (the event_seq, and the
// applied_seq / requested_seq of the change it makes), so a second writer of the same change,
// or a writer that read before someone else's change, matches no row. An event is written only
// with its change.
import { chunkBySize } from '../lib/chunks.js';
import { sqlLiteral, valuesTable } from '../lib/sql-literal.js';
import {
  CHANGE_AT_ONCE_COLUMNS,
  CHANGED_COLUMNS,
  INSERT_COLUMNS,
  toRow,
  type RunColumn,
  type RunValues,
} from './run-columns.js';
import { SYSTEM, actorJson } from '../audit/actor.js';
import type { RunEventRow } from './run-events.js';
import type { RunRecord } from './run-record.js';
import { deleteTermsSql, taskTermStatements } from '../tasks/task-terms.js';

/** Characters of SQL in one multi-row statement: with UTF-8 and escaping, well under 16 MiB. */
export const STATEMENT_BYTES = 2 * 1024 * 1024;

/** A change a writer made: the run as it read it, and as the change left it. */
export interface AppliedChange {
  before: RunRecord;
  after: RunRecord;
}

const names = (columns: readonly string[]) => columns.map((c) => `\`${c}\``).join(', ');

const INSERT_RUNS = `INSERT INTO workflow_runs (${names(INSERT_COLUMNS)}) VALUES `;

/** The INSERT statements of new runs: one, unless their JSON is too large for one statement. */
export function insertRunsStatements(runs: readonly RunRecord[]): string[] {
  const rows = runs.map(toRow);
  return chunkBySize(rows, (row) => row.run_json.length + 512, STATEMENT_BYTES).map(
    (chunk) =>
      INSERT_RUNS +
      chunk
        .map((row) => `(${INSERT_COLUMNS.map((column) => sqlLiteral(row[column])).join(', ')})`)
        .join(', '),
  );
}

// ---- what new runs assume of their templates ----

/**
 * What a new run assumed of its template's head when it was made: that the template is not
 * archived and, unless the run pinned a version, that its latest version is the run's. A run is
 * stored only if this still holds when its transaction commits (templates' heads may be cached
 * by the API: see template-store.ts).
 */
export interface TemplateAssumption {
  templateId: string;
  /** The latest version assumed; undefined for a pinned version (only "not archived" then). */
  latestVersion: number | undefined;
}

/**
 * The heads of the templates a batch of new runs assumed, read as the first statement of the
 * batch's transaction. That transaction begins after every request of the batch arrived, so
 * a save or archive answered before any of them was sent is seen here; one that commits
 * while the batch is written is concurrent with its creates, which then come first (as they
 * would had they been answered a moment sooner). So no lock is needed: a plain read, which
 * costs the database less than a locking one (measured: docs/performance.md).
 */
export function templateGuardSql(assumptions: readonly TemplateAssumption[]): string {
  const ids = [...new Set(assumptions.map((a) => a.templateId))];
  return (
    'SELECT id, latest_version, archived FROM workflow_templates ' +
    `WHERE id IN (${ids.map(sqlLiteral).join(', ')})`
  );
}

/** Whether templateGuardSql's rows bear every assumption out. */
export function assumptionsHold(
  assumptions: readonly TemplateAssumption[],
  rows: ReadonlyArray<{ id: string; latest_version: number | string; archived: number | boolean }>,
): boolean {
  const heads = new Map(rows.map((row) => [row.id, row]));
  return assumptions.every((a) => {
    const head = heads.get(a.templateId);
    return (
      head !== undefined &&
      !head.archived &&
      (a.latestVersion === undefined || Number(head.latest_version) === a.latestVersion)
    );
  });
}

// ---- events ----

const EVENT_COLUMNS = '(`run_id`, `organization_id`, `seq`, `type`, `at`, `data`, `actor`)';
/** The start of an INSERT … SELECT of events: the SELECT gives EVENT_COLUMNS' values. */
const INSERT_EVENTS_SELECT = `INSERT INTO run_events ${EVENT_COLUMNS} SELECT`;
/** An event already stored (the same change written by a second writer) is kept as it is. */
const KEEP_STORED_EVENT = 'ON DUPLICATE KEY UPDATE run_events.seq = run_events.seq';

/**
 * One event's values in the order of EVENT_COLUMNS. `at` is always a UTC ISO time
 * (toISOString): its DATETIME(3) literal is cut from it, not made by parsing it into a Date
 * again (a worker writes hundreds of events a batch).
 */
function eventLiterals({ runId, organizationId, event }: RunEventRow): string {
  const actor = event.actor ? sqlLiteral(actorJson(event.actor)) : 'NULL';
  return `${sqlLiteral(runId)}, ${sqlLiteral(organizationId)}, ${event.seq}, ${sqlLiteral(event.type)}, ${sqlLiteral(event.at.slice(0, 23).replace('T', ' '))}, ${sqlLiteral(JSON.stringify(event.data))}, ${actor}`;
}

/** The events a set of changed runs carry, the run beside each. */
export function eventRowsOf(runs: readonly RunRecord[]): RunEventRow[] {
  return runs.flatMap((run) =>
    run.events.map((event) => ({ runId: run.id, organizationId: run.organizationId, event })),
  );
}

/** The INSERTs of events, as few as their size allows. */
export function insertEventsStatements(rows: readonly RunEventRow[]): string[] {
  const values = rows.map((row) => `(${eventLiterals(row)})`);
  return chunkBySize(values, (v) => v.length, STATEMENT_BYTES).map(
    (chunk) =>
      `INSERT INTO run_events ${EVENT_COLUMNS} VALUES ${chunk.join(', ')} ${KEEP_STORED_EVENT}`,
  );
}

// ---- changes ----

/** `column = literal` for each column, from the run's row. */
function assignments(row: RunValues, columns: readonly RunColumn[], alias = ''): string {
  return columns.map((column) => `${alias}${column} = ${sqlLiteral(row[column])}`).join(', ');
}

/**
 * The API's record of a change for a worker to apply (a start or a step completion): only if
 * nobody changed the run since it was read.
 */
export function requestSql(before: RunRecord, after: RunRecord): string {
  const row = toRow(after);
  return (
    `UPDATE workflow_runs SET ${assignments(row, ['requested_seq', 'pending_since', 'run_json'])} ` +
    `WHERE id = ${sqlLiteral(before.id)} AND organization_id = ${sqlLiteral(before.organizationId)} ` +
    `AND requested_seq = ${before.requestedSeq} AND applied_seq = ${before.appliedSeq} ` +
    `AND event_seq = ${before.eventSeq} AND status = ${sqlLiteral(before.status)}`
  );
}

/**
 * A change made at once (cancel, retry, an overdue step, a failed run): its guarded UPDATE,
 * whose affected rows tell whether it was still the writer's to make, and then its events.
 */
export function changeAtOnceSql({ before, after }: AppliedChange): {
  update: string;
  events: string[];
  /** The inbox's term rows of the run, as its task is now (src/tasks/task-terms.ts). */
  terms: string[];
} {
  return {
    terms: taskTermStatements([{ before, after }]),
    update:
      `UPDATE workflow_runs SET ${assignments(toRow(after), CHANGE_AT_ONCE_COLUMNS)} ` +
      `WHERE id = ${sqlLiteral(before.id)} AND applied_seq = ${before.appliedSeq} ` +
      `AND event_seq = ${before.eventSeq} AND requested_seq = ${before.requestedSeq}`,
    events: insertEventsStatements(eventRowsOf([after])),
  };
}

/**
 * A run whose document cannot be read, marked failed without the state machine (which cannot
 * read it either): the reason is kept beside the broken JSON, and its run.failed event is
 * written only if the guarded UPDATE took.
 */
export function unreadableFailedStatements(
  row: Pick<RunValues, 'id' | 'organization_id' | 'run_json' | 'current_step_name'> & {
    applied_seq: number;
    event_seq: number;
  },
  message: string,
  at: Date,
): { update: string; event: string; terms: string } {
  const eventSeq = row.event_seq + 1;
  const document = { unreadable_run_json: row.run_json, error: { message, at: at.toISOString() } };
  const data = {
    error: message,
    ...(row.current_step_name ? { step: row.current_step_name } : {}),
  };
  return {
    update:
      `UPDATE workflow_runs SET status = 'failed', run_json = ${sqlLiteral(JSON.stringify(document))}, ` +
      `pending_since = NULL, last_activity = ${sqlLiteral(at)}, event_seq = ${eventSeq} ` +
      `WHERE id = ${sqlLiteral(row.id)} AND applied_seq = ${row.applied_seq} ` +
      `AND event_seq = ${row.event_seq} AND status IN ('pending', 'active')`,
    event: insertEventsStatements([
      {
        runId: row.id,
        organizationId: row.organization_id,
        event: { seq: eventSeq, type: 'run.failed', at: at.toISOString(), data, actor: SYSTEM },
      },
    ])[0]!,
    // A failed run is no task: its terms go (run_task_terms.ts keeps only active runs').
    terms: deleteTermsSql(`r.id = ${sqlLiteral(row.id)} AND r.event_seq = ${eventSeq}`),
  };
}

// ---- a worker's applied changes ----

/**
 * Batches of at most this many applied runs are written a statement per run (and per event)
 * rather than joined to a table of values. MariaDB builds a table of values as temporary
 * tables, and one holding run documents (BLOBs to it) goes to disk: some 350 µs of its CPU
 * per batch whatever the batch's size, against some 90 µs more per run for the
 * statement-per-run form (measured, two writers at once: the forms cost the same at 6 runs).
 * Workers keeping up with a steady flow apply one or two runs a batch, where the per-run form
 * halves MariaDB's cost; a backlog drains in batches of hundreds, where the join halves it.
 */
export const ROW_BY_ROW_MAX = 5;

/**
 * How a worker's applied changes are written: statements sent in one round trip, or a batch's
 * UPDATE first and then, given how many runs it changed, the rest.
 */
export type AppliedWrite =
  { statements: string[] } | { updates: string[]; rest: (updatedRuns: number) => string[] };

/**
 * The statements that store changes a worker applied, each with its events. Each run's row is
 * guarded by the applied_seq and event_seq the worker read, so rows another writer moved
 * meanwhile are left alone (the change is theirs to have made); an event is inserted only for
 * a run whose row now holds the change. Two workers applying the same change make the same
 * row and the same events: the second's UPDATE matches nothing and its events are the ones
 * already stored. `collation` is that of workflow_runs' text columns (RunStore reads it).
 */
export function appliedWrite(changes: readonly AppliedChange[], collation: string): AppliedWrite {
  return changes.length <= ROW_BY_ROW_MAX
    ? { statements: changes.flatMap(appliedOneStatements) }
    : appliedBatchWrite(changes, collation);
}

/**
 * One applied change as its own guarded UPDATE (a primary-key lookup) and an INSERT … SELECT
 * per event that finds the run's row only if it now holds the change (as heldEventsStatements).
 * Literals compared with a column take the column's collation: no COLLATE needed here.
 */
function appliedOneStatements({ before, after }: AppliedChange): string[] {
  const id = sqlLiteral(after.id);
  const update =
    `UPDATE workflow_runs SET ${assignments(toRow(after), CHANGED_COLUMNS)} WHERE id = ${id} ` +
    `AND applied_seq = ${before.appliedSeq} AND event_seq = ${before.eventSeq}`;
  const held =
    `FROM workflow_runs WHERE id = ${id} AND applied_seq = ${after.appliedSeq} ` +
    `AND event_seq = ${after.eventSeq} AND status = ${sqlLiteral(after.status)}`;
  return [
    update,
    ...eventRowsOf([after]).map(
      (event) => `${INSERT_EVENTS_SELECT} ${eventLiterals(event)} ${held} ${KEEP_STORED_EVENT}`,
    ),
    ...taskTermStatements([{ before, after }]),
  ];
}

/** The columns of the batch UPDATE's table: the run's id, its new values, then the guard. */
const APPLIED_COLUMNS = ['id', ...CHANGED_COLUMNS, 'expected_applied', 'expected_event'];

/**
 * A batch of applied changes as one UPDATE joined to a table of values, then the events.
 *
 * When the UPDATE changed every run of the batch (as it does unless another writer got to one
 * first), the events are a plain multi-row INSERT. The form that joins each event to its run's
 * row (heldEventsStatements) is kept for the batch that lost a run: it is an INSERT … SELECT,
 * for which InnoDB reserves ids in doubling blocks and drops those it did not use, and each
 * such gap in run_events' ids holds every live stream back for its grace
 * (src/streams/event-watermark.ts). A plain INSERT takes as many ids as it has rows.
 */
function appliedBatchWrite(changes: readonly AppliedChange[], collation: string): AppliedWrite {
  const rows = changes.map(({ before, after }) => {
    const row = toRow(after);
    const values = [row.id, ...CHANGED_COLUMNS.map((column) => row[column])].map(sqlLiteral);
    return `(${values.join(', ')}, ${before.appliedSeq}, ${before.eventSeq})`;
  });
  const afters = changes.map((c) => c.after);
  return {
    // A guarded UPDATE of many runs, each to its own values, joined to the runs by id (an
    // eq_ref lookup per row). Linear in the batch, where a CASE per column with a WHEN per run
    // was quadratic for MySQL. A value too long for its column is refused (strict mode).
    updates: chunkBySize(rows, (row) => row.length, STATEMENT_BYTES).map(
      (chunk) =>
        `UPDATE workflow_runs r JOIN ${valuesTable(APPLIED_COLUMNS, chunk)} AS v ` +
        // The literals have the connection's collation; compared in the table's, the index serves.
        `ON r.id = v.id COLLATE ${collation} ` +
        `SET ${CHANGED_COLUMNS.map((column) => `r.${column} = v.${column}`).join(', ')} ` +
        'WHERE r.applied_seq = v.expected_applied AND r.event_seq = v.expected_event',
    ),
    rest: (updatedRuns) => [
      ...(updatedRuns === changes.length
        ? insertEventsStatements(eventRowsOf(afters))
        : heldEventsStatements(afters, collation)),
      ...taskTermStatements(changes),
    ],
  };
}

/** The columns of heldEventsStatements' table: the event's, then the run's new version. */
const HELD_EVENT_COLUMNS = [
  'run_id',
  'organization_id',
  'seq',
  'type',
  'at',
  'data',
  'actor',
  'held_applied',
  'held_event',
  'held_status',
];

/**
 * The INSERTs of the events of those changed runs whose row now holds the change (its
 * applied_seq, event_seq and status), as few as their size allows: each event row is joined
 * with its run's row as the writer's transaction sees it (its own UPDATE and every committed
 * one), so a change another writer made first brings no events of this writer's.
 */
function heldEventsStatements(runs: readonly RunRecord[], collation: string): string[] {
  const rows = runs.flatMap((run) =>
    eventRowsOf([run]).map(
      (event) =>
        `(${eventLiterals(event)}, ${run.appliedSeq}, ${run.eventSeq}, ${sqlLiteral(run.status)})`,
    ),
  );
  return chunkBySize(rows, (row) => row.length, STATEMENT_BYTES).map(
    (chunk) =>
      `${INSERT_EVENTS_SELECT} v.run_id, v.organization_id, v.seq, v.type, v.at, v.data, v.actor ` +
      `FROM ${valuesTable(HELD_EVENT_COLUMNS, chunk)} AS v ` +
      // The literals have the connection's collation; compared in the table's.
      `JOIN workflow_runs r ON r.id = v.run_id COLLATE ${collation} ` +
      'AND r.applied_seq = v.held_applied AND r.event_seq = v.held_event ' +
      `AND r.status = v.held_status COLLATE ${collation} ${KEEP_STORED_EVENT}`,
  );
}
