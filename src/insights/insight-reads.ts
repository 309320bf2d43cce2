// What the API reads of the insights' rollups: for one organization (a template and version,
// or all), one slice, a range of hourly or daily slots. Each read is a range of a primary key
// or of an index by slot (migrations/20261201000000_insights.ts, 20261202000000_insight_days.ts):
// its cost is the number of rollup rows in the range (templates × versions × steps × hours or
// days), whatever the number of runs or events.
import type { Db } from '../db.js';
import { onPool, type Reader } from '../db-replicas.js';

/** Which rollups: the organization's, optionally one template (and one version), one slice. */
export interface RollupScope {
  organizationId: string;
  templateId?: string;
  templateVersion?: number;
  slice: string;
}

/** Which slots: hourly, or daily (each with the zone whose day it is). */
export type Grain = 'hour' | 'day';

const TABLES: Record<Grain, { run: string; step: string }> = {
  hour: { run: 'insight_run_slots', step: 'insight_step_slots' },
  day: { run: 'insight_run_days', step: 'insight_step_days' },
};

export interface RunSlotRow {
  slot: Date;
  /** Daily slots only. */
  zone?: string;
  created: number;
  completed: number;
  failed: number;
  cancelled: number;
  duration_count: number;
  duration_max: number | string;
  duration_bins: string;
}

export interface StepSlotRow {
  /** Daily slots only. */
  zone?: string;
  template_id: string;
  step: string;
  done: number;
  late: number;
  rejected: number;
  skipped: number;
  reopened: number;
  duration_count: number;
  duration_max: number | string;
  duration_bins: string;
}

export interface OpenStepRow {
  template_id: string;
  step: string;
  runs: number | string;
  overdue: number | string;
}

/** How far the fold has come: its cursor, and the time of the first event after it, if any. */
export interface FoldProgress {
  cursor: number;
  firstUnfoldedAt: Date | undefined;
}

export class InsightReads {
  constructor(
    private readonly db: Db,
    private readonly read: Reader = onPool(db),
  ) {}

  async runSlots(grain: Grain, scope: RollupScope, from: Date, to: Date): Promise<RunSlotRow[]> {
    return this.read(
      (db) =>
        this.scoped(db(TABLES[grain].run), scope)
          .andWhere('slot', '>=', from)
          .andWhere('slot', '<', to)
          .select(
            ...(grain === 'day' ? ['zone'] : []),
            'slot',
            'created',
            'completed',
            'failed',
            'cancelled',
            'duration_count',
            'duration_max',
            'duration_bins',
          ) as Promise<RunSlotRow[]>,
    );
  }

  async stepSlots(grain: Grain, scope: RollupScope, from: Date, to: Date): Promise<StepSlotRow[]> {
    return this.read(
      (db) =>
        this.scoped(db(TABLES[grain].step), scope)
          .andWhere('slot', '>=', from)
          .andWhere('slot', '<', to)
          .select(
            ...(grain === 'day' ? ['zone'] : []),
            'template_id',
            'step',
            'done',
            'late',
            'rejected',
            'skipped',
            'reopened',
            'duration_count',
            'duration_max',
            'duration_bins',
          ) as Promise<StepSlotRow[]>,
    );
  }

  async openSteps(scope: RollupScope): Promise<OpenStepRow[]> {
    return this.read(
      (db) =>
        this.scoped(db('insight_open_steps'), scope)
          .groupBy('template_id', 'step')
          .select('template_id', 'step')
          .sum({ runs: 'runs', overdue: 'overdue' })
          .havingRaw('SUM(runs) <> 0') as unknown as Promise<OpenStepRow[]>,
    );
  }

  /** Read on the primary: the cursor is the fold's, and its lag is what the answer reports. */
  async progress(): Promise<FoldProgress> {
    const cursorRow = (await this.db('insight_cursor').where('id', 1).first('event_id')) as
      { event_id: number | string } | undefined;
    const cursor = Number(cursorRow?.event_id ?? 0);
    const next = (await this.db('run_events')
      .where('id', '>', cursor)
      .orderBy('id', 'asc')
      .first('at')) as { at: Date } | undefined;
    return { cursor, firstUnfoldedAt: next?.at };
  }

  private scoped<Q extends ReturnType<Db>>(query: Q, scope: RollupScope): Q {
    query.where('organization_id', scope.organizationId).andWhere('slice', scope.slice);
    if (scope.templateId !== undefined) query.andWhere('template_id', scope.templateId);
    if (scope.templateVersion !== undefined) {
      query.andWhere('template_version', scope.templateVersion);
    }
    return query;
  }
}
