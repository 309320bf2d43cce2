// Moving a run onto another version of its template (newer or older), at once: the plan maps
// the run's pages onto the target's (by name, or as page_map says), and the run keeps what it
// has done. The exact rules (docs/migration.md):
//   - the plan: each source page maps to at most one target page and no two to the same one,
//     and the mapped pages keep their order, so the steps done stay before the step the run is
//     at (a plan is checked once, whatever the run: planMigration);
//   - the step the run is at must map (409 migration_step_unmapped); the steps before it that
//     map keep their state, times and values; the target's pages before it that nothing maps
//     onto are passed over (skipped); the pages after it wait, as they did;
//   - values are carried by inputId: those of fields the target lacks are dropped, and those the
//     target's field refuses are a 409 (migration_incompatible_value) unless drop_incompatible;
//     the target's defaults fill the fields without a value;
//   - the step the run is at keeps its assignee and start, and takes the target page's clock:
//     its due time (the page's due, or a set_due rule of the target's) counted from its start,
//     its decision timeout, its candidates; being overdue and escalations start over when the
//     new due time has not come. Rules decide nothing else now: from the next change on;
//   - a start waiting for a worker (a pending run) is carried over: it starts on the target. A
//     completion waiting for one is refused (409 completion_pending): its values and step were
//     checked against the source version, and a worker applies it within milliseconds.
// One run.migrated event records it all. No I/O here: the service reads and stores.
import type { Actor } from '../../audit/actor.js';
import { DomainError, pointer } from '../../errors.js';
import type { TemplatePage } from '../../templates/definition/definition-types.js';
import { isEmptyValue, valueProblem } from '../../templates/definition/field-values.js';
import { DEFAULT_TIME_ZONE } from '../../templates/definition/due-dates.js';
import { needsTimeZone, templateNames } from '../../templates/definition/template-definition.js';
import type { Template } from '../../templates/template.js';
import type { RunEventData } from '../run-events.js';
import {
  hasPendingChange,
  type RunDocument,
  type RunRecord,
  type RunTemplate,
  type StepState,
} from '../run-record.js';
import { isOpen } from '../run-status.js';
import { changeTime, currentColumns, present, withEvents } from './run-change.js';
import { decideAt, pageClock } from './step-flow.js';
import { withDefaults } from './values.js';

/** A page_map as given: a source page's name to a target page's, or null to leave it behind. */
export type PageMapInput = Readonly<Record<string, string | null>>;

/** A plan between two versions, checked: each source page's target page (by index), if any. */
export interface MigrationPlan {
  from: Template;
  to: Template;
  /** By source page index: the target page's index, or undefined (left behind). */
  targetOf: ReadonlyArray<number | undefined>;
  /** Values the target refuses are dropped rather than refused. */
  dropIncompatible: boolean;
}

/** What a migration did (or, in a dry run, would do): the run.migrated event's data. */
export type MigrationReport = RunEventData<'run.migrated'>;

/** A refusal of the plan itself: the same for every run (400, pointing into page_map). */
const badMap = (message: string, ...at: string[]) =>
  new DomainError('invalid_page_map', message, pointer('page_map', ...at));

/**
 * Checks a plan from version `from` to version `to` of a template: page_map's names (source
 * pages as keys, target pages or null as values), then the map by name with page_map over it:
 * no target page taken twice, and the mapped pages in the same order in both.
 */
export function planMigration(
  from: Template,
  to: Template,
  pageMap: PageMapInput = {},
  dropIncompatible = false,
): MigrationPlan {
  const sourceIndex = new Map(from.pages.map((page, i) => [page.name, i]));
  const targetIndex = new Map(to.pages.map((page, i) => [page.name, i]));
  for (const [source, target] of Object.entries(pageMap)) {
    if (!sourceIndex.has(source)) {
      throw badMap(
        `page_map names '${source}', which version ${from.version} has no page of`,
        source,
      );
    }
    if (target !== null && !targetIndex.has(target)) {
      throw badMap(
        `page_map maps '${source}' to '${target}', which version ${to.version} has no page of`,
        source,
      );
    }
  }
  const targetOf = from.pages.map((page) => {
    const named = Object.hasOwn(pageMap, page.name) ? pageMap[page.name] : page.name;
    return named === null || named === undefined ? undefined : targetIndex.get(named);
  });
  const taken = new Map<number, string>();
  let last: { source: string; target: number } | undefined;
  for (const [i, target] of targetOf.entries()) {
    if (target === undefined) continue;
    const source = from.pages[i]!.name;
    const other = taken.get(target);
    if (other !== undefined) {
      throw badMap(
        `'${other}' and '${source}' both map to '${to.pages[target]!.name}': map one of them elsewhere, or to null`,
        source,
      );
    }
    taken.set(target, source);
    if (last && target < last.target) {
      throw badMap(
        `the mapped pages must keep their order: '${last.source}' comes before '${source}' in version ${from.version}, ` +
          `but their pages in version ${to.version} come the other way round; map one of them elsewhere, or to null`,
        source,
      );
    }
    last = { source, target };
  }
  return { from, to, targetOf, dropIncompatible };
}

/** The run's refusals that do not depend on the plan. */
function checkMovable(run: RunRecord, plan: MigrationPlan): void {
  if (!isOpen(run.status)) {
    throw new DomainError(
      'run_not_migratable',
      `the run is ${run.status}; only a pending or active run can move to another version`,
    );
  }
  if (run.templateId !== plan.to.id || run.templateVersion !== plan.from.version) {
    throw new DomainError(
      'run_not_migratable',
      `the run uses version ${run.templateVersion} of its template, not version ${plan.from.version}`,
    );
  }
  if (run.templateVersion === plan.to.version) {
    throw new DomainError(
      'migration_same_version',
      `the run already uses version ${plan.to.version}`,
      pointer('to_version'),
    );
  }
  if (hasPendingChange(run) && run.document.pending?.type === 'complete_step') {
    throw new DomainError(
      'completion_pending',
      'a step completion waits for a worker: move the run once it is applied (within moments)',
    );
  }
}

/** The run's values as the target takes them: carried by inputId, dropped, or defaulted. */
function carryValues(
  doc: RunDocument,
  plan: MigrationPlan,
): {
  values: Record<string, string>;
  dropped: Record<string, string>;
  incompatible: string[];
  defaulted: string[];
} {
  const { fields, checked } = templateNames(plan.to);
  const values: Record<string, string> = {};
  const dropped: Record<string, string> = {};
  const incompatible: string[] = [];
  for (const [inputId, raw] of Object.entries(doc.input_fields)) {
    const field = fields.get(inputId);
    if (!field) {
      dropped[inputId] = raw;
      continue;
    }
    const problem = checked && !isEmptyValue(field, raw) ? valueProblem(field, raw) : undefined;
    if (problem !== undefined) {
      if (!plan.dropIncompatible) {
        throw new DomainError(
          'migration_incompatible_value',
          `input field '${inputId}' (${field.fieldName}) of version ${plan.to.version} refuses the run's value: ${problem} ` +
            '(drop_incompatible drops it instead)',
          pointer('input_fields', inputId),
        );
      }
      dropped[inputId] = raw;
      incompatible.push(inputId);
      continue;
    }
    values[inputId] = raw;
  }
  const filled = withDefaults(plan.to, values);
  const defaulted = Object.keys(filled).filter((id) => !Object.hasOwn(values, id));
  return { values: filled, dropped, incompatible, defaulted };
}

/** A target page's step that the run has not reached. */
const waiting = (name: string): StepState => ({
  name,
  status: 'waiting',
  assignee: null,
  due_date: null,
  started_at: null,
  completed_at: null,
});

/** A source step under its target page's name, without the source version's rule indexes. */
function carried(step: StepState, name: string): StepState {
  const copy: StepState = { ...step, name };
  delete copy.rules;
  return copy;
}

/**
 * The step the run is at, on the target page: its assignee and start kept; its due time,
 * decision timeout and candidates as the target page gives a step begun then. Overdue stays
 * only while the new due time has passed; escalations start over with it.
 */
function restartClock(
  doc: RunDocument,
  index: number,
  step: StepState,
  page: TemplatePage,
  at: Date,
  runStart: Date,
): StepState {
  const began = step.started_at ? new Date(step.started_at) : at;
  const clock = pageClock(doc, page, decideAt(doc, index), began, runStart);
  const stillOverdue =
    step.overdue === true && clock.due !== null && clock.due.getTime() <= at.getTime();
  const { candidate_groups: groups, escalated } = step;
  const rest: StepState = { ...step };
  for (const key of [
    'decision_due_at',
    'candidate_users',
    'candidate_groups',
    'overdue',
    'escalated',
  ] as const) {
    delete rest[key];
  }
  // Groups escalations added this visit stay while the step stays overdue.
  const kept = stillOverdue && (escalated ?? 0) > 0 ? (groups ?? []) : [];
  const candidateGroups = [...new Set([...(clock.candidates.candidate_groups ?? []), ...kept])];
  return {
    ...rest,
    due_date: clock.due ? clock.due.toISOString() : null,
    ...(stillOverdue ? { overdue: true } : {}),
    ...(stillOverdue && escalated !== undefined ? { escalated } : {}),
    ...present({
      candidate_users: clock.candidates.candidate_users,
      candidate_groups: candidateGroups.length > 0 ? candidateGroups : undefined,
      decision_due_at: step.decision === undefined ? clock.decisionDue : undefined,
    }),
  };
}

/**
 * The run moved onto the plan's target version, with its run.migrated event; a DomainError
 * when it cannot move (the codes in checkMovable and carryValues, and migration_step_unmapped).
 * `timeZone` is the organization's, kept when the target counts due times in days and the run
 * kept none.
 */
export function migrateRun(
  run: RunRecord,
  plan: MigrationPlan,
  now: Date,
  actor: Actor,
  timeZone: string = DEFAULT_TIME_ZONE,
): { after: RunRecord; report: MigrationReport } {
  checkMovable(run, plan);
  const doc = run.document;
  const { from, to, targetOf } = plan;
  const current = doc.current_step;
  const currentTarget = current === null ? undefined : targetOf[current];
  if (current !== null && currentTarget === undefined) {
    const name = from.pages[current]?.name ?? String(current);
    throw new DomainError(
      'migration_step_unmapped',
      `the run is at '${name}', which maps to no page of version ${to.version}: map it in page_map`,
      pointer('page_map', name),
    );
  }
  const at = changeTime(run, now);
  const { values, dropped, incompatible, defaulted } = carryValues(doc, plan);

  const sourceOf = new Map<number, number>();
  targetOf.forEach((target, source) => {
    if (target !== undefined) sourceOf.set(target, source);
  });
  const skipped: string[] = [];
  const steps = to.pages.map((page, j) => {
    const source = sourceOf.get(j);
    const step = source === undefined ? undefined : doc.steps[source];
    if (currentTarget === undefined || j > currentTarget) {
      // Not reached: waiting, as it was (a page sent back to keeps its count of rejections).
      return step ? carried(step, page.name) : waiting(page.name);
    }
    if (step) return carried(step, page.name);
    skipped.push(page.name);
    return { ...waiting(page.name), status: 'skipped' as const, skipped_at: at.toISOString() };
  });

  const assignments: Record<string, string> = {};
  const droppedAssignments: Record<string, string> = {};
  for (const [pageName, user] of Object.entries(doc.user_assignments)) {
    const source = from.pages.findIndex((page) => page.name === pageName);
    const target = source >= 0 ? targetOf[source] : undefined;
    if (target === undefined) droppedAssignments[pageName] = user;
    else assignments[to.pages[target]!.name] = user;
  }

  const template: RunTemplate = {
    id: to.id,
    name: to.name,
    version: to.version,
    pages: to.pages,
    ...(to.rules ? { rules: to.rules } : {}),
  };
  let document: RunDocument = {
    ...doc,
    template,
    input_fields: values,
    user_assignments: assignments,
    steps,
    current_step: currentTarget ?? null,
    ...(needsTimeZone(to) && !doc.time_zone ? { time_zone: timeZone } : {}),
  };
  if (currentTarget !== undefined) {
    const step = restartClock(
      document,
      currentTarget,
      steps[currentTarget]!,
      to.pages[currentTarget]!,
      at,
      run.createdAt,
    );
    document = { ...document, steps: steps.map((s, j) => (j === currentTarget ? step : s)) };
  }

  const pageMap: Record<string, string> = {};
  const unmapped: string[] = [];
  from.pages.forEach((page, i) => {
    const target = targetOf[i];
    if (target === undefined) unmapped.push(page.name);
    else pageMap[page.name] = to.pages[target]!.name;
  });
  const atStep = currentTarget === undefined ? undefined : document.steps[currentTarget];
  const nonEmpty = <T extends object>(o: T) => (Object.keys(o).length > 0 ? o : undefined);
  const report: MigrationReport = {
    fromVersion: from.version,
    toVersion: to.version,
    workflowName: to.name,
    pageMap,
    ...present({
      unmappedPages: nonEmpty(unmapped),
      step: atStep?.name,
      assignee: atStep?.assignee,
      dueDate: atStep?.due_date,
      droppedFields: nonEmpty(dropped),
      incompatibleFields: nonEmpty(incompatible),
      defaultedFields: nonEmpty(defaulted),
      droppedAssignments: nonEmpty(droppedAssignments),
      skippedSteps: nonEmpty(skipped),
    }),
  };
  const after = withEvents(
    {
      ...run,
      templateVersion: to.version,
      workflowName: to.name,
      ...currentColumns(document),
      document,
      lastActivity: at,
    },
    at,
    actor,
    [{ type: 'run.migrated', data: report }],
  );
  return { after, report };
}
