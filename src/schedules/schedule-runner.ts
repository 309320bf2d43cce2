// Firing schedules, in the workers: a sweep locks the schedules whose wake time came (SKIP LOCKED:
// several workers sweep side by side, each taking others), decides what each owes
// (schedule-firing.ts), and writes the runs it fires with their fire records and each schedule's
// next time, in one transaction (schedule-store.ts). After the commit the new runs are handed to
// the appliers and the schedules' next wake times get their timers. A time fires once: the row
// lock, the version guard and the unique (schedule, time) of its record all say so.
import { scheduleActor } from '../audit/actor.js';
import type { TxQuery } from '../db.js';
import { DomainError } from '../errors.js';
import { newId } from '../lib/ids.js';
import type { Logger } from '../logger.js';
import { countChange, runsCreated } from '../metrics/metrics.js';
import { checkAgainstTemplate } from '../runs/run-service.js';
import type { RunRecord } from '../runs/run-record.js';
import { newRun } from '../runs/run-state.js';
import { needsTimeZone } from '../templates/definition/template-definition.js';
import type { Template } from '../templates/template.js';
import type { TemplateStore } from '../templates/template-store.js';
import { decideFires, type Fire, type OverlapPolicy } from './schedule-firing.js';
import {
  recordsBetween,
  type NewFire,
  type ScheduleRow,
  type ScheduleStore,
  type ScheduleWrite,
} from './schedule-store.js';
import { runRequestOf, specOf } from './schedule-views.js';

/** Schedules a sweep takes at once (one transaction). */
export const SWEEP_BATCH = 200;

/** The template version a schedule's runs use now, or why none can be made. */
export type TemplateFor = (row: ScheduleRow) => Promise<Template | undefined>;

/** Reads the template a schedule names (its pinned version, or the latest), not archived. */
export function templateResolver(templates: TemplateStore): TemplateFor {
  return async (row) => {
    const found = await templates.find(
      row.organization_id,
      row.template_id,
      row.template_version ?? undefined,
    );
    if (!found || found === 'no_version' || found.head.archived) return undefined;
    return found.version;
  };
}

/** The runs a schedule fires, made as a create would make them (the schedule as their actor). */
export async function makeRuns(
  row: ScheduleRow,
  fires: readonly Fire[],
  template: Template | undefined,
  timeZoneOf: (organizationId: string) => Promise<string>,
  now: Date,
): Promise<NewFire[]> {
  const request = runRequestOf(row);
  let usable = template;
  if (usable) {
    try {
      // The template may have changed since the schedule was made: its values must still fit.
      checkAgainstTemplate(usable, request.input_fields, request.user_assignments);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      usable = undefined;
    }
  }
  const timeZone =
    usable && needsTimeZone(usable) ? await timeZoneOf(row.organization_id) : undefined;
  return fires.map((fire) => {
    if (!usable) {
      return {
        kind: fire.kind,
        outcome: 'skipped',
        scheduledFor: fire.scheduledFor,
        reason: 'template_unavailable',
        missed: 1,
      };
    }
    const run = newRun(
      newId(),
      row.organization_id,
      usable,
      request.input_fields,
      request.user_assignments,
      now,
      scheduleActor(row.id),
      request.labels,
      timeZone,
      { id: row.id, scheduledFor: fire.scheduledFor },
    );
    return { kind: fire.kind, outcome: 'fired', scheduledFor: fire.scheduledFor, run };
  });
}

/** The ids of those runs (of the ones given) still pending or active, in the transaction. */
export async function openRuns(query: TxQuery, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = (await query(
    `SELECT id FROM workflow_runs WHERE id IN (${ids.map(() => '?').join(', ')}) ` +
      "AND status IN ('pending', 'active')",
    [...ids],
  )) as unknown as Array<{ id: string }>;
  return new Set(rows.map((row) => row.id));
}

/** The runs a schedule's records create, in order. */
export function runsOf(fires: readonly NewFire[]): RunRecord[] {
  return fires.flatMap((f) => (f.outcome === 'fired' ? [f.run] : []));
}

/** The row after a firing: its next time, the time it holds, its latest run, one version on. */
export function afterFiring(
  row: ScheduleRow,
  fires: readonly NewFire[],
  next: { nextFireAt: Date | null; bufferedFor: Date | null; wakeAt: Date | null },
  now: Date,
): ScheduleWrite['after'] {
  const last = runsOf(fires).at(-1);
  return {
    ...row,
    next_fire_at: next.nextFireAt,
    buffered_for: next.bufferedFor,
    wake_at: row.state === 'active' ? next.wakeAt : null,
    last_run_id: last ? last.id : row.last_run_id,
    version: row.version + 1,
    updated_at: now,
  };
}

export interface SweepResult {
  schedules: number;
  runs: RunRecord[];
  /** The schedules' next wake times, for their timers. */
  wakes: Date[];
}

export class ScheduleRunner {
  constructor(
    private readonly deps: {
      store: ScheduleStore;
      templateFor: TemplateFor;
      timeZoneOf: (organizationId: string) => Promise<string>;
      /** After each committed sweep: hand the runs to the appliers, set the timers. */
      afterSweep: (result: SweepResult) => Promise<void>;
      log: Logger;
      batch?: number;
    },
  ) {}

  /** Sweeps until no schedule owes anything by `now`; returns the runs fired. */
  async sweepAll(now = new Date()): Promise<number> {
    let fired = 0;
    for (;;) {
      const result = await this.sweep(now);
      fired += result.runs.length;
      if (result.schedules < (this.deps.batch ?? SWEEP_BATCH)) return fired;
    }
  }

  /** One sweep: at most a batch of schedules, one transaction. */
  async sweep(now = new Date()): Promise<SweepResult> {
    const result = await this.deps.store.sweep(now, this.deps.batch ?? SWEEP_BATCH, (rows, query) =>
      this.decide(rows, query, now),
    );
    if (result.runs.length > 0) {
      runsCreated.inc(result.runs.length);
      for (const run of result.runs) countChange('create', run.events);
    }
    await this.deps.afterSweep(result);
    return result;
  }

  private async decide(
    rows: ScheduleRow[],
    query: TxQuery,
    now: Date,
  ): Promise<{ writes: ScheduleWrite[]; result: SweepResult }> {
    if (rows.length === 0) return { writes: [], result: { schedules: 0, runs: [], wakes: [] } };
    const open = await openRuns(
      query,
      rows.flatMap((row) => (row.last_run_id ? [row.last_run_id] : [])),
    );
    const firstNext = Math.min(
      ...rows.map((row) => (row.next_fire_at ?? row.buffered_for ?? now).getTime()),
    );
    const recorded = new Map<string, Set<number>>();
    for (const record of await recordsBetween(
      query,
      rows.map((row) => row.id),
      new Date(firstNext),
      now,
    )) {
      const times = recorded.get(record.schedule_id) ?? new Set<number>();
      times.add(record.scheduled_for.getTime());
      recorded.set(record.schedule_id, times);
    }
    const templates = new Map<string, Promise<Template | undefined>>();
    const writes: ScheduleWrite[] = [];
    const wakes: Date[] = [];
    for (const row of rows) {
      const decision = decideFires(
        {
          spec: specOf(row),
          overlap: row.overlap as OverlapPolicy,
          catchupWindowMs: Number(row.catchup_window_seconds) * 1000,
          nextFireAt: row.next_fire_at,
          bufferedFor: row.buffered_for,
          lastRunOpen: row.last_run_id !== null && open.has(row.last_run_id),
        },
        now,
        recorded.get(row.id),
      );
      const key = `${row.template_id}@${row.template_version ?? 'latest'}`;
      let template = templates.get(key);
      if (!template && decision.fires.length > 0) {
        template = this.deps.templateFor(row);
        templates.set(key, template);
      }
      const fires = [
        ...(await makeRuns(row, decision.fires, await template, this.deps.timeZoneOf, now)),
        ...decision.skips.map((skip): NewFire => ({
          kind: 'cadence',
          outcome: 'skipped',
          ...skip,
        })),
      ];
      // A time newly held is recorded as held; the held time that fires replaces that record.
      if (decision.bufferedFor && decision.bufferedFor.getTime() !== row.buffered_for?.getTime()) {
        fires.push({ kind: 'cadence', outcome: 'buffered', scheduledFor: decision.bufferedFor });
      }
      const replacing = new Set(
        decision.fires.filter((f) => f.held).map((f) => f.scheduledFor.getTime()),
      );
      const after = afterFiring(row, fires, decision, now);
      writes.push({ before: row, after, fires, replacing });
      if (after.wake_at) wakes.push(after.wake_at);
    }
    const runs = writes.flatMap((w) => runsOf(w.fires));
    return { writes, result: { schedules: rows.length, runs, wakes } };
  }
}
