// A schedule and its records as clients read them (camelCase; absent values left out), and the
// cadence a row holds.
import type { CadenceSpec } from './cadence.js';
import { nextTimes } from './cadence.js';
import type { FireRow, RunRequest, ScheduleRow } from './schedule-store.js';
import type { ScheduleFireView, WorkflowScheduleView } from './schedule-schemas.js';

/** The cadence a schedule row holds. */
export function specOf(
  row: Pick<
    ScheduleRow,
    'cron' | 'interval_seconds' | 'time_zone' | 'start_at' | 'end_at' | 'created_at'
  >,
): CadenceSpec {
  return {
    cadence:
      row.cron !== null ? { cron: row.cron } : { intervalSeconds: Number(row.interval_seconds) },
    timeZone: row.time_zone,
    anchor: row.start_at ?? row.created_at,
    startAt: row.start_at,
    endAt: row.end_at,
  };
}

export function runRequestOf(row: Pick<ScheduleRow, 'run_request'>): RunRequest {
  return JSON.parse(row.run_request) as RunRequest;
}

export function toFireView(row: FireRow): ScheduleFireView {
  return {
    scheduledFor: row.scheduled_for.toISOString(),
    kind: row.kind,
    outcome: row.outcome,
    ...(row.reason !== null ? { reason: row.reason } : {}),
    ...(Number(row.missed) > 1 ? { missed: Number(row.missed) } : {}),
    ...(row.until !== null ? { until: row.until.toISOString() } : {}),
    ...(row.run_id !== null ? { runId: row.run_id } : {}),
    at: row.at.toISOString(),
  };
}

/** A schedule as clients read it, with its next five times (from now) and its latest record. */
export function toScheduleView(
  row: ScheduleRow,
  lastFire: FireRow | undefined,
  now = new Date(),
): WorkflowScheduleView {
  const request = runRequestOf(row);
  const upcoming =
    row.state === 'active' && row.next_fire_at
      ? [
          row.next_fire_at,
          ...nextTimes(
            specOf(row),
            new Date(Math.max(row.next_fire_at.getTime(), now.getTime())),
            4,
          ),
        ]
      : [];
  return {
    id: row.id,
    templateId: row.template_id,
    ...(row.template_version !== null ? { templateVersion: Number(row.template_version) } : {}),
    inputFields: request.input_fields,
    userAssignments: request.user_assignments,
    labels: request.labels ?? {},
    ...(row.cron !== null ? { cron: row.cron } : {}),
    ...(row.interval_seconds !== null ? { intervalSeconds: Number(row.interval_seconds) } : {}),
    timeZone: row.time_zone,
    ...(row.start_at ? { startAt: row.start_at.toISOString() } : {}),
    ...(row.end_at ? { endAt: row.end_at.toISOString() } : {}),
    overlap: row.overlap,
    catchupWindowSeconds: Number(row.catchup_window_seconds),
    state: row.state,
    ...(row.note !== null ? { note: row.note } : {}),
    nextTimes: upcoming.slice(0, 5).map((at) => at.toISOString()),
    ...(lastFire ? { lastFire: toFireView(lastFire) } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
