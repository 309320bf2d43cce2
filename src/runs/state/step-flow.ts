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
import type { DueSpec } from '../../templates/definition/definition-types.js';
import {
  DEFAULT_TIME_ZONE,
  addDue,
  type DueAnchorValue,
} from '../../templates/definition/due-dates.js';
import { isEmptyValue, parseFieldValue } from '../../templates/definition/field-values.js';
import { compileRules, decidePage, type PageDecision } from '../../templates/definition/rules.js';
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
interface Entered {
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
  const skipped: NewRunEvent[] = [];
  let steps = doc.steps;
  for (let index = from; index < pages.length; index++) {
    const decision = decidePage(rules, index, doc.input_fields);
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

  let due: Date | null = null;
  let dueBy: number | undefined;
  const spec = decision.due?.spec ?? page.due;
  if (spec) {
    due = dueFrom(doc, spec, at, runStart);
    if (decision.due && due) dueBy = decision.due.rule;
  } else if (page.dueInHours !== undefined && page.dueInHours !== null) {
    due = new Date(at.getTime() + page.dueInHours * HOUR_MS);
  }

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
    },
  };
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
