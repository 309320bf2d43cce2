// Runs in MySQL. Every state change is a guarded update: it names the applied_seq (and for
// requests the requested_seq) it read, so a second writer of the same change matches no row.
import type { Knex } from 'knex';
import { writeTransaction, type Db } from '../db.js';
import { chunkBySize } from '../lib/chunks.js';
import { sqlLiteral } from '../lib/sql-literal.js';
import {
  RunStateError,
  documentJson,
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
  run_json: string;
  requested_seq: number;
  applied_seq: number;
  pending_since: Date | null;
  last_activity: Date;
  created_at: Date;
}

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
    run_json: documentJson(run.document),
    requested_seq: run.requestedSeq,
    applied_seq: run.appliedSeq,
    pending_since: run.pendingSince,
    last_activity: run.lastActivity,
    created_at: run.createdAt,
  };
}

export function fromRow(row: RunRow): RunRecord {
  let document: RunDocument;
  try {
    document = JSON.parse(row.run_json) as RunDocument;
  } catch {
    throw new RunStateError(`run_json of run ${row.id} is not valid JSON`);
  }
  if (!document || typeof document !== 'object' || !Array.isArray(document.steps)) {
    throw new RunStateError(`run_json of run ${row.id} is not a run document`);
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
    document,
    requestedSeq: Number(row.requested_seq),
    appliedSeq: Number(row.applied_seq),
    pendingSince: row.pending_since,
    lastActivity: row.last_activity,
    createdAt: row.created_at,
  };
}

/** Characters of JSON in one multi-row statement: with UTF-8 and escaping, well under 16 MiB. */
const STATEMENT_BYTES = 2 * 1024 * 1024;

/** Columns a worker rewrites when it applies a change. */
const APPLIED_COLUMNS = [
  'status',
  'current_step_index',
  'current_step_name',
  'current_step_assignee',
  'current_step_due_date',
  'run_json',
  'applied_seq',
  'pending_since',
  'last_activity',
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
  'run_json',
  'requested_seq',
  'applied_seq',
  'pending_since',
  'last_activity',
  'created_at',
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

export class RunStore {
  constructor(
    private readonly db: Db,
    /** How long a write, once sent, may wait for MySQL (see writeTransaction). */
    private readonly writeTimeoutMs = 5000,
  ) {}

  /**
   * Stores new runs in one transaction: all or nothing, and a failure that is not an
   * OutcomeUnknownError means nothing was stored. Rows get their seq (list order) from the
   * database.
   */
  async insertMany(runs: RunRecord[]): Promise<void> {
    const statements = insertStatements(runs);
    await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      for (const sql of statements) await query(sql);
    });
  }

  /** The same rows in autocommit statements, without the bounded transaction (bench baselines). */
  async insertManyUnbounded(runs: RunRecord[]): Promise<void> {
    for (const sql of insertStatements(runs)) await this.db.raw(sql);
  }

  async findForOrganization(organizationId: string, id: string): Promise<RunRecord | undefined> {
    const row = await this.db<RunRow>('workflow_runs')
      .where({ id, organization_id: organizationId })
      .first();
    return row ? fromRow(row) : undefined;
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
  async storeRequest(before: RunRecord, after: RunRecord): Promise<boolean> {
    const { sql, bindings } = this.db('workflow_runs')
      .where({
        id: before.id,
        organization_id: before.organizationId,
        requested_seq: before.requestedSeq,
        applied_seq: before.appliedSeq,
        status: before.status,
      })
      .update({
        requested_seq: after.requestedSeq,
        pending_since: after.pendingSince,
        run_json: documentJson(after.document),
      })
      .toSQL()
      .toNative();
    const result = await writeTransaction(this.db, this.writeTimeoutMs, (query) =>
      query(sql, bindings),
    );
    return result.affectedRows === 1;
  }

  /**
   * Stores applied changes in one statement. Each row is updated only if its applied_seq is
   * still the one the worker read; rows another worker already moved are left alone.
   */
  async storeApplied(
    changes: Array<{ expectedAppliedSeq: number; run: RunRecord }>,
  ): Promise<void> {
    const rows = changes.map((c) => ({ ...toRow(c.run), expected: c.expectedAppliedSeq }));
    for (const chunk of chunkBySize(
      rows,
      (row) => 2 * row.run_json.length + 512,
      STATEMENT_BYTES,
    )) {
      await this.updateApplied(chunk);
    }
  }

  private async updateApplied(
    rows: Array<Omit<RunRow, 'seq'> & { expected: number }>,
  ): Promise<void> {
    const sets: string[] = [];
    const bindings: unknown[] = [];
    for (const column of APPLIED_COLUMNS) {
      sets.push(`\`${column}\` = CASE id ${rows.map(() => 'WHEN ? THEN ?').join(' ')} END`);
      for (const row of rows) bindings.push(row.id, row[column]);
    }
    const guard = `CASE id ${rows.map(() => 'WHEN ? THEN ?').join(' ')} END`;
    for (const row of rows) bindings.push(row.id, row.expected);
    bindings.push(...rows.map((row) => row.id));
    await this.db.raw(
      `UPDATE workflow_runs SET ${sets.join(', ')} WHERE applied_seq = ${guard} AND id IN (${rows.map(() => '?').join(', ')})`,
      bindings as Knex.RawBinding[],
    );
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
    await this.db('workflow_runs')
      .where({ id, applied_seq: expectedAppliedSeq })
      .whereNot('status', 'failed')
      .update({
        status: 'failed',
        run_json: JSON.stringify(document),
        pending_since: null,
        last_activity: at,
      });
  }

  /** A page of the organization's runs, newest first, before the given seq. */
  async listSummaries(
    organizationId: string,
    limit: number,
    beforeSeq: number | null,
  ): Promise<RunSummaryRow[]> {
    // FORCE INDEX: without it MariaDB reads the (organization_id, seq) index by organization
    // only ("ref") and filters seq < cursor row by row, so a page N rows deep read N rows
    // (1 s half way down a 200,000-run organization). Forced, it is a range scan on both
    // columns and every page costs the same.
    const query = this.db<RunSummaryRow>(
      this.db.raw('?? FORCE INDEX (workflow_runs_org_seq)', ['workflow_runs']),
    )
      .select(
        'seq',
        'id',
        'workflow_name',
        'status',
        'current_step_name',
        'current_step_assignee',
        'current_step_due_date',
        'last_activity',
      )
      .where('organization_id', organizationId)
      .orderBy('seq', 'desc')
      .limit(limit);
    if (beforeSeq !== null) query.andWhere('seq', '<', beforeSeq);
    return query;
  }

  /** Runs whose stored change has waited since before the given time: what is owed. */
  async findOverdue(
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
