// A new run: pending, with its start waiting for a worker, and its run.created event.
import type { Actor } from '../../audit/actor.js';
import type { Template } from '../../templates/template.js';
import { DEFAULT_TIME_ZONE } from '../../templates/definition/due-dates.js';
import { needsTimeZone } from '../../templates/definition/template-definition.js';
import type { RunDocument, RunRecord } from '../run-record.js';
import { currentColumns, withEvents } from './run-change.js';
import { withDefaults } from './values.js';

export function newRun(
  id: string,
  organizationId: string,
  template: Template,
  inputFields: Record<string, string>,
  userAssignments: Record<string, string>,
  now: Date,
  actor: Actor,
  labels?: Record<string, string>,
  /** The organization's time zone, kept by runs whose template counts due times in days. */
  timeZone?: string,
  /** The schedule creating the run, and the time it is for. */
  schedule?: { id: string; scheduledFor: Date },
): RunRecord {
  const at = now.toISOString();
  const document: RunDocument = {
    template: {
      id: template.id,
      name: template.name,
      version: template.version,
      pages: template.pages,
      ...(template.rules ? { rules: template.rules } : {}),
    },
    input_fields: withDefaults(template, inputFields),
    user_assignments: userAssignments,
    steps: template.pages.map((page) => ({
      name: page.name,
      status: 'waiting',
      assignee: null,
      due_date: null,
      started_at: null,
      completed_at: null,
    })),
    current_step: null,
    pending: { seq: 1, type: 'start', requested_at: at },
    error: null,
    // Left out when there are none: a run without labels is stored as before.
    ...(labels && Object.keys(labels).length > 0 ? { labels } : {}),
    // Likewise a run whose template has no relative due times.
    ...(needsTimeZone(template) ? { time_zone: timeZone ?? DEFAULT_TIME_ZONE } : {}),
    ...(schedule
      ? { schedule: { id: schedule.id, scheduled_for: schedule.scheduledFor.toISOString() } }
      : {}),
  };
  const run: RunRecord = {
    id,
    organizationId,
    templateId: template.id,
    templateVersion: template.version,
    workflowName: template.name,
    status: 'pending',
    ...currentColumns(document),
    document,
    requestedSeq: 1,
    appliedSeq: 0,
    pendingSince: now,
    lastActivity: now,
    createdAt: now,
    eventSeq: 0,
    events: [],
  };
  return withEvents(run, now, actor, [
    {
      type: 'run.created',
      data: {
        templateId: template.id,
        templateVersion: template.version,
        workflowName: template.name,
      },
    },
  ]);
}
