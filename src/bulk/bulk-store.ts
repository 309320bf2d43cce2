// Bulk actions in MySQL. A bulk action is made in one transaction with its audit entry (and
// Idempotency-Key); each batch of its work is one transaction too: the batch's runs locked,
// their guarded changes with their events, and the action's cursor and counts moved, so a
// worker that dies midway leaves either the whole batch or none of it, and the next worker
// resumes after the last batch committed. No run is changed twice, no count is off.
import { taskTermStatements } from '../tasks/task-terms.js';
import type { Actor } from '../audit/actor.js';
import { actorJson } from '../audit/actor.js';
import type { NewAuditEntry } from '../audit/audit-events.js';
import { insertAuditEntries } from '../audit/audit-store.js';
import type { ResultSetHeader } from 'mysql2';
import { writeTransaction, type Db, type TxQuery } from '../db.js';
import {
  insertIdempotencyRecords,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import type { RunRow } from '../runs/run-columns.js';
import type { RunFilterInput } from '../runs/run-filter.js';
import {
  changeAtOnceSql,
  eventRowsOf,
  insertEventsStatements,
  type AppliedChange,
} from '../runs/run-sql.js';
import type { BulkActionKind, BulkMigration, BulkStatus } from './bulk-schemas.js';

export interface BulkActionRow {
  seq: number;
  id: string;
  organization_id: string;
  action: BulkActionKind;
  status: BulkStatus;
  filter: string;
  reason: string | null;
  actor: string;
  max_seq: number | string;
  cursor_seq: number | string | null;
  matched: number;
  done: number;
  skipped: string;
  started_at: Date;
  finished_at: Date | null;
  /** A bulk migration's plan (JSON, StoredPlan); NULL for a cancel or retry. */
  plan: string | null;
}

/** A bulk migration's plan as kept with its action. */
export interface StoredPlan extends BulkMigration {
  dryRun?: boolean;
}

export interface NewBulkAction {
  id: string;
  organizationId: string;
  action: BulkActionKind;
  filter: RunFilterInput;
  reason: string | undefined;
  actor: Actor;
  startedAt: Date;
  plan?: StoredPlan;
}

/** What a batch decided for the runs it locked: the changes to write, and the runs left alone. */
export interface BatchDecision {
  changes: AppliedChange[];
  /** A dry run's runs that would change (nothing written for them). */
  wouldChange?: number;
  /** Runs left alone, by the code a single cancel or retry of each would have been refused with. */
  skipped: Record<string, number>;
}

/** A batch's outcome: written, or not (the action moved on or ended meanwhile: read it again). */
export type BatchOutcome = { written: true; decision: BatchDecision } | { written: false };

/** The seq a batch starts below: the cursor, or just above the highest seq the action may match. */
export function batchStart(row: Pick<BulkActionRow, 'cursor_seq' | 'max_seq'>): number {
  return row.cursor_seq === null ? Number(row.max_seq) + 1 : Number(row.cursor_seq);
}

export class BulkStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
    private readonly options: {
      /** The pool sends several statements a query (a worker's). */
      oneTrip?: boolean;
      /** Told the organization after a batch that wrote events commits (src/streams/). */
      onEventsCommitted?: (organizationIds: readonly string[]) => void;
    } = {},
  ) {}

  /**
   * Stores a new bulk action, running, with its audit entry and its request's key. The highest
   * seq it may match is the organization's newest run as this transaction reads it: runs
   * created later are not matched.
   */
  async create(
    action: NewBulkAction,
    audit: NewAuditEntry,
    key: IdempotencyRecord | undefined,
  ): Promise<void> {
    await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const [newest] = (await query(
        'SELECT COALESCE(MAX(seq), 0) AS max_seq FROM workflow_runs WHERE organization_id = ?',
        [action.organizationId],
      )) as unknown as Array<{ max_seq: number | string }>;
      await query(
        'INSERT INTO bulk_actions (id, organization_id, action, status, filter, reason, actor, ' +
          'max_seq, cursor_seq, matched, done, skipped, started_at, finished_at, plan) ' +
          "VALUES (?, ?, ?, 'running', ?, ?, ?, ?, NULL, 0, 0, '{}', ?, NULL, ?)",
        [
          action.id,
          action.organizationId,
          action.action,
          JSON.stringify(action.filter),
          action.reason ?? null,
          actorJson(action.actor),
          newest?.max_seq ?? 0,
          action.startedAt,
          action.plan ? JSON.stringify(action.plan) : null,
        ],
      );
      await insertAuditEntries(query, [audit]);
      if (key) await insertIdempotencyRecords(query, [key]);
    });
  }

  /** The organization's bulk action, or undefined (another organization's is not found either). */
  async find(organizationId: string, id: string): Promise<BulkActionRow | undefined> {
    return this.db<BulkActionRow>('bulk_actions')
      .where({ id, organization_id: organizationId })
      .first();
  }

  /** A bulk action by id alone, for workers. */
  async findById(id: string): Promise<BulkActionRow | undefined> {
    return this.db<BulkActionRow>('bulk_actions').where({ id }).first();
  }

  /** Bulk actions still running, oldest first: what the reconciler makes sure has a job. */
  async running(limit: number): Promise<string[]> {
    const rows = await this.db('bulk_actions')
      .select('id')
      .where({ status: 'running' })
      .orderBy('seq', 'asc')
      .limit(limit);
    return rows.map((row: { id: string }) => row.id);
  }

  /**
   * One batch, in one transaction: the action is locked and must still be running at the
   * cursor `read` was read at (else nothing is written: another worker moved it); the runs are
   * locked (so what `decide` sees is what the guarded changes meet); the changes are written
   * with their events; the cursor moves to `lowestSeq` and the counts grow. `matched` counts
   * the runs of the batch found locked.
   */
  async applyBatch(
    read: BulkActionRow,
    runIds: readonly string[],
    lowestSeq: number,
    decide: (rows: RunRow[]) => Promise<BatchDecision>,
  ): Promise<BatchOutcome> {
    const outcome = await this.writeBatch(read, runIds, lowestSeq, decide);
    if (outcome.written && outcome.decision.changes.length > 0) {
      this.options.onEventsCommitted?.([read.organization_id]);
    }
    return outcome;
  }

  private writeBatch(
    read: BulkActionRow,
    runIds: readonly string[],
    lowestSeq: number,
    decide: (rows: RunRow[]) => Promise<BatchDecision>,
  ): Promise<BatchOutcome> {
    return writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query) => {
        const [head] = (await query(
          'SELECT status, cursor_seq FROM bulk_actions WHERE id = ? FOR UPDATE',
          [read.id],
        )) as unknown as Array<Pick<BulkActionRow, 'status' | 'cursor_seq'>>;
        if (
          !head ||
          head.status !== 'running' ||
          String(head.cursor_seq) !== String(read.cursor_seq)
        ) {
          return { written: false };
        }
        const rows =
          runIds.length === 0
            ? []
            : ((await query(
                `SELECT * FROM workflow_runs WHERE id IN (${runIds.map(() => '?').join(', ')}) ` +
                  'AND organization_id = ? FOR UPDATE',
                [...runIds, read.organization_id],
              )) as unknown as RunRow[]);
        const decision = await decide(rows);
        await this.writeChanges(query, decision.changes);
        await query(
          'UPDATE bulk_actions SET cursor_seq = ?, matched = matched + ?, done = done + ?, ' +
            'skipped = ? WHERE id = ?',
          [
            lowestSeq,
            rows.length,
            decision.changes.length + (decision.wouldChange ?? 0),
            JSON.stringify(
              mergeCounts(JSON.parse(read.skipped) as Record<string, number>, decision.skipped),
            ),
            read.id,
          ],
        );
        return { written: true, decision };
      },
      { readCommitted: true },
    );
  }

  /**
   * The batch's guarded changes, then all their events in a few multi-row INSERTs. The rows
   * are locked, so a guarded change that meets another version is a defect. With `oneTrip`
   * (a worker's pool, made with multipleStatements) the UPDATEs go in one round trip: a batch
   * of 200 is then a handful of round trips, not 400.
   */
  private async writeChanges(query: TxQuery, changes: readonly AppliedChange[]): Promise<void> {
    if (changes.length === 0) return;
    const updates = changes.map((change) => changeAtOnceSql(change).update);
    const affected: number[] = [];
    if (this.options.oneTrip && updates.length > 1) {
      const results = (await query(updates.join('; '))) as unknown as ResultSetHeader[];
      for (const result of results) affected.push(result.affectedRows);
    } else {
      for (const sql of updates) affected.push((await query(sql)).affectedRows);
    }
    const moved = affected.findIndex((n) => n !== 1);
    if (moved >= 0 || affected.length !== changes.length) {
      throw new Error(`run ${changes[Math.max(0, moved)]!.before.id} changed under its lock`);
    }
    for (const sql of insertEventsStatements(eventRowsOf(changes.map((c) => c.after)))) {
      await query(sql);
    }
    for (const sql of taskTermStatements(changes)) await query(sql);
  }

  /** Marks the action completed, if it is still running at the cursor it was read at. */
  async complete(read: BulkActionRow, at: Date): Promise<void> {
    await writeTransaction(this.db, this.writeTimeoutMs, (query) =>
      query(
        "UPDATE bulk_actions SET status = 'completed', finished_at = ? " +
          "WHERE id = ? AND status = 'running' AND cursor_seq <=> ?",
        [at, read.id, read.cursor_seq],
      ),
    );
  }
}

function mergeCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [code, n] of Object.entries(b)) out[code] = (out[code] ?? 0) + n;
  return out;
}
