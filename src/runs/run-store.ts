// Runs in MySQL: reads, and the sending of the statements run-sql.ts builds. Every change is
// written in one transaction with its events, so an event exists only if its change was
// committed; every change is guarded by the version its writer read (see run-sql.ts).
import { scriptTransaction, writeBatch, writeScript, writeTransaction, type Db } from '../db.js';
import { onPool, type Reader } from '../db-replicas.js';
import { insertIdempotencySql, type IdempotencyRecord } from '../idempotency/idempotency-keys.js';
import { countChange } from '../metrics/metrics.js';
import { versionKey } from '../templates/template-rows.js';
import { TemplateStore } from '../templates/template-store.js';
import { fromRow, type RunRow, type TemplatePagesOf } from './run-columns.js';
import { fromEventRow, type RunEvent, type RunEventTableRow } from './run-events.js';
import { insertLabelsSql } from './run-labels.js';
import {
  listTasks,
  type TaskFilter,
  type TaskOrder,
  type TaskPosition,
  type TaskRow,
} from '../tasks/task-list.js';
import {
  countRuns,
  listRunSummaries,
  RUN_COUNT_LIMIT,
  type RunCounts,
  type RunFilter,
  type RunSummaryRow,
} from './run-list.js';
import {
  STATEMENT_BYTES,
  assumptionsHold,
  templateGuardSql,
  type TemplateAssumption,
  appliedWrite,
  type AppliedWrite,
  changeAtOnceSql,
  eventRowsOf,
  insertEventsStatements,
  insertRunsStatements,
  requestSql,
  unreadableFailedStatements,
  type AppliedChange,
} from './run-sql.js';
import { failRun } from './run-state.js';
import { RunStateError, type RunRecord } from './run-record.js';
import { isOpen } from './run-status.js';

/**
 * New runs not stored because a template they were made from changed (a new version saved,
 * or archived) since its head was read: nothing was stored; make them again.
 */
export class TemplateHeadChanged extends Error {
  constructor() {
    super("a template's head changed since new runs were made from it");
    this.name = 'TemplateHeadChanged';
  }
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
  /**
   * Told the organizations whose events a commit wrote, after the commit (the live event
   * stream's wake-up, src/streams/event-signal.ts). Every write of events goes through here.
   */
  onEventsCommitted?: (organizationIds: readonly string[]) => void;
  /** Where the API's reads of lists, counts and runs in full go (src/db-replicas.ts). */
  reader?: Reader;
}

/** The organizations of the runs given. */
function organizationsOf(runs: readonly Pick<RunRecord, 'organizationId'>[]): string[] {
  return [...new Set(runs.map((run) => run.organizationId))];
}

export class RunStore {
  private readonly writeTimeoutMs: number;
  private readonly oneTrip: boolean;
  private readonly batches: Db | undefined;
  private readonly templates: TemplateStore;
  private readonly eventsCommitted: (organizationIds: readonly string[]) => void;
  private readonly read: Reader;

  constructor(
    private readonly db: Db,
    options: RunStoreOptions = {},
  ) {
    this.writeTimeoutMs = options.writeTimeoutMs ?? 5000;
    this.oneTrip = options.oneTrip ?? false;
    this.batches = options.batches;
    this.templates = options.templates ?? new TemplateStore(db);
    this.eventsCommitted = options.onEventsCommitted ?? (() => undefined);
    this.read = options.reader ?? onPool(db);
  }

  /**
   * Stores new runs in one transaction: all or nothing, and a failure that is not an
   * OutcomeUnknownError means nothing was stored. Rows get their seq (list order) from the
   * database. The transaction first reads the heads of the templates the runs were made from
   * (templateGuardSql): when one is not as `assumptions` say, nothing is stored and it rejects
   * with TemplateHeadChanged.
   */
  async insertMany(
    runs: readonly RunRecord[],
    keys: IdempotencyRecord[] = [],
    assumptions: readonly TemplateAssumption[] = [],
  ): Promise<void> {
    const keySql = insertIdempotencySql(keys);
    const guard = assumptions.length > 0 ? [templateGuardSql(assumptions)] : [];
    const statements = [
      ...guard,
      ...(keySql ? [keySql] : []),
      ...insertRunsStatements(runs),
      ...insertEventsStatements(eventRowsOf(runs)),
    ];
    // After the runs: each label row takes its run's seq. None when no run has labels.
    const labelSql = insertLabelsSql(runs);
    if (labelSql) statements.push(labelSql);
    const check = (heads: unknown) => {
      if (!assumptionsHold(assumptions, heads as Parameters<typeof assumptionsHold>[1])) {
        throw new TemplateHeadChanged();
      }
    };
    // Together only while they fit one statement's budget: far under max_allowed_packet.
    if (this.batches && statements.reduce((n, sql) => n + sql.length, 0) <= STATEMENT_BYTES) {
      await writeBatch(this.batches, this.writeTimeoutMs, statements, (results) => {
        if (guard.length > 0) check(results[0]);
      });
    } else {
      await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
        for (const [i, sql] of statements.entries()) {
          const result = await query(sql);
          if (i === 0 && guard.length > 0) check(result);
        }
      });
    }
    this.eventsCommitted(organizationsOf(runs));
  }

  async findForOrganization(organizationId: string, id: string): Promise<RunRecord | undefined> {
    const row = await this.db<RunRow>('workflow_runs')
      .where({ id, organization_id: organizationId })
      .first();
    return row ? this.runFromRow(row) : undefined;
  }

  /** A run by id alone, for workers (a job names the run; the organization comes with it). */
  async findById(id: string): Promise<RunRecord | undefined> {
    const row = await this.db<RunRow>('workflow_runs').where({ id }).first();
    return row ? this.runFromRow(row) : undefined;
  }

  /** Raw rows by id, for workers; a row whose run_json is broken is still returned. */
  async findRowsByIds(ids: string[]): Promise<RunRow[]> {
    if (ids.length === 0) return [];
    return this.db<RunRow>('workflow_runs').whereIn('id', ids);
  }

  /** The pages of the rows' template versions, for fromRow (one query for those not cached). */
  async templatesFor(
    rows: ReadonlyArray<Pick<RunRow, 'template_id' | 'template_version'>>,
  ): Promise<TemplatePagesOf> {
    const templates = await this.templates.findVersions(
      rows.map((row) => ({ id: row.template_id, version: Number(row.template_version) })),
    );
    return (templateId, version) => templates.get(versionKey(templateId, version));
  }

  /** A run from its row, with its template's pages. */
  private async runFromRow(row: RunRow): Promise<RunRecord> {
    return fromRow(row, await this.templatesFor([row]));
  }

  /**
   * Runs whose current step's wake time (current_step_wake_at) came before the given time: what
   * the clock owes them, and what a lost timer leaves owed. A range scan of that column, which
   * is NULL for every run that is not active.
   */
  async findWakeDue(before: Date, limit: number): Promise<Array<{ id: string }>> {
    return this.db('workflow_runs')
      .select('id')
      .where('current_step_wake_at', '<', before)
      .orderBy('current_step_wake_at', 'asc')
      .limit(limit);
  }

  /**
   * The organization's owed runs (a change stored, not yet applied), longest waiting first: one
   * turn's work, read whole so that the applier need not read them again. A range scan of
   * (organization_id, pending_since) that starts at the first owed run, so it reads `limit`
   * entries however many runs the organization has.
   */
  async owedRuns(organizationId: string, limit: number): Promise<RunRow[]> {
    // FORCE INDEX: otherwise MariaDB may read the index by organization alone ("ref") and step
    // over every run of the organization that owes nothing (NULL sorts first) to find the owed.
    const [rows] = (await this.db.raw(
      'SELECT * FROM workflow_runs FORCE INDEX (workflow_runs_org_pending) ' +
        'WHERE organization_id = ? AND pending_since IS NOT NULL ORDER BY pending_since LIMIT ?',
      [organizationId, limit],
    )) as [RunRow[]];
    return rows;
  }

  /**
   * Organizations with a run whose change has waited since before the given time, longest
   * waiting first: what the reconciler gives a turn. One index dive per organization
   * (MariaDB's loose index scan of (organization_id, pending_since) for MIN), not a read of
   * every owed run: a backlog of a million runs in one organization is one row here.
   */
  async organizationsOwed(olderThan: Date, limit: number): Promise<string[]> {
    const [rows] = (await this.db.raw(
      'SELECT organization_id, MIN(pending_since) AS since FROM workflow_runs ' +
        'WHERE pending_since < ? GROUP BY organization_id ORDER BY since LIMIT ?',
      [olderThan, limit],
    )) as [Array<{ organization_id: string }>];
    return rows.map((row) => row.organization_id);
  }

  /** A page of the organization's run summaries (run-list.ts). */
  listSummaries(
    organizationId: string,
    limit: number,
    beforeSeq: number | null,
    filter: RunFilter = {},
  ): Promise<RunSummaryRow[]> {
    return this.read((db) => listRunSummaries(db, organizationId, limit, beforeSeq, filter));
  }

  /** A page of the organization's tasks (src/tasks/task-list.ts), read where lists are. */
  listTasks(
    organizationId: string,
    filter: TaskFilter,
    order: TaskOrder,
    limit: number,
    at: TaskPosition | null,
  ): Promise<TaskRow[]> {
    return this.read((db) => listTasks(db, organizationId, filter, order, limit, at));
  }

  /** The organization's runs matching the filter, by status, each up to RUN_COUNT_LIMIT. */
  countRuns(organizationId: string, filter: RunFilter): Promise<RunCounts> {
    return this.read((db) => countRuns(db, organizationId, filter, RUN_COUNT_LIMIT));
  }

  /** The organization's run with its history, read where the reader says (a run in full). */
  async findInFull(
    organizationId: string,
    id: string,
  ): Promise<{ run: RunRecord; history: RunEvent[] } | undefined> {
    const found = await this.read(async (db) => {
      const row = await db<RunRow>('workflow_runs')
        .where({ id, organization_id: organizationId })
        .first();
      return row ? { row, history: await this.events(row.id, db) } : undefined;
    });
    return found && { run: await this.runFromRow(found.row), history: found.history };
  }

  /** The run's history, in order. */
  async events(runId: string, db: Db = this.db): Promise<RunEvent[]> {
    const rows = await db<RunEventTableRow>('run_events')
      .where({ run_id: runId })
      .orderBy('seq', 'asc');
    return rows.map(fromEventRow);
  }

  /**
   * Stores a requested change made by the API: only if nobody changed the run since it was
   * read. Returns false when another request won.
   */
  async storeRequest(
    before: RunRecord,
    after: RunRecord,
    key?: IdempotencyRecord,
  ): Promise<boolean> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const result = await query(requestSql(before, after));
      if (result.affectedRows !== 1) return false;
      const keySql = key && insertIdempotencySql([key]);
      if (keySql) await query(keySql);
      return true;
    });
  }

  /** Stores an Idempotency-Key's answer alone, for a request that changed nothing. */
  async storeAnswer(key: IdempotencyRecord): Promise<void> {
    const sql = insertIdempotencySql([key]);
    if (!sql) return;
    await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      await query(sql);
    });
  }

  /** Stores changes a worker applied, each with its events, in one transaction (run-sql.ts). */
  async storeApplied(changes: readonly AppliedChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.sendApplied(await this.planApplied(changes));
    this.eventsCommitted(organizationsOf(changes.map((change) => change.after)));
  }

  /** The statements of a worker's write of these changes (run-sql.ts, appliedWrite). */
  async planApplied(changes: readonly AppliedChange[]): Promise<AppliedWrite> {
    return appliedWrite(changes, await this.textCollation());
  }

  /** Sends a worker's write (planApplied) as one transaction. */
  async sendApplied(write: AppliedWrite): Promise<void> {
    if ('statements' in write) {
      if (this.oneTrip) {
        await writeScript(this.db, this.writeTimeoutMs, write.statements);
      } else {
        await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
          for (const sql of write.statements) await query(sql);
        });
      }
    } else if (this.oneTrip) {
      // Two round trips: the UPDATE, then what follows from the runs it changed.
      await scriptTransaction(this.db, this.writeTimeoutMs, write.updates, (results, script) =>
        script.commit(write.rest(updatedRows(results))),
      );
    } else {
      await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
        const results = [];
        for (const sql of write.updates) results.push(await query(sql));
        for (const sql of write.rest(updatedRows(results))) await query(sql);
      });
    }
  }

  /**
   * Stores one change made at once (cancel, retry, an overdue step, a failure) with its events,
   * if the run is still as it was read; false when someone changed it first.
   */
  async storeChange(
    before: RunRecord,
    after: RunRecord,
    key?: IdempotencyRecord,
  ): Promise<boolean> {
    const { update, events, terms } = changeAtOnceSql({ before, after });
    const keySql = key && insertIdempotencySql([key]);
    const stored = await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const result = await query(update);
      if (result.affectedRows !== 1) return false;
      for (const sql of [...events, ...terms]) await query(sql);
      if (keySql) await query(keySql);
      return true;
    });
    if (stored) this.eventsCommitted([after.organizationId]);
    return stored;
  }

  /**
   * Marks a run failed with the reason (failRun), if its change is still the one that failed
   * (the applied_seq read when it failed). A run whose document cannot be read at all is
   * marked failed as it is, its broken JSON kept beside the reason.
   */
  async markFailed(
    id: string,
    expectedAppliedSeq: number,
    message: string,
    now: Date,
  ): Promise<void> {
    const [row] = await this.findRowsByIds([id]);
    if (!row || !isOpen(row.status) || Number(row.applied_seq) !== expectedAppliedSeq) return;
    let run: RunRecord | undefined;
    try {
      run = fromRow(row, await this.templatesFor([row]));
    } catch (err) {
      if (!(err instanceof RunStateError)) throw err;
    }
    let failed: boolean;
    if (run) {
      const after = failRun(run, message, now);
      failed = await this.storeChange(run, after);
    } else {
      const at = new Date(Math.max(now.getTime(), row.last_activity.getTime()));
      const { update, event, terms } = unreadableFailedStatements(
        { ...row, applied_seq: Number(row.applied_seq), event_seq: Number(row.event_seq) },
        message,
        at,
      );
      failed = await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
        if ((await query(update)).affectedRows !== 1) return false;
        await query(event);
        await query(terms);
        return true;
      });
      if (failed) this.eventsCommitted([row.organization_id]);
    }
    // Counted once committed, like every other change.
    if (failed) countChange('fail', [{ type: 'run.failed' }]); // failRun's one event
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
}

/** The rows the UPDATEs whose results these are matched (mysql2 asks for found rows). */
function updatedRows(results: readonly unknown[]): number {
  return results.reduce<number>(
    (sum, result) => sum + ((result as { affectedRows?: number }).affectedRows ?? 0),
    0,
  );
}
