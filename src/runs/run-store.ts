// Runs in MySQL. Every state change is a guarded update: it names the version it read (the
// event_seq, and the applied_seq / requested_seq of the change it makes), so a second writer
// of the same change, or a writer that read before someone else's change, matches no row.
// Every change is written in one transaction with its events (run-events.ts): an event
// exists only if its change was committed.
import { writeBatch, writeScript, writeTransaction, type Db, type TxQuery } from '../db.js';
import {
  insertIdempotencyRecords,
  insertIdempotencySql,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import { chunkBySize } from '../lib/chunks.js';
import { countChange } from '../metrics/metrics.js';
import { sqlLiteral } from '../lib/sql-literal.js';
import type { TemplatePage } from '../templates/template.js';
import { TemplateStore } from '../templates/template-store.js';
import {
  eventLiterals,
  eventValues,
  INSERT_EVENTS_SELECT,
  fromEventRow,
  insertEventsSql,
  type RunEvent,
  type RunEventRow,
  type RunEventTableRow,
} from './run-events.js';
import {
  RunStateError,
  storedDocumentJson,
  type RunDocument,
  type RunRecord,
  type RunStatus,
} from './run-state.js';

/** A workflow_runs row as mysql2 returns it. */
export interface RunRow {
  seq: number;
  id: string;
  organization_id: string;
  template_id: string;
  workflow_name: string;
  status: RunStatus;
  current_step_index: number | null;
  current_step_name: string | null;
  current_step_assignee: string | null;
  current_step_due_date: Date | null;
  current_step_overdue: number;
  run_json: string;
  requested_seq: number;
  applied_seq: number;
  pending_since: Date | null;
  last_activity: Date;
  created_at: Date;
  event_seq: number;
}

/** Filters of the runs list; all optional, all combined. */
export interface RunFilter {
  statuses?: RunStatus[];
  templateId?: string;
  assignee?: string;
  overdue?: boolean;
  updatedAfter?: Date;
  updatedBefore?: Date;
  createdAfter?: Date;
  createdBefore?: Date;
}

const SUMMARY_COLUMNS = [
  'seq',
  'id',
  'workflow_name',
  'status',
  'current_step_name',
  'current_step_assignee',
  'current_step_due_date',
  'last_activity',
];

export interface RunSummaryRow {
  seq: number;
  id: string;
  workflow_name: string;
  status: RunStatus;
  current_step_name: string | null;
  current_step_assignee: string | null;
  current_step_due_date: Date | null;
  last_activity: Date;
}

function toRow(run: RunRecord): Omit<RunRow, 'seq'> {
  return {
    id: run.id,
    organization_id: run.organizationId,
    template_id: run.templateId,
    workflow_name: run.workflowName,
    status: run.status,
    current_step_index: run.currentStepIndex,
    current_step_name: run.currentStepName,
    current_step_assignee: run.currentStepAssignee,
    current_step_due_date: run.currentStepDueDate,
    current_step_overdue: run.currentStepOverdue ? 1 : 0,
    run_json: storedDocumentJson(run.document),
    requested_seq: run.requestedSeq,
    applied_seq: run.appliedSeq,
    pending_since: run.pendingSince,
    last_activity: run.lastActivity,
    created_at: run.createdAt,
    event_seq: run.eventSeq,
  };
}

/** A template's pages by its id, or undefined when the template is not known. */
export type TemplatePagesOf = (templateId: string) => TemplatePage[] | undefined;

/**
 * A run from its row. A document stored without its template's pages (storedDocumentJson)
 * gets them from `pagesOf` (RunStore.templatesFor the row); one stored
 * with them, as older rows are, keeps its own.
 */
export function fromRow(row: RunRow, pagesOf?: TemplatePagesOf): RunRecord {
  let document: RunDocument;
  try {
    document = JSON.parse(row.run_json) as RunDocument;
  } catch {
    throw new RunStateError(`run_json of run ${row.id} is not valid JSON`);
  }
  if (
    !document ||
    typeof document !== 'object' ||
    !Array.isArray(document.steps) ||
    !document.template ||
    typeof document.template !== 'object'
  ) {
    throw new RunStateError(`run_json of run ${row.id} is not a run document`);
  }
  if (!Array.isArray(document.template.pages)) {
    const pages = pagesOf?.(row.template_id);
    if (!pages) throw new RunStateError(`template ${row.template_id} of run ${row.id} not found`);
    document.template = { id: row.template_id, name: document.template.name, pages };
  }
  return {
    id: row.id,
    organizationId: row.organization_id,
    templateId: row.template_id,
    workflowName: row.workflow_name,
    status: row.status,
    currentStepIndex: row.current_step_index,
    currentStepName: row.current_step_name,
    currentStepAssignee: row.current_step_assignee,
    currentStepDueDate: row.current_step_due_date,
    currentStepOverdue: Boolean(row.current_step_overdue),
    document,
    requestedSeq: Number(row.requested_seq),
    appliedSeq: Number(row.applied_seq),
    pendingSince: row.pending_since,
    lastActivity: row.last_activity,
    createdAt: row.created_at,
    eventSeq: Number(row.event_seq),
    events: [],
  };
}

/** The events a set of changed runs carry, ready for insertEventsSql. */
function eventRows(runs: readonly RunRecord[]): RunEventRow[] {
  return runs.flatMap(eventRowsOf);
}

/** Characters of JSON in one multi-row statement: with UTF-8 and escaping, well under 16 MiB. */
const STATEMENT_BYTES = 2 * 1024 * 1024;

/** Columns a change rewrites (everything but identity, creation and requested_seq). */
const CHANGED_COLUMNS = [
  'status',
  'current_step_index',
  'current_step_name',
  'current_step_assignee',
  'current_step_due_date',
  'current_step_overdue',
  'run_json',
  'applied_seq',
  'pending_since',
  'last_activity',
  'event_seq',
] as const;

export const INSERT_COLUMNS = [
  'id',
  'organization_id',
  'template_id',
  'workflow_name',
  'status',
  'current_step_index',
  'current_step_name',
  'current_step_assignee',
  'current_step_due_date',
  'current_step_overdue',
  'run_json',
  'requested_seq',
  'applied_seq',
  'pending_since',
  'last_activity',
  'created_at',
  'event_seq',
] as const satisfies ReadonlyArray<keyof Omit<RunRow, 'seq'>>;
const INSERT_SQL = `INSERT INTO workflow_runs (${INSERT_COLUMNS.map((c) => `\`${c}\``).join(', ')}) VALUES `;

/**
 * One multi-row INSERT written directly, values as literals: the create path's hottest
 * statement, where knex's builder and the driver's placeholder formatting cost more CPU per
 * row than the insert itself (see sqlLiteral).
 */
function insertSql(rows: Array<Omit<RunRow, 'seq'>>): string {
  const values: string[] = [];
  for (const row of rows) {
    values.push(`(${INSERT_COLUMNS.map((column) => sqlLiteral(row[column])).join(', ')})`);
  }
  return INSERT_SQL + values.join(', ');
}

/** The INSERT statements of new runs: one, unless their JSON is too large for one statement. */
function insertStatements(runs: RunRecord[]): string[] {
  return chunkBySize(runs.map(toRow), (row) => row.run_json.length + 512, STATEMENT_BYTES).map(
    insertSql,
  );
}

export interface RunStoreOptions {
  /** How long a write, once sent, may wait for MySQL (see writeTransaction). */
  writeTimeoutMs?: number;
  /**
   * Workers' applied changes as one round trip (writeScript; the pool must allow several
   * statements a query). Their writes are guarded and retried, so they need not tell "not
   * stored" from "unknown" as the API's writes must.
   */
  oneTrip?: boolean;
  /**
   * A pool that allows several statements a query, for new runs' batches in two round trips
   * (writeBatch) instead of one per statement. Only the batch INSERTs use it: their SQL is the
   * service's own, every value a sqlLiteral; every other statement keeps the plain pool.
   */
  batches?: Db;
  /** Where runs read their templates' pages (the process's template cache). */
  templates?: TemplateStore;
}

export class RunStore {
  private readonly writeTimeoutMs: number;
  private readonly oneTrip: boolean;
  private readonly batches: Db | undefined;
  private readonly templates: TemplateStore;

  constructor(
    private readonly db: Db,
    options: RunStoreOptions = {},
  ) {
    this.writeTimeoutMs = options.writeTimeoutMs ?? 5000;
    this.oneTrip = options.oneTrip ?? false;
    this.batches = options.batches;
    this.templates = options.templates ?? new TemplateStore(db);
  }

  /**
   * Stores new runs in one transaction: all or nothing, and a failure that is not an
   * OutcomeUnknownError means nothing was stored. Rows get their seq (list order) from the
   * database.
   */
  async insertMany(runs: RunRecord[], keys: IdempotencyRecord[] = []): Promise<void> {
    const keySql = insertIdempotencySql(keys);
    const statements = [
      ...(keySql ? [keySql] : []),
      ...insertStatements(runs),
      ...insertEventsStatements(eventRows(runs)),
    ];
    // Together only while they fit one statement's budget: far under max_allowed_packet.
    if (this.batches && statements.reduce((n, sql) => n + sql.length, 0) <= STATEMENT_BYTES) {
      await writeBatch(this.batches, this.writeTimeoutMs, statements);
      return;
    }
    await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      for (const sql of statements) await query(sql);
    });
  }

  /**
   * The same rows and events in autocommit statements, without the bounded transaction (bench
   * baselines and seeding).
   */
  async insertManyUnbounded(runs: RunRecord[]): Promise<void> {
    for (const sql of insertStatements(runs)) await this.db.raw(sql);
    const events = eventRows(runs);
    if (events.length > 0) await this.db.raw(insertEventsSql(events.map(eventValues)));
  }

  async findForOrganization(organizationId: string, id: string): Promise<RunRecord | undefined> {
    const row = await this.db<RunRow>('workflow_runs')
      .where({ id, organization_id: organizationId })
      .first();
    return row ? this.runFromRow(row) : undefined;
  }

  /** The pages of the rows' templates, for fromRow (one query for those not cached). */
  async templatesFor(rows: readonly RunRow[]): Promise<TemplatePagesOf> {
    const templates = await this.templates.findByIds(rows.map((row) => row.template_id));
    return (templateId) => templates.get(templateId)?.pages;
  }

  /** A run from its row, with its template's pages. */
  private async runFromRow(row: RunRow): Promise<RunRecord> {
    return fromRow(row, await this.templatesFor([row]));
  }

  /** A run by id alone, for workers (a job names the run; the organization comes with it). */
  async findById(id: string): Promise<RunRecord | undefined> {
    const row = await this.db<RunRow>('workflow_runs').where({ id }).first();
    return row ? this.runFromRow(row) : undefined;
  }

  /**
   * Active runs whose current step's due date passed before the given time and is not marked
   * overdue: what a lost timer owes. A range scan of (current_step_overdue, due date).
   */
  async findPastDue(
    before: Date,
    limit: number,
  ): Promise<Array<{ id: string; current_step_index: number }>> {
    return this.db('workflow_runs')
      .select('id', 'current_step_index')
      .where('current_step_overdue', 0)
      .andWhere('current_step_due_date', '<', before)
      .andWhere('status', 'active')
      .orderBy('current_step_due_date', 'asc')
      .limit(limit);
  }

  /** Raw rows by id, for workers; a row whose run_json is broken is still returned. */
  async findRowsByIds(ids: string[]): Promise<RunRow[]> {
    if (ids.length === 0) return [];
    return this.db<RunRow>('workflow_runs').whereIn('id', ids);
  }

  /**
   * Stores a requested change made by the API: only if nobody changed the run since it was
   * read (requested_seq and applied_seq as read). Returns false when another request won.
   */
  async storeRequest(
    before: RunRecord,
    after: RunRecord,
    key?: IdempotencyRecord,
  ): Promise<boolean> {
    const { sql, bindings } = this.db('workflow_runs')
      .where({
        id: before.id,
        organization_id: before.organizationId,
        requested_seq: before.requestedSeq,
        applied_seq: before.appliedSeq,
        event_seq: before.eventSeq,
        status: before.status,
      })
      .update({
        requested_seq: after.requestedSeq,
        pending_since: after.pendingSince,
        run_json: storedDocumentJson(after.document),
      })
      .toSQL()
      .toNative();
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const result = await query(sql, bindings);
      if (result.affectedRows !== 1) return false;
      if (key) await insertIdempotencyRecords(query, [key]);
      return true;
    });
  }

  /**
   * Stores changes a worker applied, each with its events, in one transaction. Each run's row
   * is guarded by the applied_seq and event_seq the worker read, so rows another writer moved
   * meanwhile are left alone (the change is theirs to have made); an event is inserted only
   * for a run whose row now holds the change. Two workers applying the same change make the
   * same row and the same events: the second's UPDATE matches nothing and its events are the
   * ones already stored.
   */
  async storeApplied(changes: Array<{ before: RunRecord; after: RunRecord }>): Promise<void> {
    if (changes.length === 0) return;
    const statements =
      changes.length <= ROW_BY_ROW_MAX
        ? changes.flatMap((c) => appliedStatements(c.before, c.after))
        : appliedBatchStatements(changes, await this.textCollation());
    if (this.oneTrip) {
      await writeScript(this.db, this.writeTimeoutMs, statements);
      return;
    }
    await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      for (const sql of statements) await query(sql);
    });
  }

  /**
   * Stores one change made at once (cancel, retry, an overdue step) with its events, if the
   * run is still as it was read; false when someone changed it first.
   */
  async storeChange(
    before: RunRecord,
    after: RunRecord,
    key?: IdempotencyRecord,
  ): Promise<boolean> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const result = await updateGuarded(query, [
        {
          ...toRow(after),
          requested_seq: after.requestedSeq,
          expectedApplied: before.appliedSeq,
          expectedEvent: before.eventSeq,
          expectedRequested: before.requestedSeq,
        },
      ]);
      if (result.affectedRows !== 1) return false;
      await insertEvents(query, eventRows([after]));
      if (key) await insertIdempotencyRecords(query, [key]);
      return true;
    });
  }

  private collation: Promise<string> | undefined;

  /**
   * The collation of workflow_runs' text columns (it depends on how the database was
   * created): values the worker compares with them must have the same one.
   */
  private textCollation(): Promise<string> {
    this.collation ??= this.db('information_schema.COLUMNS')
      .select('COLLATION_NAME as name')
      .where({ TABLE_NAME: 'workflow_runs', COLUMN_NAME: 'id' })
      .andWhere('TABLE_SCHEMA', this.db.raw('DATABASE()'))
      .first()
      .then((row: { name?: string } | undefined) => {
        const name = row?.name ?? '';
        if (!/^utf8mb4_[a-z0-9_]+$/.test(name)) {
          throw new Error(`unexpected collation of workflow_runs.id: ${name}`);
        }
        return name;
      })
      .catch((err: unknown) => {
        this.collation = undefined; // asked again next time
        throw err;
      });
    return this.collation;
  }

  /** The run's history, in order. */
  async events(runId: string): Promise<RunEvent[]> {
    const rows = await this.db<RunEventTableRow>('run_events')
      .where({ run_id: runId })
      .orderBy('seq', 'asc');
    return rows.map(fromEventRow);
  }

  /** Marks a run failed, keeping the reason; a broken run_json is kept beside the reason. */
  async markFailed(
    id: string,
    expectedAppliedSeq: number,
    message: string,
    now: Date,
  ): Promise<void> {
    const row = await this.db<RunRow>('workflow_runs').where({ id }).first();
    if (!row || row.status === 'failed' || Number(row.applied_seq) !== expectedAppliedSeq) return;
    let document: Record<string, unknown>;
    try {
      const parsed = JSON.parse(row.run_json) as unknown;
      document =
        parsed && typeof parsed === 'object'
          ? (parsed as Record<string, unknown>)
          : { unreadable_run_json: row.run_json };
    } catch {
      document = { unreadable_run_json: row.run_json };
    }
    const at = new Date(Math.max(now.getTime(), row.last_activity.getTime()));
    document.error = { message, at: at.toISOString() };
    const eventSeq = Number(row.event_seq) + 1;
    const update = this.db('workflow_runs')
      .where({ id, applied_seq: expectedAppliedSeq, event_seq: row.event_seq })
      .whereIn('status', ['pending', 'active'])
      .update({
        status: 'failed',
        run_json: JSON.stringify(document),
        pending_since: null,
        last_activity: at,
        event_seq: eventSeq,
      })
      .toSQL()
      .toNative();
    const failed = await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const result = await query(update.sql, update.bindings);
      if (result.affectedRows !== 1) return false;
      const data: Record<string, unknown> = { error: message };
      if (row.current_step_name !== null) data.step = row.current_step_name;
      await insertEvents(query, [
        {
          runId: id,
          organizationId: row.organization_id,
          event: { seq: eventSeq, type: 'run.failed', at: at.toISOString(), data },
        },
      ]);
      return true;
    });
    // Counted once committed, like every other change.
    if (failed) countChange('fail', [{ type: 'run.failed' }]);
  }

  /**
   * A page of the organization's runs, newest first, before the given seq, filtered. Each page
   * is a range scan of one index that starts with the organization, then the most selective
   * filter given (assignee, template, overdue, status), then seq, so a page costs the same
   * however many runs the organization has; the other filters are checked on the rows the
   * scan reads. Several statuses are one scan each, merged. FORCE INDEX: without it MariaDB
   * may read an index by its equality columns only ("ref") and filter seq < cursor row by row,
   * so a page N rows deep would read N rows.
   */
  async listSummaries(
    organizationId: string,
    limit: number,
    beforeSeq: number | null,
    filter: RunFilter = {},
  ): Promise<RunSummaryRow[]> {
    const statuses = filter.statuses ?? [];
    const scan = (status: RunStatus | undefined): Promise<RunSummaryRow[]> => {
      const index =
        filter.assignee !== undefined
          ? 'workflow_runs_org_assignee_seq'
          : filter.templateId !== undefined
            ? 'workflow_runs_org_template_seq'
            : filter.overdue !== undefined
              ? 'workflow_runs_org_overdue_seq'
              : status !== undefined
                ? 'workflow_runs_org_status_seq'
                : 'workflow_runs_org_seq';
      const query = this.db<RunSummaryRow>(
        this.db.raw(`?? FORCE INDEX (${index})`, ['workflow_runs']),
      )
        .select(...SUMMARY_COLUMNS)
        .where('organization_id', organizationId)
        .orderBy('seq', 'desc')
        .limit(limit);
      if (beforeSeq !== null) query.andWhere('seq', '<', beforeSeq);
      if (status !== undefined) query.andWhere('status', status);
      if (filter.assignee !== undefined) query.andWhere('current_step_assignee', filter.assignee);
      if (filter.templateId !== undefined) query.andWhere('template_id', filter.templateId);
      if (filter.overdue !== undefined) {
        query.andWhere('current_step_overdue', filter.overdue ? 1 : 0);
      }
      if (filter.updatedAfter) query.andWhere('last_activity', '>', filter.updatedAfter);
      if (filter.updatedBefore) query.andWhere('last_activity', '<', filter.updatedBefore);
      if (filter.createdAfter) query.andWhere('created_at', '>', filter.createdAfter);
      if (filter.createdBefore) query.andWhere('created_at', '<', filter.createdBefore);
      return query as unknown as Promise<RunSummaryRow[]>;
    };
    if (statuses.length <= 1) return scan(statuses[0]);
    // One scan per status, each at most a page; the newest `limit` of them all are the page.
    const pages = await Promise.all(statuses.map((status) => scan(status)));
    return pages
      .flat()
      .sort((a, b) => Number(b.seq) - Number(a.seq))
      .slice(0, limit);
  }

  /** Runs whose stored change has waited since before the given time: what is owed. */
  async findUnapplied(
    olderThan: Date,
    limit: number,
  ): Promise<Array<{ id: string; requested_seq: number }>> {
    return this.db('workflow_runs')
      .select('id', 'requested_seq')
      .where('pending_since', '<', olderThan)
      .orderBy('pending_since', 'asc')
      .limit(limit);
  }
}

/**
 * A table of values for a statement to join: a header row that names the columns (all NULL,
 * so it joins no run), then one row of SQL literals per element. MariaDB's table value
 * constructor: plain literals, which it reads far faster than the same values as a JSON
 * document for JSON_TABLE (a run document nested in JSON cost it twice as much to unpack).
 */
function valuesTable(columns: readonly string[], rows: readonly string[]): string {
  const header = columns.map((column) => `NULL AS ${column}`).join(', ');
  return `(SELECT ${header} UNION ALL VALUES ${rows.join(', ')})`;
}

/** The run's id, then the values of the columns a change rewrites, as SQL literals. */
function changedLiterals(run: RunRecord): string[] {
  const row = toRow(run);
  return [sqlLiteral(row.id), ...CHANGED_COLUMNS.map((column) => sqlLiteral(row[column]))];
}

/** The columns of updateAppliedSql's table: the run's id, its new values, then the guard. */
const APPLIED_COLUMNS = ['id', ...CHANGED_COLUMNS, 'expected_applied', 'expected_event'];

/** One applied change as a row of updateAppliedSql. */
function appliedRow(before: RunRecord, after: RunRecord): string {
  return `(${changedLiterals(after).join(', ')}, ${before.appliedSeq}, ${before.eventSeq})`;
}

/**
 * A guarded UPDATE of many runs, each to its own values, joined to the runs by id (an eq_ref
 * lookup per row). A run whose applied_seq or event_seq is no longer what the writer read is
 * left as it is. Linear in the batch, where a CASE per column with a WHEN per run was
 * quadratic for MySQL. A value too long for its column is refused by the table (strict mode).
 */
function updateAppliedSql(rows: readonly string[], collation: string): string {
  return (
    `UPDATE workflow_runs r JOIN ${valuesTable(APPLIED_COLUMNS, rows)} AS v ` +
    // The literals have the connection's collation; compared in the table's, the index serves.
    `ON r.id = v.id COLLATE ${collation} ` +
    `SET ${CHANGED_COLUMNS.map((column) => `r.${column} = v.${column}`).join(', ')} ` +
    'WHERE r.applied_seq = v.expected_applied AND r.event_seq = v.expected_event'
  );
}

/**
 * One UPDATE of many rows, each to its own values, each guarded by the applied_seq and
 * event_seq its writer read (and requested_seq, when given).
 */
async function updateGuarded(
  query: TxQuery,
  rows: Array<
    Omit<RunRow, 'seq'> & {
      expectedApplied: number;
      expectedEvent: number;
      expectedRequested?: number;
    }
  >,
) {
  const sets: string[] = [];
  const bindings: unknown[] = [];
  const columns: ReadonlyArray<keyof Omit<RunRow, 'seq'>> =
    rows[0]?.expectedRequested === undefined
      ? CHANGED_COLUMNS
      : [...CHANGED_COLUMNS, 'requested_seq'];
  for (const column of columns) {
    sets.push(`\`${column}\` = CASE id ${rows.map(() => 'WHEN ? THEN ?').join(' ')} END`);
    for (const row of rows) bindings.push(row.id, row[column]);
  }
  const guard = (pick: (row: (typeof rows)[number]) => number) => {
    for (const row of rows) bindings.push(row.id, pick(row));
    return `CASE id ${rows.map(() => 'WHEN ? THEN ?').join(' ')} END`;
  };
  let where = `applied_seq = ${guard((r) => r.expectedApplied)} AND event_seq = ${guard((r) => r.expectedEvent)}`;
  if (rows[0]?.expectedRequested !== undefined) {
    where += ` AND requested_seq = ${guard((r) => r.expectedRequested!)}`;
  }
  bindings.push(...rows.map((row) => row.id));
  return query(
    `UPDATE workflow_runs SET ${sets.join(', ')} WHERE ${where} AND id IN (${rows.map(() => '?').join(', ')})`,
    bindings,
  );
}

/** A run's events on their way to the table (eventLiterals), the run beside each. */
function eventRowsOf(run: RunRecord): RunEventRow[] {
  return run.events.map((event) => ({ runId: run.id, organizationId: run.organizationId, event }));
}

/** The columns of heldEventsStatements' table: the event's, then the run's new version. */
const HELD_EVENT_COLUMNS = [
  'run_id',
  'organization_id',
  'seq',
  'type',
  'at',
  'data',
  'held_applied',
  'held_event',
  'held_status',
];

/**
 * The INSERTs of the events of those changed runs whose row now holds the change (its
 * applied_seq, event_seq and status), as few as their size allows: each event row is joined
 * with its run's row as the writer's transaction sees it (its own UPDATE and every committed
 * one), so a change another writer made first brings no events of this writer's. An event
 * already stored (the same change written by a second writer, which made the same events) is
 * kept as it is.
 */
function heldEventsStatements(runs: readonly RunRecord[], collation: string): string[] {
  const rows = runs.flatMap((run) =>
    eventRowsOf(run).map(
      (event) =>
        `(${eventLiterals(event)}, ${run.appliedSeq}, ${run.eventSeq}, ${sqlLiteral(run.status)})`,
    ),
  );
  return chunkBySize(rows, (row) => row.length, STATEMENT_BYTES).map(
    (chunk) =>
      `${INSERT_EVENTS_SELECT} v.run_id, v.organization_id, v.seq, v.type, v.at, v.data ` +
      `FROM ${valuesTable(HELD_EVENT_COLUMNS, chunk)} AS v ` +
      // The literals have the connection's collation; compared in the table's.
      `JOIN workflow_runs r ON r.id = v.run_id COLLATE ${collation} ` +
      'AND r.applied_seq = v.held_applied AND r.event_seq = v.held_event ' +
      `AND r.status = v.held_status COLLATE ${collation} ` +
      'ON DUPLICATE KEY UPDATE run_events.seq = run_events.seq',
  );
}

/**
 * Batches of at most this many applied runs are written a statement per run (and per event)
 * rather than joined to a table of values. MariaDB builds a table of values as temporary
 * tables, and one holding run documents (BLOBs to it) goes to disk: some 350 µs of its CPU
 * per batch whatever the batch's size, against some 90 µs more per run for the
 * statement-per-run form (measured, two writers at once: the forms cost the same at 6 runs).
 * Workers keeping up with a steady flow apply one or two runs a batch, where the per-run form
 * halves MariaDB's cost; a backlog drains in batches of hundreds, where the join halves it.
 */
const ROW_BY_ROW_MAX = 5;

/** A batch of applied changes as one UPDATE joined to a table of values, then the events. */
function appliedBatchStatements(
  changes: ReadonlyArray<{ before: RunRecord; after: RunRecord }>,
  collation: string,
): string[] {
  const rows = changes.map((c) => appliedRow(c.before, c.after));
  return [
    ...chunkBySize(rows, (row) => row.length, STATEMENT_BYTES).map((chunk) =>
      updateAppliedSql(chunk, collation),
    ),
    ...heldEventsStatements(
      changes.map((c) => c.after),
      collation,
    ),
  ];
}

/**
 * One applied change as its own guarded UPDATE (a primary-key lookup) and an INSERT … SELECT
 * per event that finds the run's row only if it now holds the change (as heldEventsStatements).
 * Literals compared with a column take the column's collation: no COLLATE needed here.
 */
function appliedStatements(before: RunRecord, after: RunRecord): string[] {
  const [id, ...values] = changedLiterals(after);
  const sets = CHANGED_COLUMNS.map((column, i) => `${column} = ${values[i]}`).join(', ');
  const update =
    `UPDATE workflow_runs SET ${sets} WHERE id = ${id} ` +
    `AND applied_seq = ${before.appliedSeq} AND event_seq = ${before.eventSeq}`;
  const held =
    `FROM workflow_runs WHERE id = ${id} AND applied_seq = ${after.appliedSeq} ` +
    `AND event_seq = ${after.eventSeq} AND status = ${sqlLiteral(after.status)}`;
  return [
    update,
    ...eventRowsOf(after).map(
      (event) =>
        `${INSERT_EVENTS_SELECT} ${eventLiterals(event)} ${held} ` +
        'ON DUPLICATE KEY UPDATE run_events.seq = run_events.seq',
    ),
  ];
}

/**
 * The INSERTs of events, as few as their size allows; an event already stored (the same
 * change written by a second writer, which made the same events) is kept as it is.
 */
function insertEventsStatements(rows: readonly RunEventRow[]): string[] {
  return chunkBySize(rows.map(eventValues), (v) => v.length, STATEMENT_BYTES).map(
    (chunk) => `${insertEventsSql(chunk)} ON DUPLICATE KEY UPDATE seq = seq`,
  );
}

async function insertEvents(query: TxQuery, rows: RunEventRow[]): Promise<void> {
  for (const sql of insertEventsStatements(rows)) await query(sql);
}
