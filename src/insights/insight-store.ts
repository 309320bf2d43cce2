// The insights' tables (migrations/20261201000000_insights.ts): the fold's transaction, which
// reads a batch of events after the cursor, folds them (insight-fold.ts) and writes the rollups,
// the runs' fold states and the cursor together; and the reads the API answers from.
import { writeTransaction, type Db, type TxQuery } from '../db.js';
import { sqlLiteral, sqlRow, type SqlValue } from '../lib/sql-literal.js';
import type { RunEventType } from '../runs/run-events.js';
import { DEFAULT_TIME_ZONE } from '../templates/definition/due-dates.js';
import { binsText, mergeBins, parseBins, type DurationBins } from './duration-sketch.js';
import {
  foldEvents,
  type CreatedRunFacts,
  type FoldEvent,
  type FoldRun,
  type RollupKey,
} from './insight-fold.js';

/** What one fold pass did. */
export interface FoldPass {
  /** False when another worker holds the cursor: it is folding. */
  held: boolean;
  events: number;
  /** The cursor after the pass. */
  cursor: number;
}

interface RunStateRow {
  run_id: string;
  organization_id: string;
  template_id: string;
  template_version: number;
  created_at: Date;
  slices: string;
  status: FoldRun['status'];
  step: string | null;
  step_started_at: Date | null;
  step_due_at: Date | null;
  step_assignee: string | null;
  overdue: number;
}

interface DurationRow {
  organization_id: string;
  template_id: string;
  template_version: number;
  slice: string;
  step?: string;
  slot: Date;
  duration_count: number;
  duration_max: number | string;
  duration_bins: string;
}

const RUN_STATE_COLUMNS = [
  'run_id',
  'organization_id',
  'template_id',
  'template_version',
  'created_at',
  'slices',
  'status',
  'step',
  'step_started_at',
  'step_due_at',
  'step_assignee',
  'overdue',
];

const time = (ms: number | null) => (ms === null ? null : new Date(ms));

export class InsightStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
  ) {}

  /** The last event folded (the cursor's row made, at 0, if it is missing). */
  async cursor(): Promise<number> {
    await this.db.raw(
      'INSERT IGNORE INTO insight_cursor (id, event_id, updated_at) VALUES (1, 0, CURRENT_TIMESTAMP(3))',
    );
    const row = (await this.db('insight_cursor').where('id', 1).first('event_id')) as
      { event_id: number | string } | undefined;
    return Number(row?.event_id ?? 0);
  }

  /**
   * Folds the events after the cursor up to `upTo` (at most `limit` of them), in one
   * transaction with the cursor's row locked; a worker finding it held by another leaves the
   * pass to it. Every id up to `upTo` must be decided (committed or never to be: the
   * EventWatermark's promise), so that no event the cursor passes over commits later.
   */
  async fold(upTo: number, limit: number, now: Date): Promise<FoldPass> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const cursorRows = (await query(
        'SELECT event_id FROM insight_cursor WHERE id = 1 FOR UPDATE SKIP LOCKED',
      )) as unknown as Array<{ event_id: number | string }>;
      if (cursorRows.length === 0) return { held: false, events: 0, cursor: 0 };
      const cursor = Number(cursorRows[0]!.event_id);
      if (upTo <= cursor) return { held: true, events: 0, cursor };

      const eventRows = (await query(
        `SELECT id, run_id, organization_id, type, at, data FROM run_events
          WHERE id > ${cursor} AND id <= ${Number(upTo)} ORDER BY id LIMIT ${Number(limit)}`,
      )) as unknown as Array<{
        id: number | string;
        run_id: string;
        organization_id: string;
        type: RunEventType;
        at: Date;
        data: string;
      }>;
      // Nothing in the range: every id of it was rolled back or never used.
      const last = eventRows.length < limit ? upTo : Number(eventRows[eventRows.length - 1]!.id);
      if (eventRows.length === 0) {
        await query('UPDATE insight_cursor SET event_id = ?, updated_at = ? WHERE id = 1', [
          last,
          now,
        ]);
        return { held: true, events: 0, cursor: last };
      }
      const events: FoldEvent[] = eventRows.map((row) => ({
        id: Number(row.id),
        runId: row.run_id,
        organizationId: row.organization_id,
        type: row.type,
        at: row.at.getTime(),
        data: JSON.parse(row.data) as Record<string, unknown>,
      }));

      const runIds = [...new Set(events.map((e) => e.runId))];
      const runs = await this.runStates(query, runIds);
      const createdIds = events.filter((e) => e.type === 'run.created').map((e) => e.runId);
      const facts = await this.createdFacts(query, createdIds);
      const zones = await this.zones(query, [...new Set(events.map((e) => e.organizationId))]);

      const result = foldEvents(
        events,
        runs,
        (org) => zones.get(org) ?? DEFAULT_TIME_ZONE,
        (runId) => facts.get(runId) ?? { labels: [] },
      );

      const statements: string[] = [];
      statements.push(
        ...(await this.slotWrites(
          query,
          'insight_run_slots',
          ['created', 'completed', 'failed', 'cancelled'],
          [...result.runSlots.values()],
        )),
      );
      statements.push(
        ...(await this.slotWrites(
          query,
          'insight_step_slots',
          ['done', 'late', 'rejected', 'skipped', 'reopened'],
          [...result.stepSlots.values()],
        )),
      );
      const open = [...result.open.values()].filter(
        ({ delta }) => delta.runs !== 0 || delta.overdue !== 0,
      );
      if (open.length > 0) {
        statements.push(
          `INSERT INTO insight_open_steps
             (organization_id, template_id, template_version, slice, step, runs, overdue)
           VALUES ${open
             .map(({ key, delta }) =>
               sqlRow([
                 key.organizationId,
                 key.templateId,
                 key.version,
                 key.slice,
                 key.step!,
                 delta.runs,
                 delta.overdue,
               ]),
             )
             .join(', ')}
           ON DUPLICATE KEY UPDATE runs = runs + VALUES(runs), overdue = overdue + VALUES(overdue)`,
        );
      }
      if (result.changed.size > 0) {
        statements.push(
          `INSERT INTO insight_runs (${RUN_STATE_COLUMNS.join(', ')}) VALUES ${[...result.changed]
            .map(([runId, run]) =>
              sqlRow([
                runId,
                run.organizationId,
                run.templateId,
                run.version,
                new Date(run.createdAt),
                JSON.stringify(run.labels),
                run.status,
                run.step,
                time(run.stepStartedAt),
                time(run.stepDueAt),
                run.assignee,
                run.overdue ? 1 : 0,
              ]),
            )
            .join(', ')}
           ON DUPLICATE KEY UPDATE ${RUN_STATE_COLUMNS.slice(1)
             .map((c) => `${c} = VALUES(${c})`)
             .join(', ')}`,
        );
      }
      if (result.gone.size > 0) {
        statements.push(
          `DELETE FROM insight_runs WHERE run_id IN (${[...result.gone].map(sqlLiteral).join(', ')})`,
        );
      }
      statements.push(
        `UPDATE insight_cursor SET event_id = ${last}, updated_at = ${sqlLiteral(now)} WHERE id = 1`,
      );
      for (const statement of statements) await query(statement);
      return { held: true, events: events.length, cursor: last };
    });
  }

  /**
   * The fold states of the batch's runs. Read unlocked: retention, the one other writer (it
   * deletes the states of the finished runs it deletes), never deletes a run that has events
   * the fold has yet to read, for a run's change and its event commit together and a changed
   * run is not finished long enough ago (a retried failed run is active again).
   */
  private async runStates(query: TxQuery, runIds: string[]): Promise<Map<string, FoldRun>> {
    const runs = new Map<string, FoldRun>();
    if (runIds.length === 0) return runs;
    const rows = (await query(
      `SELECT ${RUN_STATE_COLUMNS.join(', ')} FROM insight_runs
        WHERE run_id IN (${runIds.map(sqlLiteral).join(', ')})`,
    )) as unknown as RunStateRow[];
    for (const row of rows) {
      runs.set(row.run_id, {
        organizationId: row.organization_id,
        templateId: row.template_id,
        version: Number(row.template_version),
        createdAt: row.created_at.getTime(),
        labels: JSON.parse(row.slices) as string[],
        status: row.status,
        step: row.step,
        stepStartedAt: row.step_started_at?.getTime() ?? null,
        stepDueAt: row.step_due_at?.getTime() ?? null,
        assignee: row.step_assignee,
        overdue: Boolean(row.overdue),
      });
    }
    return runs;
  }

  /**
   * The labels of runs just created (run_labels, through the run's seq) and their version, for
   * run.created events that do not carry it (stored before they did).
   */
  private async createdFacts(
    query: TxQuery,
    runIds: string[],
  ): Promise<Map<string, CreatedRunFacts>> {
    const facts = new Map<string, CreatedRunFacts>();
    if (runIds.length === 0) return facts;
    const rows = (await query(
      `SELECT r.id, r.template_version, l.label_key, l.label_value
         FROM workflow_runs r JOIN run_labels l ON l.run_seq = r.seq
        WHERE r.id IN (${runIds.map(sqlLiteral).join(', ')})`,
    )) as unknown as Array<{
      id: string;
      template_version: number;
      label_key: string;
      label_value: string;
    }>;
    for (const row of rows) {
      const fact = facts.get(row.id) ?? { version: Number(row.template_version), labels: [] };
      fact.labels.push(`l:${row.label_key}:${row.label_value}`);
      facts.set(row.id, fact);
    }
    return facts;
  }

  private async zones(query: TxQuery, organizationIds: string[]): Promise<Map<string, string>> {
    const rows = (await query(
      `SELECT id, time_zone FROM organizations
        WHERE id IN (${organizationIds.map(sqlLiteral).join(', ')})`,
    )) as unknown as Array<{ id: string; time_zone: string | null }>;
    return new Map(rows.map((row) => [row.id, row.time_zone ?? DEFAULT_TIME_ZONE]));
  }

  /**
   * The writes of a slot table's deltas: counts are added; durations are merged with the
   * stored bins (read here: the fold is the tables' only writer, one at a time under the
   * cursor's lock) and written whole.
   */
  private async slotWrites<
    D extends { durations: DurationBins; durationCount: number; durationMax: number },
  >(
    query: TxQuery,
    table: 'insight_run_slots' | 'insight_step_slots',
    counts: ReadonlyArray<keyof D & string>,
    entries: ReadonlyArray<{ key: RollupKey; delta: D }>,
  ): Promise<string[]> {
    if (entries.length === 0) return [];
    const step = table === 'insight_step_slots';
    const keyColumns = [
      'organization_id',
      'template_id',
      'template_version',
      'slice',
      ...(step ? ['step'] : []),
      'slot',
    ];
    const keyValues = (key: RollupKey): SqlValue[] => [
      key.organizationId,
      key.templateId,
      key.version,
      key.slice,
      ...(step ? [key.step!] : []),
      new Date(key.slot!),
    ];
    const keyOf = (values: readonly SqlValue[]) =>
      values.map((v) => (v instanceof Date ? v.getTime() : String(v))).join('\u0000');

    const timed = entries.filter(({ delta }) => delta.durationCount > 0);
    const stored = new Map<string, DurationRow>();
    if (timed.length > 0) {
      const rows = (await query(
        `SELECT ${keyColumns.join(', ')}, duration_count, duration_max, duration_bins FROM ${table}
          WHERE (${keyColumns.join(', ')}) IN (${timed.map(({ key }) => sqlRow(keyValues(key))).join(', ')})`,
      )) as unknown as DurationRow[];
      for (const row of rows) {
        stored.set(
          keyOf([
            row.organization_id,
            row.template_id,
            Number(row.template_version),
            row.slice,
            ...(step ? [row.step!] : []),
            row.slot,
          ]),
          row,
        );
      }
    }

    const values = entries.map(({ key, delta }) => {
      const keyed = keyValues(key);
      let durationCount = delta.durationCount;
      let durationMax = delta.durationMax;
      let bins = delta.durations;
      const before = durationCount > 0 ? stored.get(keyOf(keyed)) : undefined;
      if (before) {
        durationCount += Number(before.duration_count);
        durationMax = Math.max(durationMax, Number(before.duration_max));
        bins = parseBins(before.duration_bins);
        mergeBins(bins, delta.durations);
      }
      return sqlRow([
        ...keyed,
        ...counts.map((name) => Number(delta[name])),
        durationCount,
        Math.round(durationMax),
        binsText(bins),
      ]);
    });
    // A row without new durations keeps its own (duration_count 0 in VALUES: nothing to set).
    const keep = (column: string) =>
      `${column} = IF(VALUES(duration_count) = 0, ${column}, VALUES(${column}))`;
    return [
      `INSERT INTO ${table}
         (${[...keyColumns, ...counts, 'duration_count', 'duration_max', 'duration_bins'].join(', ')})
       VALUES ${values.join(', ')}
       ON DUPLICATE KEY UPDATE ${[
         ...counts.map((name) => `${name} = ${name} + VALUES(${name})`),
         keep('duration_bins'),
         keep('duration_max'),
         keep('duration_count'),
       ].join(', ')}`,
    ];
  }
}
