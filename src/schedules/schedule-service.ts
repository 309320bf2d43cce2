// Schedules, the API's side: a request is checked (the template and the runs' values as a
// create checks them, the cadence, the time zone, the bounds), stored with its audit entry and
// its Idempotency-Key in one transaction, and the schedule's next wake time gets its timer.
// Trigger and backfill fire runs at once, under the schedule's row lock, as a sweep would
// (schedule-runner.ts): the same runs, records and overlap rule.
import type { Principal } from '../auth/principal.js';
import { DomainError, pointer } from '../errors.js';
import { answered, type IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import { beginWrite, type WriteGate } from '../lib/deadline.js';
import { newId } from '../lib/ids.js';
import { countChange, runsCreated } from '../metrics/metrics.js';
import type { RunNotifier } from '../runs/run-notifier.js';
import type { RunRecord } from '../runs/run-record.js';
import { checkAgainstTemplate, templateRefusal } from '../runs/run-service.js';
import { parseTime, type FilterSource } from '../runs/run-filter.js';
import type { TemplateStore } from '../templates/template-store.js';
import { cronProblem, isTimeZone, nextTime, timesBetween } from './cadence.js';
import type { Fire, OverlapPolicy } from './schedule-firing.js';
import { afterFiring, makeRuns, openRuns, runsOf, type TemplateFor } from './schedule-runner.js';
import {
  BACKFILL_LIMIT,
  type BackfillResultView,
  type BackfillScheduleBody,
  type CreateScheduleBody,
  type ScheduleFireView,
  type ScheduleNoteBody,
  type TriggerScheduleBody,
  type UpdateScheduleBody,
  type WorkflowScheduleView,
} from './schedule-schemas.js';
import {
  recordsBetween,
  type NewFire,
  type RunRequest,
  type ScheduleRow,
  type ScheduleStore,
  type ScheduleValues,
} from './schedule-store.js';
import { specOf, toFireView, toScheduleView } from './schedule-views.js';

const DEFAULT_CATCHUP_SECONDS = 3600;

const notFound = (id: string) =>
  new DomainError('schedule_not_found', `workflow schedule '${id}' not found`);

/** The fields a cadence is made of, as a create or an update gives them. */
interface CadenceFields {
  cron?: string | null;
  interval_seconds?: number | null;
  time_zone: string;
  start_at: Date | null;
  end_at: Date | null;
}

/** Refuses a cadence that cannot hold, naming the field. */
function checkCadence(c: CadenceFields): void {
  const hasCron = c.cron !== undefined && c.cron !== null;
  const hasInterval = c.interval_seconds !== undefined && c.interval_seconds !== null;
  if (hasCron === hasInterval) {
    throw new DomainError(
      'invalid_schedule',
      'a schedule takes one cadence: cron or interval_seconds',
      pointer(hasCron ? 'interval_seconds' : 'cron'),
    );
  }
  if (hasCron) {
    const problem = cronProblem(c.cron!);
    if (problem) throw new DomainError('invalid_cron', `cron: ${problem}`, pointer('cron'));
  }
  if (!isTimeZone(c.time_zone)) {
    throw new DomainError(
      'invalid_time_zone',
      `time_zone '${c.time_zone}' is not an IANA time zone this service knows`,
      pointer('time_zone'),
    );
  }
  if (c.start_at && c.end_at && c.end_at.getTime() <= c.start_at.getTime()) {
    throw new DomainError('invalid_schedule', 'end_at must come after start_at', pointer('end_at'));
  }
}

/** A date-time of a body (run-filter's parseTime: one that is no date is a 400 naming it). */
const BODY_TIME: FilterSource = { code: 'invalid_body', at: [] };
function dateOf(value: string | null | undefined, name: string): Date | null | undefined {
  return value === null ? null : parseTime(value, name, BODY_TIME);
}

/** The row's next time and wake time from `now` on (none while paused). */
function restart(
  row: Pick<
    ScheduleRow,
    'cron' | 'interval_seconds' | 'time_zone' | 'start_at' | 'end_at' | 'created_at' | 'state'
  >,
  now: Date,
): Pick<ScheduleRow, 'next_fire_at' | 'wake_at' | 'buffered_for'> {
  const next = nextTime(specOf(row), now) ?? null;
  return { next_fire_at: next, wake_at: row.state === 'active' ? next : null, buffered_for: null };
}

export class ScheduleService {
  constructor(
    private readonly store: ScheduleStore,
    private readonly templates: TemplateStore,
    private readonly templateFor: TemplateFor,
    private readonly timeZoneOf: (organizationId: string) => Promise<string>,
    private readonly notifier: RunNotifier,
    /** Timers at schedules' wake times (best effort; the reconciler sweeps MySQL too). */
    private readonly timers: { at(times: Iterable<Date>): Promise<void> },
  ) {}

  async create(
    principal: Principal,
    body: CreateScheduleBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<WorkflowScheduleView> {
    const org = principal.organizationId;
    const found = await this.templates.forNewRun(
      org,
      body.workflow_template_id,
      body.workflow_template_version,
    );
    if (!found.ok) throw templateRefusal(found.reason, body);
    const request: RunRequest = {
      input_fields: body.input_fields ?? {},
      user_assignments: body.user_assignments ?? {},
      ...(body.labels && Object.keys(body.labels).length > 0 ? { labels: body.labels } : {}),
    };
    checkAgainstTemplate(found.template, request.input_fields, request.user_assignments);
    const now = new Date();
    const cadence: CadenceFields = {
      cron: body.cron,
      interval_seconds: body.interval_seconds,
      time_zone: body.time_zone ?? (await this.timeZoneOf(org)),
      start_at: dateOf(body.start_at, 'start_at') ?? null,
      end_at: dateOf(body.end_at, 'end_at') ?? null,
    };
    checkCadence(cadence);
    const base = {
      id: newId(),
      organization_id: org,
      template_id: body.workflow_template_id,
      template_version: body.workflow_template_version ?? null,
      run_request: JSON.stringify(request),
      cron: cadence.cron ?? null,
      interval_seconds: cadence.interval_seconds ?? null,
      time_zone: cadence.time_zone,
      start_at: cadence.start_at,
      end_at: cadence.end_at,
      overlap: body.overlap ?? 'skip',
      catchup_window_seconds: body.catchup_window_seconds ?? DEFAULT_CATCHUP_SECONDS,
      state: body.paused ? ('paused' as const) : ('active' as const),
      note: body.note ?? null,
      last_run_id: null,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    const values: ScheduleValues = { ...base, ...restart(base, now) };
    const row: ScheduleRow = { ...values, seq: 0 };
    const view = toScheduleView(row, undefined, now);
    beginWrite(gate);
    await this.store.insert(
      values,
      {
        organizationId: org,
        type: 'schedule.created',
        actor: principal.actor,
        targetId: values.id,
        data: {
          templateId: values.template_id,
          ...(values.cron !== null ? { cron: values.cron } : {}),
          ...(values.interval_seconds !== null ? { intervalSeconds: values.interval_seconds } : {}),
          timeZone: values.time_zone,
          state: values.state,
        },
        at: now,
      },
      answered(claim, 200, () => JSON.stringify(view)),
    );
    if (values.wake_at) await this.timers.at([values.wake_at]);
    return view;
  }

  async update(
    principal: Principal,
    body: UpdateScheduleBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<WorkflowScheduleView> {
    const org = principal.organizationId;
    const changed = Object.keys(body).filter((k) => k !== 'id');
    beginWrite(gate);
    const view = await this.store.change(org, body.id, async (row) => {
      if (!row) throw notFound(body.id);
      const now = new Date();
      const version =
        body.workflow_template_version === undefined
          ? row.template_version
          : body.workflow_template_version;
      const previous = JSON.parse(row.run_request) as RunRequest;
      const request: RunRequest = {
        input_fields: body.input_fields ?? previous.input_fields,
        user_assignments: body.user_assignments ?? previous.user_assignments,
        ...((body.labels ?? previous.labels) ? { labels: body.labels ?? previous.labels } : {}),
      };
      if (
        body.workflow_template_version !== undefined ||
        body.input_fields ||
        body.user_assignments
      ) {
        const found = await this.templates.forNewRun(org, row.template_id, version ?? undefined);
        if (!found.ok) {
          throw new DomainError(
            found.reason === 'unknown_template_version' ? 'unknown_template_version' : found.reason,
            `workflow template '${row.template_id}' cannot take runs: ${found.reason}`,
            pointer('workflow_template_version'),
          );
        }
        checkAgainstTemplate(found.template, request.input_fields, request.user_assignments);
      }
      const cadenceGiven = body.cron !== undefined || body.interval_seconds !== undefined;
      const cadence: CadenceFields = {
        cron: cadenceGiven ? (body.cron ?? null) : row.cron,
        interval_seconds: cadenceGiven ? (body.interval_seconds ?? null) : row.interval_seconds,
        time_zone: body.time_zone ?? row.time_zone,
        start_at:
          body.start_at === undefined ? row.start_at : (dateOf(body.start_at, 'start_at') ?? null),
        end_at: body.end_at === undefined ? row.end_at : (dateOf(body.end_at, 'end_at') ?? null),
      };
      checkCadence(cadence);
      const merged: ScheduleValues = {
        ...row,
        template_version: version,
        run_request: JSON.stringify(request),
        cron: cadence.cron ?? null,
        interval_seconds: cadence.interval_seconds ?? null,
        time_zone: cadence.time_zone,
        start_at: cadence.start_at,
        end_at: cadence.end_at,
        overlap: body.overlap ?? row.overlap,
        catchup_window_seconds: body.catchup_window_seconds ?? row.catchup_window_seconds,
        version: row.version + 1,
        updated_at: now,
      };
      // A new cadence starts from now; the others keep the time the schedule is at.
      const timing =
        cadenceGiven ||
        body.time_zone !== undefined ||
        body.start_at !== undefined ||
        body.end_at !== undefined
          ? restart(merged, now)
          : {};
      const after: ScheduleValues = { ...merged, ...timing };
      const result = toScheduleView({ ...after, seq: row.seq }, undefined, now);
      return {
        write: { before: row, after, fires: [] },
        audit: {
          organizationId: org,
          type: 'schedule.updated',
          actor: principal.actor,
          targetId: row.id,
          data: { changed },
          at: now,
        },
        key: answered(claim, 200, () => JSON.stringify(result)),
        result,
      };
    });
    await this.afterChange(view);
    return this.withLastFire(view);
  }

  /** Pauses (times that come meanwhile are skipped) or resumes the schedule, with a note. */
  async setPaused(
    principal: Principal,
    body: ScheduleNoteBody,
    paused: boolean,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<WorkflowScheduleView> {
    const org = principal.organizationId;
    beginWrite(gate);
    const view = await this.store.change(org, body.id, async (row) => {
      if (!row) throw notFound(body.id);
      const now = new Date();
      const state = paused ? ('paused' as const) : ('active' as const);
      let after: ScheduleValues = {
        ...row,
        state,
        note: body.note ?? null,
        version: row.version + 1,
        updated_at: now,
      };
      const fires: NewFire[] = [];
      let skipped = 0;
      if (paused) {
        after = { ...after, wake_at: null };
      } else if (row.state === 'paused') {
        // The times it passed while paused are skipped, in one record; it goes on from now.
        const spec = specOf(row);
        if (row.next_fire_at && row.next_fire_at.getTime() <= now.getTime()) {
          const missed = timesBetween(spec, row.next_fire_at, now, 100_000);
          skipped = missed.length;
          if (skipped > 0) {
            fires.push({
              kind: 'cadence',
              outcome: 'skipped',
              scheduledFor: missed[0]!,
              reason: 'paused',
              missed: skipped,
              ...(skipped > 1 ? { until: missed.at(-1)! } : {}),
            });
          }
        }
        after = { ...after, ...restart(after, now), buffered_for: row.buffered_for };
        if (row.buffered_for) after.wake_at = now;
      }
      const result = toScheduleView({ ...after, seq: row.seq }, undefined, now);
      return {
        write: { before: row, after, fires },
        audit: {
          organizationId: org,
          type: paused ? 'schedule.paused' : 'schedule.resumed',
          actor: principal.actor,
          targetId: row.id,
          data: {
            ...(body.note !== undefined ? { note: body.note } : {}),
            ...(!paused && skipped > 0 ? { skippedWhilePaused: skipped } : {}),
          },
          at: now,
        },
        key: answered(claim, 200, () => JSON.stringify(result)),
        result,
      };
    });
    await this.afterChange(view);
    return this.withLastFire(view);
  }

  async delete(
    principal: Principal,
    id: string,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<{ id: string; deleted: true }> {
    const answer = { id, deleted: true as const };
    beginWrite(gate);
    const deleted = await this.store.delete(
      principal.organizationId,
      id,
      {
        organizationId: principal.organizationId,
        type: 'schedule.deleted',
        actor: principal.actor,
        targetId: id,
        data: {},
        at: new Date(),
      },
      answered(claim, 200, () => JSON.stringify(answer)),
    );
    if (!deleted) throw notFound(id);
    return answer;
  }

  /** One run now, outside the cadence, under the overlap rule (the schedule's, unless given). */
  async trigger(
    principal: Principal,
    body: TriggerScheduleBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<ScheduleFireView> {
    beginWrite(gate);
    const { view, runs } = await this.store.change(
      principal.organizationId,
      body.id,
      async (row, query) => {
        if (!row) throw notFound(body.id);
        const now = new Date();
        // The time it is for: now, or the next free millisecond (a record's time is unique).
        const taken = await recordsBetween(query, [row.id], now, new Date(now.getTime() + 1000));
        let at = now.getTime();
        const used = new Set(taken.map((r) => r.scheduled_for.getTime()));
        while (used.has(at)) at++;
        const scheduledFor = new Date(at);
        const overlap = (body.overlap ?? row.overlap) as OverlapPolicy;
        const open = row.last_run_id ? (await openRuns(query, [row.last_run_id])).size > 0 : false;
        const fires = await this.firesFor(
          row,
          [{ scheduledFor, kind: 'trigger' }],
          overlap,
          open,
          now,
        );
        const record = fires[0]!;
        const after = afterFiring(
          row,
          fires,
          {
            nextFireAt: row.next_fire_at,
            bufferedFor: record.outcome === 'buffered' ? scheduledFor : row.buffered_for,
            wakeAt: record.outcome === 'buffered' ? now : row.wake_at,
          },
          now,
        );
        const view: ScheduleFireView = {
          scheduledFor: scheduledFor.toISOString(),
          kind: 'trigger',
          outcome: record.outcome,
          ...(record.outcome === 'skipped' ? { reason: record.reason } : {}),
          ...(record.outcome === 'fired' ? { runId: record.run.id } : {}),
          at: now.toISOString(),
        };
        return {
          write: { before: row, after, fires },
          audit: {
            organizationId: row.organization_id,
            type: 'schedule.triggered',
            actor: principal.actor,
            targetId: row.id,
            data: {
              scheduledFor: view.scheduledFor,
              outcome: view.outcome,
              ...(view.runId ? { runId: view.runId } : {}),
            },
            at: now,
          },
          key: answered(claim, 200, () => JSON.stringify(view)),
          result: { view, runs: runsOf(fires) },
        };
      },
    );
    this.afterFire(runs);
    return view;
  }

  /**
   * One run for each scheduled time in [from, to] that the cadence has passed already, in order,
   * under the overlap rule; times with a record of their own are left as they are (a single
   * skip is fired now, in its place).
   */
  async backfill(
    principal: Principal,
    body: BackfillScheduleBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<BackfillResultView> {
    const from = dateOf(body.from, 'from')!;
    const to = dateOf(body.to, 'to')!;
    if (to.getTime() < from.getTime()) {
      throw new DomainError('invalid_schedule', 'to must not come before from', pointer('to'));
    }
    beginWrite(gate);
    const { result, runs } = await this.store.change(
      principal.organizationId,
      body.id,
      async (row, query) => {
        if (!row) throw notFound(body.id);
        const now = new Date();
        // The times the cadence has not reached yet are its own to fire.
        const end = Math.min(
          to.getTime(),
          now.getTime(),
          (row.next_fire_at?.getTime() ?? Infinity) - 1,
        );
        const times =
          end < from.getTime()
            ? []
            : timesBetween(specOf(row), from, new Date(end), BACKFILL_LIMIT);
        if (times.length > BACKFILL_LIMIT) {
          throw new DomainError(
            'backfill_too_large',
            `the range holds more than ${BACKFILL_LIMIT} scheduled times: backfill it in parts`,
            pointer('to'),
          );
        }
        const records = times.length
          ? await recordsBetween(query, [row.id], times[0]!, times.at(-1)!)
          : [];
        const byTime = new Map(records.map((r) => [r.scheduled_for.getTime(), r]));
        const replacing = new Set<number>();
        const free: Fire[] = [];
        let already = 0;
        for (const time of times) {
          const record = byTime.get(time.getTime());
          if (record && (record.outcome !== 'skipped' || Number(record.missed) > 1)) {
            already++;
            continue;
          }
          if (record) replacing.add(time.getTime());
          free.push({ scheduledFor: time, kind: 'backfill' });
        }
        const overlap = (body.overlap ?? row.overlap) as OverlapPolicy;
        const open = row.last_run_id ? (await openRuns(query, [row.last_run_id])).size > 0 : false;
        let fires = await this.firesFor(row, free, overlap, open, now);
        // A time replacing a skip is written only as a fire (a skip stays as it was).
        fires = fires.filter(
          (f) => f.outcome === 'fired' || !replacing.has(f.scheduledFor.getTime()),
        );
        const held = fires.find((f) => f.outcome === 'buffered');
        const after = afterFiring(
          row,
          fires,
          {
            nextFireAt: row.next_fire_at,
            bufferedFor: held ? held.scheduledFor : row.buffered_for,
            wakeAt: held ? now : row.wake_at,
          },
          now,
        );
        const skipped: Record<string, number> = {};
        for (const f of fires) {
          if (f.outcome === 'skipped') skipped[f.reason] = (skipped[f.reason] ?? 0) + 1;
        }
        const fired = runsOf(fires).length;
        const result: BackfillResultView = {
          times: times.length,
          fired,
          ...(held ? { buffered: 1 } : {}),
          skipped,
          alreadyRecorded: already,
        };
        return {
          write: { before: row, after, fires, replacing },
          audit: {
            organizationId: row.organization_id,
            type: 'schedule.backfilled',
            actor: principal.actor,
            targetId: row.id,
            data: { from: from.toISOString(), to: to.toISOString(), times: times.length, fired },
            at: now,
          },
          key: answered(claim, 200, () => JSON.stringify(result)),
          result: { result, runs: runsOf(fires) },
        };
      },
    );
    this.afterFire(runs);
    return result;
  }

  async get(principal: Principal, id: string): Promise<WorkflowScheduleView> {
    const row = await this.store.find(principal.organizationId, id);
    if (!row) throw notFound(id);
    const last = await this.store.lastFires([row.id]);
    return toScheduleView(row, last.get(row.id));
  }

  async list(
    principal: Principal,
    filter: { templateId?: string; state?: 'active' | 'paused' },
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<WorkflowScheduleView & { seq: number }>> {
    const rows = await this.store.list(principal.organizationId, filter, limit, beforeSeq);
    const last = await this.store.lastFires(rows.map((row) => row.id));
    return rows.map((row) => ({ ...toScheduleView(row, last.get(row.id)), seq: Number(row.seq) }));
  }

  async history(
    principal: Principal,
    id: string,
    limit: number,
    beforeId: number | null,
  ): Promise<Array<ScheduleFireView & { seq: number }>> {
    const row = await this.store.find(principal.organizationId, id);
    if (!row) throw notFound(id);
    const rows = await this.store.history(row.id, limit, beforeId);
    // A record's id is its place in the history: the page's keyset.
    return rows.map((r) => ({ ...toFireView(r), seq: Number(r.id) }));
  }

  /** The records of times that fire now (trigger, backfill), one by one under the overlap rule. */
  private async firesFor(
    row: ScheduleRow,
    times: readonly Fire[],
    overlap: OverlapPolicy,
    lastRunOpen: boolean,
    now: Date,
  ): Promise<NewFire[]> {
    let open = lastRunOpen;
    let held = row.buffered_for !== null;
    const firing: Fire[] = [];
    const out: NewFire[] = [];
    for (const time of times) {
      if (!open || overlap === 'allow_all') {
        firing.push(time);
        open = true;
      } else if (overlap === 'buffer_one' && !held) {
        out.push({ kind: time.kind, outcome: 'buffered', scheduledFor: time.scheduledFor });
        held = true;
      } else {
        out.push({
          kind: time.kind,
          outcome: 'skipped',
          scheduledFor: time.scheduledFor,
          reason: 'overlap',
          missed: 1,
        });
      }
    }
    const template = firing.length > 0 ? await this.templateFor(row) : undefined;
    const made = await makeRuns(row, firing, template, this.timeZoneOf, now);
    return [...made, ...out].sort((a, b) => a.scheduledFor.getTime() - b.scheduledFor.getTime());
  }

  /** After a commit that created runs: the appliers are told, the runs counted. */
  private afterFire(runs: readonly RunRecord[]): void {
    if (runs.length === 0) return;
    runsCreated.inc(runs.length);
    for (const run of runs) countChange('create', run.events);
    this.notifier.post(runs.map((run) => run.organizationId));
  }

  private async afterChange(view: WorkflowScheduleView): Promise<void> {
    const next = view.state === 'active' ? view.nextTimes[0] : undefined;
    if (next) await this.timers.at([new Date(next)]);
  }

  private async withLastFire(view: WorkflowScheduleView): Promise<WorkflowScheduleView> {
    const last = await this.store.lastFires([view.id]);
    const fire = last.get(view.id);
    return fire ? { ...view, lastFire: toFireView(fire) } : view;
  }
}
