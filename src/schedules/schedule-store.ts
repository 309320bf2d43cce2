// Schedules in MySQL: a schedule's row (its cadence, its next time, when a sweep owes it a look)
// and its fires (what happened at each scheduled time, unique per (schedule, time): the rule
// that makes a time fire once whoever races for it). Every change is one transaction with its
// audit entry and the request's Idempotency-Key; a firing is one transaction with the runs it
// creates (their events and labels, as a create writes them), its fire rows and the schedule's
// next time, under the schedule's row lock.
import type { NewAuditEntry } from '../audit/audit-events.js';
import { insertAuditEntries } from '../audit/audit-store.js';
import { writeTransaction, type Db, type TxQuery } from '../db.js';
import {
  insertIdempotencyRecords,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import { sqlLiteral } from '../lib/sql-literal.js';
import type { RunRecord } from '../runs/run-record.js';
import { insertLabelsSql } from '../runs/run-labels.js';
import { eventRowsOf, insertEventsStatements, insertRunsStatements } from '../runs/run-sql.js';
import type { FireKind, OverlapPolicy, SkipReason } from './schedule-firing.js';
import type { ScheduleState } from './schedule-schemas.js';

/** What each run of a schedule is created with (a create-workflow-run's fields). */
export interface RunRequest {
  input_fields: Record<string, string>;
  user_assignments: Record<string, string>;
  labels?: Record<string, string>;
}

export interface ScheduleRow {
  seq: number;
  id: string;
  organization_id: string;
  template_id: string;
  template_version: number | null;
  run_request: string;
  cron: string | null;
  interval_seconds: number | null;
  time_zone: string;
  start_at: Date | null;
  end_at: Date | null;
  overlap: OverlapPolicy;
  catchup_window_seconds: number;
  state: ScheduleState;
  note: string | null;
  next_fire_at: Date | null;
  buffered_for: Date | null;
  wake_at: Date | null;
  last_run_id: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** The columns a change writes: every one but seq, id, organization_id and created_at. */
export type ScheduleValues = Omit<ScheduleRow, 'seq'>;

export interface FireRow {
  id: number;
  schedule_id: string;
  organization_id: string;
  scheduled_for: Date;
  kind: FireKind;
  outcome: 'fired' | 'skipped' | 'buffered';
  reason: SkipReason | null;
  missed: number;
  until: Date | null;
  run_id: string | null;
  run_seq: number | null;
  at: Date;
}

/** A record to write: a fire with its run, a skip, or a time held. */
export type NewFire =
  | { kind: FireKind; outcome: 'fired'; scheduledFor: Date; run: RunRecord }
  | { kind: FireKind; outcome: 'buffered'; scheduledFor: Date }
  | {
      kind: FireKind;
      outcome: 'skipped';
      scheduledFor: Date;
      reason: SkipReason;
      missed: number;
      until?: Date;
    };

/** A schedule's records and its row after them, written under its lock. */
export interface ScheduleWrite {
  before: ScheduleRow;
  after: ScheduleValues;
  fires: NewFire[];
  /** Fires that turn an earlier single skip of the same time into a fire (a backfill). */
  replacing?: ReadonlySet<number>;
}

const WRITTEN: ReadonlyArray<keyof ScheduleValues> = [
  'template_id',
  'template_version',
  'run_request',
  'cron',
  'interval_seconds',
  'time_zone',
  'start_at',
  'end_at',
  'overlap',
  'catchup_window_seconds',
  'state',
  'note',
  'next_fire_at',
  'buffered_for',
  'wake_at',
  'last_run_id',
  'version',
  'updated_at',
];

const INSERTED: ReadonlyArray<keyof ScheduleValues> = [
  'id',
  'organization_id',
  'created_at',
  ...WRITTEN,
];

/** The statements that write a schedule's records and its row (guarded by the version read). */
function writeStatements(writes: readonly ScheduleWrite[], at: Date): string[] {
  const runs = writes.flatMap((w) =>
    w.fires.flatMap((f) => (f.outcome === 'fired' ? [f.run] : [])),
  );
  const statements: string[] = [];
  if (runs.length > 0) {
    statements.push(...insertRunsStatements(runs), ...insertEventsStatements(eventRowsOf(runs)));
    const labels = insertLabelsSql(runs);
    if (labels) statements.push(labels);
  }
  const cols =
    '(schedule_id, organization_id, scheduled_for, kind, outcome, reason, missed, `until`, run_id, run_seq, at)';
  const selects: string[] = [];
  const values: string[] = [];
  for (const w of writes) {
    const id = sqlLiteral(w.before.id);
    const org = sqlLiteral(w.before.organization_id);
    for (const f of w.fires) {
      if (w.replacing?.has(f.scheduledFor.getTime()) && f.outcome === 'fired') {
        statements.push(
          `UPDATE schedule_fires f JOIN workflow_runs r ON r.id = ${sqlLiteral(f.run.id)} ` +
            // The record keeps its kind (what asked for the time); it is a fire now.
            `SET f.outcome = 'fired', f.reason = NULL, f.missed = 1, ` +
            `f.until = NULL, f.run_id = r.id, f.run_seq = r.seq, f.at = ${sqlLiteral(at)} ` +
            `WHERE f.schedule_id = ${id} AND f.scheduled_for = ${sqlLiteral(f.scheduledFor)}`,
        );
        continue;
      }
      const common = `${id}, ${org}, ${sqlLiteral(f.scheduledFor)}, ${sqlLiteral(f.kind)}, ${sqlLiteral(f.outcome)}`;
      if (f.outcome === 'fired') {
        selects.push(
          `SELECT ${common}, NULL, 1, NULL, r.id, r.seq, ${sqlLiteral(at)} FROM workflow_runs r ` +
            `WHERE r.id = ${sqlLiteral(f.run.id)}`,
        );
      } else if (f.outcome === 'buffered') {
        values.push(`(${common}, NULL, 1, NULL, NULL, NULL, ${sqlLiteral(at)})`);
      } else {
        values.push(
          `(${common}, ${sqlLiteral(f.reason)}, ${f.missed}, ${sqlLiteral(f.until ?? null)}, NULL, NULL, ${sqlLiteral(at)})`,
        );
      }
    }
  }
  if (selects.length > 0) {
    statements.push(`INSERT INTO schedule_fires ${cols} ${selects.join(' UNION ALL ')}`);
  }
  if (values.length > 0) {
    statements.push(`INSERT INTO schedule_fires ${cols} VALUES ${values.join(', ')}`);
  }
  return statements;
}

/** A schedule's UPDATE, guarded by the version it was read at. */
function updateSql(w: ScheduleWrite): string {
  const set = WRITTEN.map((c) => `\`${c}\` = ${sqlLiteral(w.after[c])}`).join(', ');
  return (
    `UPDATE workflow_schedules SET ${set} WHERE id = ${sqlLiteral(w.before.id)} ` +
    `AND version = ${w.before.version}`
  );
}

export class ScheduleStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
    /** Told the organizations whose run events a commit wrote (the live streams' wake-up). */
    private readonly onEventsCommitted: (organizationIds: readonly string[]) => void = () =>
      undefined,
  ) {}

  /** After a commit: the organizations of the runs its writes created. */
  private committed(writes: readonly ScheduleWrite[]): void {
    const orgs = new Set<string>();
    for (const w of writes) {
      if (w.fires.some((f) => f.outcome === 'fired')) orgs.add(w.before.organization_id);
    }
    if (orgs.size > 0) this.onEventsCommitted([...orgs]);
  }

  /** A new schedule, with its audit entry and the request's key. */
  async insert(
    values: ScheduleValues,
    audit: NewAuditEntry,
    key: IdempotencyRecord | undefined,
  ): Promise<void> {
    await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      await query(
        `INSERT INTO workflow_schedules (${INSERTED.map((c) => `\`${c}\``).join(', ')}) VALUES (` +
          INSERTED.map((c) => sqlLiteral(values[c])).join(', ') +
          ')',
      );
      await insertAuditEntries(query, [audit]);
      if (key) await insertIdempotencyRecords(query, [key]);
    });
  }

  /** The organization's schedule (another organization's is not found either). */
  async find(organizationId: string, id: string): Promise<ScheduleRow | undefined> {
    return this.db<ScheduleRow>('workflow_schedules')
      .where({ id, organization_id: organizationId })
      .first();
  }

  /** A page of the organization's schedules, newest first, before the given seq. */
  async list(
    organizationId: string,
    filter: { templateId?: string; state?: ScheduleState },
    limit: number,
    beforeSeq: number | null,
  ): Promise<ScheduleRow[]> {
    const index =
      filter.templateId !== undefined
        ? 'workflow_schedules_org_template_seq'
        : 'workflow_schedules_org_seq';
    const query = this.db<ScheduleRow>(
      this.db.raw(`?? FORCE INDEX (${index})`, ['workflow_schedules']),
    )
      .where('organization_id', organizationId)
      .orderBy('seq', 'desc')
      .limit(limit);
    if (filter.templateId !== undefined) query.andWhere('template_id', filter.templateId);
    if (filter.state !== undefined) query.andWhere('state', filter.state);
    if (beforeSeq !== null) query.andWhere('seq', '<', beforeSeq);
    return query;
  }

  /** A page of a schedule's records, newest first, before the given record id. */
  async history(scheduleId: string, limit: number, beforeId: number | null): Promise<FireRow[]> {
    const query = this.db<FireRow>('schedule_fires')
      .where('schedule_id', scheduleId)
      .orderBy('id', 'desc')
      .limit(limit);
    if (beforeId !== null) query.andWhere('id', '<', beforeId);
    return query;
  }

  /** The latest record of each schedule given. */
  async lastFires(scheduleIds: readonly string[]): Promise<Map<string, FireRow>> {
    if (scheduleIds.length === 0) return new Map();
    const [rows] = (await this.db.raw(
      'SELECT f.* FROM schedule_fires f JOIN (SELECT schedule_id, MAX(id) AS id FROM schedule_fires ' +
        `WHERE schedule_id IN (${scheduleIds.map(() => '?').join(', ')}) GROUP BY schedule_id) m ` +
        'ON f.id = m.id',
      [...scheduleIds],
    )) as [FireRow[]];
    return new Map(rows.map((row) => [row.schedule_id, row]));
  }

  /**
   * Changes the organization's schedule under its row lock: `change` is given the row as
   * locked (undefined: not found) and its transaction's query, and answers the write (or
   * undefined: nothing to write, its own answer kept). Its audit entry and key go with it.
   */
  async change<T>(
    organizationId: string,
    id: string,
    change: (
      row: ScheduleRow | undefined,
      query: TxQuery,
    ) => Promise<{
      write?: ScheduleWrite;
      audit?: NewAuditEntry;
      key?: IdempotencyRecord;
      result: T;
    }>,
  ): Promise<T> {
    const { result, writes } = await writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query) => {
        const [row] = (await query(
          'SELECT * FROM workflow_schedules WHERE id = ? AND organization_id = ? FOR UPDATE',
          [id, organizationId],
        )) as unknown as ScheduleRow[];
        const decided = await change(row, query);
        const made = decided.write ? [decided.write] : [];
        await this.write(query, made, new Date());
        if (decided.audit) await insertAuditEntries(query, [decided.audit]);
        if (decided.key) await insertIdempotencyRecords(query, [decided.key]);
        return { result: decided.result, writes: made };
      },
      { readCommitted: true },
    );
    this.committed(writes);
    return result;
  }

  /** Deletes the organization's schedule (its records stay: its runs' history), with its audit entry. */
  async delete(
    organizationId: string,
    id: string,
    audit: NewAuditEntry,
    key: IdempotencyRecord | undefined,
  ): Promise<boolean> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const result = await query(
        'DELETE FROM workflow_schedules WHERE id = ? AND organization_id = ?',
        [id, organizationId],
      );
      if (result.affectedRows !== 1) return false;
      await insertAuditEntries(query, [audit]);
      if (key) await insertIdempotencyRecords(query, [key]);
      return true;
    });
  }

  /**
   * The schedules a sweep owes a look (wake_at come), locked for this transaction (SKIP LOCKED:
   * another worker's sweep takes others), given to `decide`, whose writes are stored before the
   * commit. Returns what `decide` returned.
   */
  async sweep<T>(
    now: Date,
    limit: number,
    decide: (
      rows: ScheduleRow[],
      query: TxQuery,
    ) => Promise<{ writes: ScheduleWrite[]; result: T }>,
  ): Promise<T> {
    const { result, writes } = await writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query) => {
        const rows = (await query(
          'SELECT * FROM workflow_schedules WHERE wake_at <= ? ORDER BY wake_at LIMIT ? ' +
            'FOR UPDATE SKIP LOCKED',
          [now, limit],
        )) as unknown as ScheduleRow[];
        const decided = await decide(rows, query);
        await this.write(query, decided.writes, now);
        return decided;
      },
      { readCommitted: true },
    );
    this.committed(writes);
    return result;
  }

  /** The next wake time of any schedule (for a worker's timer after a sweep). */
  async nextWake(): Promise<Date | undefined> {
    const row = await this.db('workflow_schedules').min({ at: 'wake_at' }).first();
    return (row as { at: Date | null } | undefined)?.at ?? undefined;
  }

  private async write(query: TxQuery, writes: readonly ScheduleWrite[], at: Date): Promise<void> {
    if (writes.length === 0) return;
    for (const sql of writeStatements(writes, at)) await query(sql);
    for (const w of writes) {
      const result = await query(updateSql(w));
      if (result.affectedRows !== 1) {
        throw new Error(`schedule ${w.before.id} changed under its lock`);
      }
    }
  }
}

/** The records of the schedules given whose times fall in [from, to], in the sweep's transaction. */
export async function recordsBetween(
  query: TxQuery,
  scheduleIds: readonly string[],
  from: Date,
  to: Date,
): Promise<Array<Pick<FireRow, 'schedule_id' | 'scheduled_for' | 'outcome' | 'missed'>>> {
  if (scheduleIds.length === 0) return [];
  return (await query(
    'SELECT schedule_id, scheduled_for, outcome, missed FROM schedule_fires ' +
      `WHERE schedule_id IN (${scheduleIds.map(() => '?').join(', ')}) ` +
      'AND scheduled_for >= ? AND scheduled_for <= ?',
    [...scheduleIds, from, to],
  )) as unknown as Array<Pick<FireRow, 'schedule_id' | 'scheduled_for' | 'outcome' | 'missed'>>;
}
