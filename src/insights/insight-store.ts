// The fold's writes of the insights' tables (migrations/20261201000000_insights.ts): one
// transaction reads a batch of events after the cursor, folds them (insight-fold.ts) and writes
// the rollups, the runs' fold states and the cursor together. What the API reads of them is
// insight-reads.ts.
import { scriptTransaction, type Db } from '../db.js';
import { sqlLiteral, sqlRow, type SqlValue } from '../lib/sql-literal.js';
import type { RunEventType } from '../runs/run-events.js';
import { DEFAULT_TIME_ZONE } from '../templates/definition/due-dates.js';
import { binsText, mergeBins, parseBins, type DurationBins } from './duration-sketch.js';
import {
  byDay,
  foldEvents,
  labelSlice,
  rollupKeyText,
  type CreatedRunFacts,
  type FoldEvent,
  type FoldResult,
  type FoldRun,
  type RollupKey,
  type Rollups,
  type RunSlotDelta,
  type StepSlotDelta,
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

interface EventRow {
  id: number | string;
  run_id: string;
  organization_id: string;
  type: RunEventType;
  at: Date;
  data: string;
}

interface LabelRow {
  id: string;
  template_version: number;
  label_key: string;
  label_value: string;
}

interface DurationRow {
  organization_id: string;
  template_id: string;
  template_version: number;
  slice: string;
  step?: string;
  slot: Date;
  zone?: string;
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
    /** The organization's time zone (the settings' cache): the hours of its clock are the slots. */
    private readonly timeZoneOf: (organizationId: string) => Promise<string>,
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
   *
   * Four round trips at most (a scriptTransaction, as the webhook outbox's relay): the cursor
   * and the events; the fold states and the new runs' labels; the stored durations of the rows
   * that get new ones; the writes with the cursor and the COMMIT. A COMMIT left unanswered may
   * or may not have stored: the next pass reads the cursor and goes on from where it is.
   */
  async fold(upTo: number, limit: number, now: Date): Promise<FoldPass> {
    return scriptTransaction(
      this.db,
      this.writeTimeoutMs,
      [
        // The cursor in a variable of the connection for the events' read (NULL, so no event,
        // when another worker holds it).
        'SET @wrs_insight_cursor := NULL',
        'SELECT @wrs_insight_cursor := event_id AS event_id FROM insight_cursor WHERE id = 1 FOR UPDATE SKIP LOCKED',
        `SELECT id, run_id, organization_id, type, at, data FROM run_events
          WHERE id > @wrs_insight_cursor AND id <= ${Number(upTo)} ORDER BY id LIMIT ${Number(limit)}`,
      ],
      async ([, cursorRows, eventRows], script) => {
        const held = cursorRows as Array<{ event_id: number | string }>;
        if (held.length === 0) {
          await script.commit([]);
          return { held: false, events: 0, cursor: 0 };
        }
        const cursor = Number(held[0]!.event_id);
        const rows = eventRows as EventRow[];
        // Fewer than asked: every id up to `upTo` not read was rolled back or never used.
        const last = rows.length < limit ? Math.max(cursor, upTo) : Number(rows.at(-1)!.id);
        const moveCursor = `UPDATE insight_cursor SET event_id = ${last}, updated_at = ${sqlLiteral(now)} WHERE id = 1`;
        if (rows.length === 0) {
          await script.commit(last > cursor ? [moveCursor] : []);
          return { held: true, events: 0, cursor: last };
        }
        const events: FoldEvent[] = rows.map((row) => ({
          id: Number(row.id),
          runId: row.run_id,
          organizationId: row.organization_id,
          type: row.type,
          at: row.at.getTime(),
          data: JSON.parse(row.data) as Record<string, unknown>,
        }));

        const runIds = [...new Set(events.map((e) => e.runId))];
        const createdIds = events.filter((e) => e.type === 'run.created').map((e) => e.runId);
        const organizations = [...new Set(events.map((e) => e.organizationId))];
        const [[stateRows, labelRows = []], zones] = await Promise.all([
          script.run([
            `SELECT ${RUN_STATE_COLUMNS.join(', ')} FROM insight_runs
              WHERE run_id IN (${runIds.map(sqlLiteral).join(', ')})`,
            // The labels of the runs created (run_labels, through the run's seq), and their
            // version, for run.created events that do not carry it (stored before they did).
            ...(createdIds.length > 0
              ? [
                  `SELECT r.id, r.template_version, l.label_key, l.label_value
                     FROM workflow_runs r JOIN run_labels l ON l.run_seq = r.seq
                    WHERE r.id IN (${createdIds.map(sqlLiteral).join(', ')})`,
                ]
              : []),
          ]),
          Promise.all(organizations.map(async (id) => [id, await this.timeZoneOf(id)] as const)),
        ]);
        const zoneOf = new Map(zones);
        const facts = createdFactsOf(labelRows as LabelRow[]);
        const result = foldEvents(
          events,
          runStatesOf(stateRows as RunStateRow[]),
          (org) => zoneOf.get(org) ?? DEFAULT_TIME_ZONE,
          (runId) => facts.get(runId) ?? { labels: [] },
        );

        // The stored durations of the rows that get new ones, every table in one round trip.
        const reads = [
          RUN_SLOTS.timed(result.runSlots),
          STEP_SLOTS.timed(result.stepSlots),
          RUN_DAYS.timed(result.runDays),
          STEP_DAYS.timed(result.stepDays),
        ];
        const stored = await script.run(reads.filter((read) => read !== undefined));
        let next = 0;
        const storedOf = (read: string | undefined) =>
          read === undefined ? [] : (stored[next++] as DurationRow[]);
        const [runStored, stepStored, runDayStored, stepDayStored] = reads.map(storedOf);
        const statements = [
          ...RUN_SLOTS.writes(result.runSlots, runStored!),
          ...STEP_SLOTS.writes(result.stepSlots, stepStored!),
          ...RUN_DAYS.writes(result.runDays, runDayStored!),
          ...STEP_DAYS.writes(result.stepDays, stepDayStored!),
          ...openWrites(result.open),
          ...stateWrites(result.changed, result.gone),
          moveCursor,
        ];
        await script.commit(statements);
        return { held: true, events: events.length, cursor: last };
      },
    );
  }
}

/** The rows the fold state's SELECT gives. */
function runStatesOf(rows: readonly RunStateRow[]): Map<string, FoldRun> {
  const runs = new Map<string, FoldRun>();
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

/** The new runs' labels (as slices) and versions, from their label rows. */
function createdFactsOf(rows: readonly LabelRow[]): Map<string, CreatedRunFacts> {
  const facts = new Map<string, CreatedRunFacts>();
  for (const row of rows) {
    const fact = facts.get(row.id) ?? { version: Number(row.template_version), labels: [] };
    fact.labels.push(labelSlice(row.label_key, row.label_value));
    facts.set(row.id, fact);
  }
  return facts;
}

/** The fold states written back (the runs changed) and deleted (the runs gone). */
function stateWrites(changed: ReadonlyMap<string, FoldRun>, gone: ReadonlySet<string>): string[] {
  const statements: string[] = [];
  if (changed.size > 0) {
    statements.push(
      `INSERT INTO insight_runs (${RUN_STATE_COLUMNS.join(', ')}) VALUES ${[...changed]
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
  if (gone.size > 0) {
    statements.push(
      `DELETE FROM insight_runs WHERE run_id IN (${[...gone].map(sqlLiteral).join(', ')})`,
    );
  }
  return statements;
}

/** The open gauges' moves, added to what they hold. */
function openWrites(open: FoldResult['open']): string[] {
  const moved = [...open.values()].filter(({ delta }) => delta.runs !== 0 || delta.overdue !== 0);
  if (moved.length === 0) return [];
  return [
    `INSERT INTO insight_open_steps
       (organization_id, template_id, template_version, slice, step, runs, overdue)
     VALUES ${moved
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
  ];
}

type Timed = { durations: DurationBins; durationCount: number; durationMax: number };

/**
 * A slot table's statements for the fold's deltas: counts are added; durations are merged
 * with the stored bins (read first: the fold is the tables' only writer, one at a time under
 * the cursor's lock) and written whole.
 */
function slotTable<D extends Timed>(
  table: 'insight_run_slots' | 'insight_step_slots' | 'insight_run_days' | 'insight_step_days',
  step: boolean,
  counts: ReadonlyArray<keyof D & string>,
) {
  const daily = table.endsWith('_days');
  const keyColumns = [
    'organization_id',
    'template_id',
    'template_version',
    'slice',
    ...(step ? ['step'] : []),
    'slot',
    ...(daily ? ['zone'] : []),
  ];
  const keyValues = (key: RollupKey): SqlValue[] => [
    key.organizationId,
    key.templateId,
    key.version,
    key.slice,
    ...(step ? [key.step!] : []),
    new Date(key.slot!),
    ...(daily ? [key.zone!] : []),
  ];
  /** A stored row's key. */
  const keyOf = (row: DurationRow): RollupKey => ({
    organizationId: row.organization_id,
    templateId: row.template_id,
    version: Number(row.template_version),
    slice: row.slice,
    ...(step ? { step: row.step! } : {}),
    slot: row.slot.getTime(),
    ...(daily ? { zone: row.zone! } : {}),
  });
  type Entries = ReadonlyMap<string, { key: RollupKey; delta: D }>;
  return {
    table,
    /** Stored rows (every column) as the fold's entries. */
    rollupsOf(rows: ReadonlyArray<DurationRow & Record<string, unknown>>): Rollups<D> {
      const entries: Rollups<D> = new Map();
      for (const row of rows) {
        const key = keyOf(row);
        const delta = {
          durations: parseBins(row.duration_bins),
          durationCount: Number(row.duration_count),
          durationMax: Number(row.duration_max),
        } as Record<string, unknown>;
        for (const name of counts) delta[name] = Number(row[name]);
        entries.set(rollupKeyText(key), { key, delta: delta as D });
      }
      return entries;
    },
    /** The read of the stored durations of the rows that get new ones; none if no row does. */
    timed(entries: Entries): string | undefined {
      const timed = [...entries.values()].filter(({ delta }) => delta.durationCount > 0);
      if (timed.length === 0) return undefined;
      return `SELECT ${keyColumns.join(', ')}, duration_count, duration_max, duration_bins FROM ${table}
        WHERE (${keyColumns.join(', ')}) IN (${timed.map(({ key }) => sqlRow(keyValues(key))).join(', ')})`;
    },
    /** The upsert of every row, given what `timed` read. */
    writes(entries: Entries, stored: readonly DurationRow[]): string[] {
      if (entries.size === 0) return [];
      const before = new Map(stored.map((row) => [rollupKeyText(keyOf(row)), row]));
      const values = [...entries].map(([text, { key, delta }]) => {
        let durationCount = delta.durationCount;
        let durationMax = delta.durationMax;
        let bins = delta.durations;
        const row = durationCount > 0 ? before.get(text) : undefined;
        if (row) {
          durationCount += Number(row.duration_count);
          durationMax = Math.max(durationMax, Number(row.duration_max));
          bins = parseBins(row.duration_bins);
          mergeBins(bins, delta.durations);
        }
        return sqlRow([
          ...keyValues(key),
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
    },
  };
}

const STEP_COUNTS = ['done', 'late', 'rejected', 'skipped', 'reopened'] as const;
const RUN_COUNTS = ['created', 'completed', 'failed', 'cancelled'] as const;
const RUN_SLOTS = slotTable<RunSlotDelta>('insight_run_slots', false, RUN_COUNTS);
const STEP_SLOTS = slotTable<StepSlotDelta>('insight_step_slots', true, STEP_COUNTS);
const RUN_DAYS = slotTable<RunSlotDelta>('insight_run_days', false, RUN_COUNTS);
const STEP_DAYS = slotTable<StepSlotDelta>('insight_step_days', true, STEP_COUNTS);

/**
 * Makes the daily rollups anew from the hourly ones, each organization's days in its zone now:
 * the migration that added the daily tables fills them so. Holds the cursor's row, so no fold
 * writes meanwhile; a batch of rows at a time, an organization's template at a time.
 */
export async function rebuildDailyRollups(db: Db): Promise<void> {
  await db.transaction(async (trx) => {
    // No cursor row: no fold has run, there are no hourly rows (and the first worker makes it).
    const cursor = await trx('insight_cursor').where('id', 1).forUpdate().first('event_id');
    if (!cursor) return;
    const zones = new Map(
      (
        (await trx('organizations').select('id', 'time_zone')) as Array<{
          id: string;
          time_zone: string | null;
        }>
      ).map((row) => [row.id, row.time_zone ?? DEFAULT_TIME_ZONE]),
    );
    const zoneOf = (id: string) => zones.get(id) ?? DEFAULT_TIME_ZONE;
    await rebuild(trx, RUN_SLOTS, RUN_DAYS, zoneOf);
    await rebuild(trx, STEP_SLOTS, STEP_DAYS, zoneOf);
  });
}

type SlotTable<D extends Timed> = ReturnType<typeof slotTable<D>>;

async function rebuild<D extends Timed>(
  trx: Db,
  hourly: SlotTable<D>,
  daily: SlotTable<D>,
  zoneOf: (organizationId: string) => string,
): Promise<void> {
  await trx(daily.table).delete();
  const pairs = (await trx(hourly.table).distinct('organization_id', 'template_id')) as Array<{
    organization_id: string;
    template_id: string;
  }>;
  for (const pair of pairs) {
    const rows = (await trx(hourly.table).where(pair).select('*')) as Array<
      DurationRow & Record<string, unknown>
    >;
    const days = [...byDay(hourly.rollupsOf(rows), zoneOf)];
    for (let i = 0; i < days.length; i += 500) {
      for (const statement of daily.writes(new Map(days.slice(i, i + 500)), [])) {
        await trx.raw(statement);
      }
    }
  }
}
