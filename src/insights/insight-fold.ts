// The fold: what a batch of run events, in id order, does to the insights' rollups. Pure: the
// caller reads the runs' fold states and the organizations' zones, and writes back what this
// returns (insight-store.ts), in the transaction that moves the cursor.
//
// What each figure counts (docs/insights.md):
// - a run's created / completed / failed / cancelled: in the hour of that event;
// - time to complete: run.completed's time minus run.created's;
// - a step is "done" when completed or approved, "late" when done after its due date (as it was
//   when done), "rejected", "skipped" (a rule passed over it), "reopened" (a rejection sent the
//   run back over it); its active time runs from when it became current to when it was done or
//   rejected; all in the hour it ended;
// - open: runs pending (step '') or active at a step now, and how many of those are overdue.
// Slices: every figure is kept for all runs (''), for each of the run's labels ('l:key:value'),
// and, for steps, for the assignee holding the step when it ended or now ('a:user').
// Slots: every count and duration is kept per hour of the organization's clock, and again per
// day of it (the hours summed, keyed with the zone whose days they are): an answer by day or
// week reads a row a day, not 24.
import { assertNever, type RunEventData, type RunEventType } from '../runs/run-events.js';
import { addDuration, emptyBins, mergeBins, type DurationBins } from './duration-sketch.js';
import { dayStart, hourStart } from './insight-buckets.js';

/** An event as the fold reads it. */
export interface FoldEvent {
  id: number;
  runId: string;
  organizationId: string;
  type: RunEventType;
  at: number;
  data: Record<string, unknown>;
}

/** What the fold keeps of a run that may still change. */
export interface FoldRun {
  organizationId: string;
  templateId: string;
  version: number;
  createdAt: number;
  /** The run's label slices ('l:key:value'). */
  labels: string[];
  status: 'pending' | 'active' | 'failed';
  step: string | null;
  stepStartedAt: number | null;
  stepDueAt: number | null;
  assignee: string | null;
  overdue: boolean;
}

/** What every slot delta holds beside its counts: its durations. */
interface TimedDelta {
  durations: DurationBins;
  durationCount: number;
  durationMax: number;
}

export interface RunSlotDelta {
  created: number;
  completed: number;
  failed: number;
  cancelled: number;
  durations: DurationBins;
  durationCount: number;
  durationMax: number;
}

export interface StepSlotDelta {
  done: number;
  late: number;
  rejected: number;
  skipped: number;
  reopened: number;
  durations: DurationBins;
  durationCount: number;
  durationMax: number;
}

export interface OpenDelta {
  runs: number;
  overdue: number;
}

/**
 * A rollup row's key; `step` only for step slots and open steps, `slot` only for slots, `zone`
 * only for daily slots (the zone whose day the slot is).
 */
export interface RollupKey {
  organizationId: string;
  templateId: string;
  version: number;
  slice: string;
  step?: string;
  slot?: number;
  zone?: string;
}

export type Rollups<D> = Map<string, { key: RollupKey; delta: D }>;

export interface FoldResult {
  /** Hourly slots. */
  runSlots: Rollups<RunSlotDelta>;
  stepSlots: Rollups<StepSlotDelta>;
  /** The same summed per day of the organization's clock. */
  runDays: Rollups<RunSlotDelta>;
  stepDays: Rollups<StepSlotDelta>;
  open: Rollups<OpenDelta>;
  /** Runs whose state changed (written back) and runs that are gone (deleted). */
  changed: Map<string, FoldRun>;
  gone: Set<string>;
}

/** What run.created needs that its event may not carry (events from before it did). */
export interface CreatedRunFacts {
  version?: number;
  labels: string[];
}

export const PENDING_STEP = '';

/** A rollup row's slot: the start (UTC ms) of the hour of the zone's clock that holds the instant. */
export const slotOf = hourStart;

/** The slice of the runs with a label. */
export const labelSlice = (key: string, value: string) => `l:${key}:${value}`;
/** The slice of the steps a user held. */
export const assigneeSlice = (user: string) => `a:${user}`;

/** A rollup row's key as one string: the fold's maps are keyed by it. */
export const rollupKeyText = (k: RollupKey) =>
  `${k.organizationId}\u0000${k.templateId}\u0000${k.version}\u0000${k.slice}\u0000${k.step ?? ''}\u0000${k.slot ?? ''}\u0000${k.zone ?? ''}`;

/** The entry of `map` under `key`, made (with `empty()`) if it is missing. */
function entryOf<D>(map: Rollups<D>, key: RollupKey, empty: () => D): D {
  const text = rollupKeyText(key);
  let entry = map.get(text);
  if (!entry) {
    entry = { key, delta: empty() };
    map.set(text, entry);
  }
  return entry.delta;
}

/** A due time or date as an event states it (ISO 8601), in ms; null when it states none. */
const dueOf = (value: unknown) => (typeof value === 'string' ? Date.parse(value) : null);

export function foldEvents(
  events: readonly FoldEvent[],
  runs: Map<string, FoldRun>,
  zoneOf: (organizationId: string) => string,
  created: (runId: string) => CreatedRunFacts,
): FoldResult {
  const result: FoldResult = {
    runSlots: new Map(),
    stepSlots: new Map(),
    runDays: new Map(),
    stepDays: new Map(),
    open: new Map(),
    changed: new Map(),
    gone: new Set(),
  };

  const runSlot = (run: FoldRun, at: number) => {
    const slot = slotOf(at, zoneOf(run.organizationId));
    return ['', ...run.labels].map((slice) =>
      entryOf(result.runSlots, { ...base(run), slice, slot }, () =>
        emptyCounts(['created', 'completed', 'failed', 'cancelled']),
      ),
    );
  };
  const stepSlot = (run: FoldRun, step: string, at: number, assignee: string | null) => {
    const slot = slotOf(at, zoneOf(run.organizationId));
    return slices(run, assignee).map((slice) =>
      entryOf(result.stepSlots, { ...base(run), slice, step, slot }, () =>
        emptyCounts(['done', 'late', 'rejected', 'skipped', 'reopened']),
      ),
    );
  };
  /** Moves the run in or out (sign) of the open gauges, where it stands now. */
  const gauge = (run: FoldRun, sign: 1 | -1) => {
    if (run.status === 'failed') return;
    const step = run.status === 'pending' ? PENDING_STEP : run.step;
    if (step === null) return;
    for (const slice of slices(run, run.status === 'active' ? run.assignee : null)) {
      const delta = entryOf(result.open, { ...base(run), slice, step }, () => ({
        runs: 0,
        overdue: 0,
      }));
      delta.runs += sign;
      if (run.overdue) delta.overdue += sign;
    }
  };
  /** The run is gone from the fold's state: completed, cancelled or deleted. */
  const forget = (runId: string) => {
    runs.delete(runId);
    result.changed.delete(runId);
    result.gone.add(runId);
  };
  /** The current step ends (done or rejected) at `at`. */
  const endStep = (run: FoldRun, step: string, at: number, how: 'done' | 'rejected') => {
    const late = how === 'done' && run.stepDueAt !== null && at > run.stepDueAt;
    const active = run.step === step && run.stepStartedAt !== null ? at - run.stepStartedAt : null;
    for (const delta of stepSlot(run, step, at, run.step === step ? run.assignee : null)) {
      delta[how] += 1;
      if (late) delta.late += 1;
      if (active !== null) addTo(delta, Math.max(0, active));
    }
    gauge(run, -1);
    run.step = null;
    run.overdue = false;
  };
  const enter = (
    run: FoldRun,
    step: string,
    at: number,
    dueAt: number | null,
    assignee: unknown,
  ) => {
    run.status = 'active';
    run.step = step;
    run.stepStartedAt = at;
    run.stepDueAt = dueAt;
    run.assignee = typeof assignee === 'string' ? assignee : null;
    run.overdue = false;
    gauge(run, 1);
  };
  const enterNext = (run: FoldRun, data: Record<string, unknown>, at: number) => {
    if (typeof data.nextStep === 'string') {
      enter(run, data.nextStep, at, dueOf(data.nextDueDate), data.nextAssignee);
    }
  };

  for (const event of events) {
    const data = event.data;
    if (event.type === 'run.created') {
      const typed = data as Partial<RunEventData<'run.created'>>;
      // Every run.created the service writes names its template; one that does not is not a
      // run of any template the figures could show.
      if (typeof typed.templateId !== 'string') continue;
      const facts = created(event.runId);
      const run: FoldRun = {
        organizationId: event.organizationId,
        templateId: typed.templateId,
        version:
          typeof typed.templateVersion === 'number' ? typed.templateVersion : (facts.version ?? 1),
        createdAt: event.at,
        labels: facts.labels,
        status: 'pending',
        step: null,
        stepStartedAt: null,
        stepDueAt: null,
        assignee: null,
        overdue: false,
      };
      runs.set(event.runId, run);
      result.gone.delete(event.runId);
      result.changed.set(event.runId, run);
      for (const delta of runSlot(run, event.at)) delta.created += 1;
      gauge(run, 1);
      continue;
    }
    const run = runs.get(event.runId);
    // A run the fold never saw created (its events were deleted with it before the fold came):
    // it counts for nothing.
    if (!run) continue;
    result.changed.set(event.runId, run);
    const step = typeof data.step === 'string' ? data.step : undefined;
    switch (event.type) {
      case 'run.started':
        gauge(run, -1);
        if (step !== undefined) enter(run, step, event.at, dueOf(data.dueDate), data.assignee);
        break;
      case 'step.completed':
      case 'step.approved':
        if (step !== undefined) endStep(run, step, event.at, 'done');
        enterNext(run, data, event.at);
        break;
      case 'step.rejected':
        if (step !== undefined) endStep(run, step, event.at, 'rejected');
        enterNext(run, data, event.at);
        break;
      case 'step.reopened':
        for (const reopened of Array.isArray(data.steps) ? data.steps : []) {
          if (typeof reopened !== 'string') continue;
          for (const delta of stepSlot(run, reopened, event.at, null)) delta.reopened += 1;
        }
        break;
      case 'step.skipped':
        if (step !== undefined) {
          for (const delta of stepSlot(run, step, event.at, null)) delta.skipped += 1;
        }
        break;
      case 'step.assigned':
      case 'step.escalated':
        if (event.type === 'step.escalated' && typeof data.assignee !== 'string') break;
        gauge(run, -1);
        run.assignee = typeof data.assignee === 'string' ? data.assignee : null;
        gauge(run, 1);
        break;
      case 'step.overdue':
        if (run.status === 'active' && run.step === step && !run.overdue) {
          gauge(run, -1);
          run.overdue = true;
          gauge(run, 1);
        }
        break;
      case 'run.completed':
        gauge(run, -1);
        for (const delta of runSlot(run, event.at)) {
          delta.completed += 1;
          addTo(delta, Math.max(0, event.at - run.createdAt));
        }
        forget(event.runId);
        break;
      case 'run.failed':
        gauge(run, -1);
        for (const delta of runSlot(run, event.at)) delta.failed += 1;
        // The step it failed at is kept: a retry goes on there.
        run.status = 'failed';
        run.overdue = false;
        break;
      case 'run.cancelled':
        gauge(run, -1);
        for (const delta of runSlot(run, event.at)) delta.cancelled += 1;
        forget(event.runId);
        break;
      case 'run.retried':
        if (data.change === 'start' || step === undefined) {
          run.status = 'pending';
          run.step = null;
          gauge(run, 1);
        } else {
          // Back at the step it failed at, its clock started again, its due time kept.
          enter(run, step, event.at, run.step === step ? run.stepDueAt : null, run.assignee);
        }
        break;
      case 'run.migrated':
        gauge(run, -1);
        run.version = typeof data.toVersion === 'number' ? data.toVersion : run.version;
        if (run.status === 'active' && step !== undefined) {
          run.step = step;
          run.stepDueAt = dueOf(data.dueDate);
          run.assignee = typeof data.assignee === 'string' ? data.assignee : null;
          // Overdue only if the new due time has passed too (migrate-run.ts).
          run.overdue = run.overdue && run.stepDueAt !== null && run.stepDueAt <= event.at;
        }
        gauge(run, 1);
        break;
      case 'run.deleted':
        gauge(run, -1);
        forget(event.runId);
        break;
      default:
        // A new type does not compile until the fold says what it does to the figures.
        assertNever(event.type);
    }
  }
  result.runDays = byDay(result.runSlots, zoneOf);
  result.stepDays = byDay(result.stepSlots, zoneOf);
  return result;
}

/**
 * Hourly slots summed per day of the organization's clock: each hour lies in one local day
 * (an hour's start is a local hour's, hourStart), keyed with the zone those days are of.
 */
export function byDay<D extends TimedDelta>(
  hours: Rollups<D>,
  zoneOf: (organizationId: string) => string,
): Rollups<D> {
  const days: Rollups<D> = new Map();
  for (const { key, delta } of hours.values()) {
    const zone = zoneOf(key.organizationId);
    const day = entryOf(days, { ...key, slot: dayStart(key.slot!, zone), zone }, () =>
      emptyLike(delta),
    );
    addDelta(day, delta);
  }
  return days;
}

/** A delta with the same counts as `delta`, all 0. */
function emptyLike<D extends TimedDelta>(delta: D): D {
  const empty = { ...delta, durations: emptyBins(), durationCount: 0, durationMax: 0 };
  for (const name of Object.keys(empty) as Array<keyof D>) {
    if (typeof empty[name] === 'number') (empty[name] as number) = 0;
  }
  return empty;
}

/** Adds `from` into `into`: counts and durations summed, maxima the larger. */
function addDelta<D extends TimedDelta>(into: D, from: D): void {
  for (const name of Object.keys(from) as Array<keyof D>) {
    if (name !== 'durationMax' && typeof from[name] === 'number') {
      (into[name] as number) += from[name] as number;
    }
  }
  into.durationMax = Math.max(into.durationMax, from.durationMax);
  mergeBins(into.durations, from.durations);
}

function base(run: FoldRun) {
  return { organizationId: run.organizationId, templateId: run.templateId, version: run.version };
}

function slices(run: FoldRun, assignee: string | null): string[] {
  return ['', ...run.labels, ...(assignee !== null ? [assigneeSlice(assignee)] : [])];
}

function emptyCounts<K extends string>(names: readonly K[]) {
  const counts = {} as Record<K, number>;
  for (const name of names) counts[name] = 0;
  return { ...counts, durations: emptyBins(), durationCount: 0, durationMax: 0 };
}

function addTo(
  delta: { durations: DurationBins; durationCount: number; durationMax: number },
  ms: number,
) {
  addDuration(delta.durations, ms);
  delta.durationCount += 1;
  delta.durationMax = Math.max(delta.durationMax, ms);
}
