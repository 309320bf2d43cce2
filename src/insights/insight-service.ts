// The insights answer: the query's range widened to whole buckets of the organization's clock,
// the rollups of that range (insight-reads.ts: hourly, or daily for days and weeks) summed per
// bucket and per step, and the open
// runs now, with how far the fold trails the history.
import type { Principal } from '../auth/principal.js';
import { DomainError, pointer } from '../errors.js';
import { parseTime } from '../runs/run-filter.js';
import { parseLabelFilter } from '../runs/run-labels.js';
import type { TemplateStore } from '../templates/template-store.js';
import {
  emptyBins,
  mergeBins,
  parseBins,
  quantiles,
  type DurationBins,
} from './duration-sketch.js';
import { bucketBounds, UNIT_MS, type BucketUnit } from './insight-buckets.js';
import { assigneeSlice, labelSlice, PENDING_STEP } from './insight-fold.js';
import type { Grain, InsightReads, RollupScope } from './insight-reads.js';
import {
  MAX_BUCKETS,
  type InsightDuration,
  type InsightsQuery,
  type RunInsights,
} from './insight-schemas.js';

/** The default range, in buckets: two days of hours, 30 days, 26 weeks. */
const DEFAULT_BUCKETS: Record<BucketUnit, number> = { hour: 48, day: 30, week: 26 };

/** Durations being summed: their bins, count and maximum. */
interface Durations {
  bins: DurationBins;
  count: number;
  max: number;
}

const noDurations = (): Durations => ({ bins: emptyBins(), count: 0, max: 0 });

function addRow(
  into: Durations,
  row: { duration_count: number; duration_max: number | string; duration_bins: string },
) {
  const count = Number(row.duration_count);
  if (count === 0) return;
  into.count += count;
  into.max = Math.max(into.max, Number(row.duration_max));
  mergeBins(into.bins, parseBins(row.duration_bins));
}

function summary(durations: Durations): InsightDuration {
  if (durations.count === 0) return { count: 0, p50Ms: null, p90Ms: null, maxMs: null };
  const [p50, p90] = quantiles(durations.bins, [0.5, 0.9]);
  return { count: durations.count, p50Ms: p50!, p90Ms: p90!, maxMs: durations.max };
}

export class InsightService {
  constructor(
    private readonly reads: InsightReads,
    private readonly templates: Pick<TemplateStore, 'head'>,
    /** The organization's time zone (the settings' cache). */
    private readonly timeZoneOf: (organizationId: string) => Promise<string>,
  ) {}

  async get(principal: Principal, query: InsightsQuery, now = new Date()): Promise<RunInsights> {
    const organizationId = principal.organizationId;
    const unit: BucketUnit = query.bucket ?? 'day';
    if (query.template_version !== undefined && query.template_id === undefined) {
      throw new DomainError(
        'invalid_query',
        'template_version is given with template_id only',
        pointer('template_version'),
      );
    }
    if (query.label !== undefined && query.assignee !== undefined) {
      throw new DomainError(
        'invalid_query',
        'label and assignee cannot be combined: give one of them',
        pointer('assignee'),
      );
    }
    const to = parseTime(query.to, 'to') ?? now;
    const from =
      parseTime(query.from, 'from') ??
      new Date(to.getTime() - DEFAULT_BUCKETS[unit] * UNIT_MS[unit]);
    if (from.getTime() >= to.getTime()) {
      throw new DomainError('invalid_query', 'from must be before to', pointer('from'));
    }
    if (query.template_id !== undefined) {
      const head = await this.templates.head(organizationId, query.template_id);
      if (!head) {
        // The same answer for another organization's template as for none.
        throw new DomainError(
          'unknown_template',
          `workflow template '${query.template_id}' not found`,
          pointer('template_id'),
        );
      }
      if (query.template_version !== undefined && query.template_version > head.latestVersion) {
        throw new DomainError(
          'unknown_template_version',
          `workflow template '${query.template_id}' has no version ${query.template_version}`,
          pointer('template_version'),
        );
      }
    }

    const timeZone = await this.timeZoneOf(organizationId);
    const bounds = bucketBounds(from.getTime(), to.getTime(), unit, timeZone, MAX_BUCKETS);
    if (!bounds) {
      throw new DomainError(
        'invalid_query',
        `the range holds more than ${MAX_BUCKETS} buckets of ${unit === 'hour' ? 'an' : 'a'} ${unit}: shorten it or take a longer bucket`,
        pointer('bucket'),
      );
    }
    const start = new Date(bounds[0]!);
    const end = new Date(bounds[bounds.length - 1]!);
    const scope = (slice: string): RollupScope => ({
      organizationId,
      ...(query.template_id !== undefined ? { templateId: query.template_id } : {}),
      ...(query.template_version !== undefined ? { templateVersion: query.template_version } : {}),
      slice,
    });
    const label = query.label !== undefined ? parseLabelFilter([query.label])![0]! : undefined;
    const runSlice = label ? labelSlice(label.key, label.value) : '';
    const stepSlice = query.assignee !== undefined ? assigneeSlice(query.assignee) : runSlice;

    // How far the fold has come, read before the rollups: they then hold at least everything
    // up to it (read in parallel with them, a fold committing in between made an answer whose
    // rollups were older than the asOf it gave).
    const progress = await this.reads.progress();
    const slots = (grain: Grain) =>
      Promise.all([
        this.reads.runSlots(grain, scope(runSlice), start, end),
        this.reads.stepSlots(grain, scope(stepSlice), start, end),
      ]);
    const opening = this.reads.openSteps(scope(stepSlice));
    // By day or week, the daily slots: whole local days, as the buckets are. Days of another
    // zone (the organization's was changed since they were folded) do not divide as this zone's
    // do: then the hourly slots, summed in this zone.
    let [runRows, stepRows] = await slots(unit === 'hour' ? 'hour' : 'day');
    if (unit !== 'hour' && [...runRows, ...stepRows].some((row) => row.zone !== timeZone)) {
      [runRows, stepRows] = await slots('hour');
    }
    const openRows = await opening;

    // Each slot into its bucket: the bucket whose start is the last at or before it.
    const buckets = bounds.slice(0, -1).map((bucketStart, i) => ({
      start: bucketStart,
      end: bounds[i + 1]!,
      created: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      durations: noDurations(),
    }));
    const total = noDurations();
    for (const row of runRows) {
      const slot = row.slot.getTime();
      let lo = 0;
      let hi = buckets.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (buckets[mid]!.start <= slot) lo = mid;
        else hi = mid - 1;
      }
      const bucket = buckets[lo]!;
      bucket.created += Number(row.created);
      bucket.completed += Number(row.completed);
      bucket.failed += Number(row.failed);
      bucket.cancelled += Number(row.cancelled);
      addRow(bucket.durations, row);
      addRow(total, row);
    }

    const steps = new Map<
      string,
      {
        templateId: string;
        step: string;
        completed: number;
        late: number;
        rejected: number;
        skipped: number;
        reopened: number;
        durations: Durations;
      }
    >();
    for (const row of stepRows) {
      const key = `${row.template_id}\u0000${row.step}`;
      let step = steps.get(key);
      if (!step) {
        step = {
          templateId: row.template_id,
          step: row.step,
          completed: 0,
          late: 0,
          rejected: 0,
          skipped: 0,
          reopened: 0,
          durations: noDurations(),
        };
        steps.set(key, step);
      }
      step.completed += Number(row.done);
      step.late += Number(row.late);
      step.rejected += Number(row.rejected);
      step.skipped += Number(row.skipped);
      step.reopened += Number(row.reopened);
      addRow(step.durations, row);
    }

    let pending = 0;
    let overdue = 0;
    const openSteps: RunInsights['open']['steps'] = [];
    for (const row of openRows) {
      const runs = Math.max(0, Number(row.runs));
      const late = Math.max(0, Number(row.overdue));
      if (row.step === PENDING_STEP) {
        pending += runs;
        continue;
      }
      overdue += late;
      openSteps.push({ templateId: row.template_id, step: row.step, runs, overdue: late });
    }
    const active = openSteps.reduce((sum, step) => sum + step.runs, 0);

    const asOf = progress.firstUnfoldedAt ?? now;
    return {
      templateId: query.template_id ?? null,
      templateVersion: query.template_version ?? null,
      timeZone,
      bucket: unit,
      from: start.toISOString(),
      to: end.toISOString(),
      asOf: asOf.toISOString(),
      lagMs: Math.max(0, now.getTime() - asOf.getTime()),
      buckets: buckets.map((b) => ({
        start: new Date(b.start).toISOString(),
        end: new Date(b.end).toISOString(),
        created: b.created,
        completed: b.completed,
        failed: b.failed,
        cancelled: b.cancelled,
        timeToComplete: summary(b.durations),
      })),
      timeToComplete: summary(total),
      steps: [...steps.values()].map(({ durations, ...step }) => ({
        ...step,
        activeTime: summary(durations),
      })),
      open: { runs: pending + active, pending, overdue, steps: openSteps },
    };
  }
}
