// What a delivery says: `{"type", "timestamp", "data"}` as Standard Webhooks lays it out. data
// is the event's own data (the step concerned, its assignee, a reason, an error) with the run
// id, the organization, the event's place in the run's history (seq), who made the change
// (actor, as in the run's history; absent for events from before actors were recorded) and
// the run's summary right after the change, in the spec's WorkflowRunSummary fields. The summary is folded from
// the run's history up to the event, so a delivery made late, or again, still tells the run as
// it was then, not as it is now. A deleted run's summary holds nothing personal (run.deleted).
import { assertNever, type RunEvent } from '../runs/run-events.js';
import type { RunSummary } from '../runs/run-schemas.js';

type Current = Pick<RunSummary, 'currentStepName' | 'currentStepAssignee' | 'currentStepDueDate'>;

/** The current step's fields, each left out when it has no value. */
function current(name?: string, assignee?: string, dueDate?: string): Current {
  const out: Current = {};
  if (name) out.currentStepName = name;
  if (assignee) out.currentStepAssignee = assignee;
  if (dueDate) out.currentStepDueDate = dueDate;
  return out;
}

/**
 * The run's summary right after the last event of `history` (its events from seq 1 on, in
 * order), or undefined when the history does not start with run.created (a run older than
 * the history itself).
 */
export function summaryAfter(runId: string, history: readonly RunEvent[]): RunSummary | undefined {
  const first = history[0];
  // A deleted run's history is its run.deleted event alone: the summary is what it says, with
  // no current step (an assignee is personal data, and the run has no step any more).
  if (first?.type === 'run.deleted') {
    const { workflowName, status } = first.data;
    return { id: runId, lastActivity: first.at, workflowName, status };
  }
  if (!first || first.type !== 'run.created' || first.seq !== 1) return undefined;
  let summary: RunSummary = {
    id: runId,
    lastActivity: first.at,
    workflowName: first.data.workflowName,
    status: 'pending',
  };
  // The summary without its current step, for events that move the run off one.
  const base = () => ({
    id: summary.id,
    lastActivity: summary.lastActivity,
    workflowName: summary.workflowName,
    status: summary.status,
  });
  for (const event of history.slice(1)) {
    const at = event.at;
    switch (event.type) {
      case 'run.started': {
        const { step, assignee, dueDate } = event.data;
        summary = {
          ...base(),
          status: 'active',
          lastActivity: at,
          ...current(step, assignee, dueDate),
        };
        break;
      }
      case 'step.completed':
      case 'step.approved': {
        const { nextStep, nextAssignee, nextDueDate } = event.data;
        summary = { ...base(), lastActivity: at, ...current(nextStep, nextAssignee, nextDueDate) };
        break;
      }
      case 'step.rejected': {
        // Sent back: the step now current is named here. Failed: no step is current, and the
        // run.failed that follows says so.
        const { nextStep, nextAssignee, nextDueDate } = event.data;
        summary = { ...base(), lastActivity: at, ...current(nextStep, nextAssignee, nextDueDate) };
        break;
      }
      case 'step.reopened':
        break; // the step.rejected before it named the step now current
      case 'step.assigned': {
        const { assignee } = event.data;
        summary = { ...summary, lastActivity: at };
        if (assignee === undefined) delete summary.currentStepAssignee;
        else summary.currentStepAssignee = assignee;
        break;
      }
      case 'step.escalated':
        // Not activity; an escalation that reassigns changes the assignee.
        if (event.data.assignee !== undefined) {
          summary = { ...summary, currentStepAssignee: event.data.assignee };
        }
        break;
      case 'run.completed':
        summary = { ...base(), status: 'completed', lastActivity: at };
        break;
      case 'run.cancelled':
        summary = { ...base(), status: 'cancelled', lastActivity: at };
        break;
      case 'run.failed':
        // The step that could not be completed stays the current one.
        summary = { ...summary, status: 'failed', lastActivity: at };
        break;
      case 'run.retried':
        summary = {
          ...summary,
          status: event.data.change === 'start' ? 'pending' : 'active',
          lastActivity: at,
        };
        break;
      case 'run.migrated': {
        // Another version: its name, and the step the run is at under its target page.
        const { workflowName, step, assignee, dueDate } = event.data;
        summary = {
          ...base(),
          workflowName,
          lastActivity: at,
          ...current(step, assignee, dueDate),
        };
        break;
      }
      case 'step.overdue':
        break; // being overdue is not activity, and the summary does not show it
      case 'step.skipped':
        break; // the step.completed or run.started before it named the step now current
      case 'run.created':
        break; // only ever the first event
      case 'run.deleted':
        // Deleting a run deletes its earlier events with it (see above); were any read with
        // it, the summary would still leave the current step (and its assignee) out.
        summary = { ...base(), lastActivity: at };
        break;
      default:
        assertNever(event);
    }
  }
  return summary;
}

/** The webhook-id of an event: the same for every attempt and every endpoint. */
export function messageId(eventId: number | string): string {
  return `evt_${eventId}`;
}

/** The body of a delivery. */
export function deliveryBody(
  event: RunEvent,
  run: { id: string; organizationId: string; summary: RunSummary },
): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.at,
    data: {
      ...event.data,
      runId: run.id,
      organizationId: run.organizationId,
      seq: event.seq,
      ...(event.actor ? { actor: event.actor } : {}),
      run: run.summary,
    },
  });
}
