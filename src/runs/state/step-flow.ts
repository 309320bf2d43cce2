// How a run moves onto its next step: from a position, the first page that the template's
// rules leave visible, given the values known at that moment, becomes the current step, and
// every page passed over on the way is skipped, each with a step.skipped event naming the rule
// that hid it. The step that starts gets its assignee (user_assignments first, then an assign
// rule) and its due time (a set_due rule, else the page's own `due` or `dueInHours`). A template
// without rules takes the shortest path: the next page, as runs always moved.
//
// Both a start and a completion enter the next step through here, and so will any later kind
// of page (an approval that sends the run back): what entering a step means lives in one place.
import { ASSIGNEE_COLUMN } from '../../config.js';
import type { DueSpec, TemplatePage } from '../../templates/definition/definition-types.js';
import {
  DEFAULT_TIME_ZONE,
  addDue,
  type DueAnchorValue,
} from '../../templates/definition/due-dates.js';
import { isEmptyValue, parseFieldValue } from '../../templates/definition/field-values.js';
import {
  compileRules,
  decidePage,
  decisionKey,
  type PageDecision,
} from '../../templates/definition/rules.js';
import { templateNames } from '../../templates/definition/template-definition.js';
import type { NewRunEvent } from '../run-events.js';
import { RunStateError, type RunDocument, type StepRules, type StepState } from '../run-record.js';
import { ownValue, present } from './run-change.js';

const HOUR_MS = 3600_000;

/** The step that became current, and which rules decided it (absent: none did). */
export interface StartedStep {
  index: number;
  step: StepState;
  rules: StepRules | undefined;
}

/** Where entering left the run: its steps, the step now current (none: no page is left). */
export interface Entered {
  steps: StepState[];
  started: StartedStep | undefined;
  /** The step.skipped events of the pages passed over, in order. */
  skipped: NewRunEvent[];
}

/**
 * Enters the first visible page at or after `from` (doc holds the values known now). `at` is
 * the change's time, the new step's start; `runStart` is when the run was created.
 */
export function enterFrom(doc: RunDocument, from: number, at: Date, runStart: Date): Entered {
  const { pages } = doc.template;
  // Compiled once per template version; without rules, every page is a shared "visible".
  const rules = compileRules(doc.template);
  const values = ruleValues(doc);
  const skipped: NewRunEvent[] = [];
  let steps = doc.steps;
  for (let index = from; index < pages.length; index++) {
    const decision = decidePage(rules, index, values);
    const step = steps[index];
    if (!step) throw new RunStateError(`run has no step ${index}`);
    if (!decision.visible && decision.visibility) {
      const { rule, how } = decision.visibility;
      const reason = how === 'not_shown' ? 'not_shown' : 'hidden';
      steps = replace(steps, index, {
        ...step,
        status: 'skipped',
        skipped_at: at.toISOString(),
        rules: reason === 'hidden' ? { hidden_by: rule } : { not_shown_by: rule },
      });
      skipped.push({
        type: 'step.skipped',
        data: present({
          step: step.name,
          rule,
          ruleName: doc.template.rules?.[rule]?.name,
          reason,
        }),
      });
      continue;
    }
    const started = startStep(doc, index, step, decision, at, runStart);
    return { steps: replace(steps, index, started.step), started, skipped };
  }
  return { steps, started: undefined, skipped };
}

/**
 * The values the rules test: the run's inputs, and each decided approval step's decision under
 * its decisionKey. A run without decisions tests its inputs as they are.
 */
function ruleValues(doc: RunDocument): Readonly<Record<string, string>> {
  let values: Record<string, string> | undefined;
  doc.steps.forEach((step) => {
    if (step.decision === undefined) return;
    values ??= { ...doc.input_fields };
    values[decisionKey(step.name)] = step.decision;
  });
  return values ?? doc.input_fields;
}

function replace(steps: StepState[], index: number, step: StepState): StepState[] {
  const copy = steps.slice();
  copy[index] = step;
  return copy;
}

function startStep(
  doc: RunDocument,
  index: number,
  step: StepState,
  decision: PageDecision,
  at: Date,
  runStart: Date,
): StartedStep {
  const page = doc.template.pages[index]!;
  const shownBy = decision.visibility?.how === 'shown' ? decision.visibility.rule : undefined;

  // An assignment given when the run was created wins over the rules.
  let assignee = ownValue(doc.user_assignments, page.name);
  let assignedBy: number | undefined;
  if (assignee === null && decision.assign) {
    const chosen =
      'user' in decision.assign
        ? decision.assign.user
        : ownValue(doc.input_fields, decision.assign.fromField)?.trim();
    // A value that cannot be an assignee (none, or too long) leaves the step unassigned.
    if (chosen && chosen.length <= ASSIGNEE_COLUMN) {
      assignee = chosen;
      assignedBy = decision.assign.rule;
    }
  }

  const { due, dueBy, candidates, decisionDue } = pageClock(doc, page, decision, at, runStart);

  // Only a step some rule decided records it: a plain run's steps are as they always were.
  const decided =
    shownBy === undefined && assignedBy === undefined && dueBy === undefined
      ? undefined
      : present({ shown_by: shownBy, assigned_by: assignedBy, due_by: dueBy });
  return {
    index,
    rules: decided,
    step: {
      ...step,
      status: 'active',
      assignee,
      due_date: due ? due.toISOString() : null,
      started_at: at.toISOString(),
      ...(decided ? { rules: decided } : {}),
      ...candidates,
      ...(decisionDue ? { decision_due_at: decisionDue } : {}),
    },
  };
}

/** What a page gives its step begun at `at`: the clock's owed times, and who may claim it. */
export interface PageClock {
  /** A set_due rule's due time (dueBy names it), else the page's own due or dueInHours. */
  due: Date | null;
  dueBy: number | undefined;
  candidates: Pick<StepState, 'candidate_users' | 'candidate_groups'>;
  /** An approval page's decisionTimeout, counted from `at`. */
  decisionDue: string | undefined;
}

/**
 * The clock and candidates the page at doc's current version gives a step begun at `at`, the
 * rules deciding as `decision` says: what entering a step sets, and what moving a run to another
 * version (state/migrate-run.ts) sets again for the step it is at.
 */
export function pageClock(
  doc: RunDocument,
  page: TemplatePage,
  decision: Pick<PageDecision, 'due'>,
  at: Date,
  runStart: Date,
): PageClock {
  let due: Date | null = null;
  let dueBy: number | undefined;
  const spec = decision.due?.spec ?? page.due;
  if (spec) {
    due = dueFrom(doc, spec, at, runStart);
    if (decision.due && due) dueBy = decision.due.rule;
  } else if (page.dueInHours !== undefined && page.dueInHours !== null) {
    due = new Date(at.getTime() + page.dueInHours * HOUR_MS);
  }
  const decisionDue =
    page.kind === 'approval' && page.decisionTimeout
      ? new Date(at.getTime() + page.decisionTimeout.hours * HOUR_MS).toISOString()
      : undefined;
  return { due, dueBy, candidates: candidatesOf(doc, page), decisionDue };
}

/** What the version's rules decide for the page at `index`, given the run's values now. */
export function decideAt(doc: RunDocument, index: number): PageDecision {
  return decidePage(compileRules(doc.template), index, ruleValues(doc));
}

/**
 * Who may claim a step of the page: its fixed candidates and those its fields name (a
 * multi_select's options, another field's trimmed value), each list without repeats or values
 * too long to be an assignee. Nothing for a page that names no candidates.
 */
function candidatesOf(
  doc: RunDocument,
  page: TemplatePage,
): Pick<StepState, 'candidate_users' | 'candidate_groups'> {
  const users = peopleOf(doc, page.candidateUsers, page.candidateUsersFromField);
  const groups = peopleOf(doc, page.candidateGroups, page.candidateGroupsFromField);
  return present({ candidate_users: users, candidate_groups: groups });
}

function peopleOf(
  doc: RunDocument,
  fixed: readonly string[] | undefined,
  fromField: string | undefined,
): string[] | undefined {
  if (fixed === undefined && fromField === undefined) return undefined;
  const names = [...(fixed ?? [])];
  const field =
    fromField === undefined ? undefined : templateNames(doc.template).fields.get(fromField);
  const raw = field ? ownValue(doc.input_fields, field.inputId) : null;
  if (field && raw !== null && !isEmptyValue(field, raw)) {
    const value = parseFieldValue(field, raw);
    if (value?.kind === 'options') names.push(...value.options);
    else if (value?.kind === 'text') names.push(value.text.trim());
  }
  return [...new Set(names.filter((name) => name.length > 0 && name.length <= ASSIGNEE_COLUMN))];
}

/**
 * Sends the run back to page `to` after a rejection at `from`: every step from `to` to `from`
 * is open again (waiting, its start, due date, assignment and decision forgotten; an approval
 * step keeps its count of rejections), then the first visible page at or after `to` is entered
 * as any step is. The values given before are kept.
 */
export function reopenFrom(
  doc: RunDocument,
  to: number,
  from: number,
  at: Date,
  runStart: Date,
): Entered & { reopened: string[] } {
  const time = at.toISOString();
  const reopened: string[] = [];
  const steps = doc.steps.map((step, i) => {
    if (i < to || i > from) return step;
    reopened.push(step.name);
    return {
      name: step.name,
      status: 'waiting' as const,
      assignee: null,
      due_date: null,
      started_at: null,
      completed_at: null,
      reopened_at: time,
      ...(step.rejections !== undefined ? { rejections: step.rejections } : {}),
    };
  });
  return { ...enterFrom({ ...doc, steps }, to, at, runStart), reopened };
}

/** A relative due time; none when its anchor is a field without a (date) value. */
function dueFrom(doc: RunDocument, spec: DueSpec, at: Date, runStart: Date): Date | null {
  let anchor: DueAnchorValue;
  if (spec.anchor === 'step_start') anchor = { instant: at };
  else if (spec.anchor === 'run_start') anchor = { instant: runStart };
  else {
    const field =
      spec.field === undefined ? undefined : templateNames(doc.template).fields.get(spec.field);
    const raw = field ? ownValue(doc.input_fields, field.inputId) : null;
    if (!field || raw === null || isEmptyValue(field, raw)) return null;
    const value = parseFieldValue(field, raw);
    if (value?.kind === 'date') anchor = { date: value.date };
    else if (value?.kind === 'datetime') anchor = { instant: new Date(value.ms) };
    else return null;
  }
  return addDue(anchor, spec.amount, spec.unit, doc.time_zone ?? DEFAULT_TIME_ZONE);
}
