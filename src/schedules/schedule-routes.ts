// The schedule endpoints, each stating its contract (http/contract.ts); handlers only translate
// between HTTP and the schedule service.
import { defineRoute, pageResponse, type Route } from '../http/contract.js';
import { listPage } from '../http/pagination.js';
import {
  BackfillResultSchema,
  ScheduleDeletedSchema,
  ScheduleFireSchema,
  WorkflowScheduleSchema,
  type scheduleSchemas,
} from './schedule-schemas.js';
import type { ScheduleService } from './schedule-service.js';

/** What a body describing a schedule can be refused for. */
const DEFINITION_REFUSALS = [
  'unknown_template',
  'unknown_template_version',
  'template_archived',
  'unknown_input_field',
  'unknown_page',
  'invalid_field_value',
  'invalid_cron',
  'invalid_schedule',
  'invalid_time_zone',
] as const;

/** A page's rows without their keyset position. */
const withoutSeq = <T extends { seq: number }>({ seq: _seq, ...rest }: T) => rest;

export function scheduleRoutes(deps: {
  service: ScheduleService;
  schemas: ReturnType<typeof scheduleSchemas>;
  defaultLimit: number;
}): Route[] {
  const { service, schemas } = deps;
  const schedule = (description: string) => ({
    200: { description, schema: WorkflowScheduleSchema },
  });
  const pause = (paused: boolean) =>
    defineRoute({
      operationId: paused ? 'pauseWorkflowSchedule' : 'resumeWorkflowSchedule',
      method: 'POST',
      path: paused ? '/pause-workflow-schedule' : '/resume-workflow-schedule',
      summary: paused
        ? 'Pause a schedule: the times that come meanwhile are skipped'
        : 'Resume a paused schedule: it goes on from now; the times it passed are recorded as skipped',
      scope: 'schedules:write',
      body: schemas.noteBody,
      responses: schedule(paused ? 'the schedule, paused' : 'the schedule, active'),
      refusals: ['schedule_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.setPaused(principal, body, paused, deadline, idempotency),
        };
      },
    });
  return [
    defineRoute({
      operationId: 'createWorkflowSchedule',
      method: 'POST',
      path: '/create-workflow-schedule',
      summary: "Create a schedule: a template's runs on a cadence",
      description:
        'A cron expression (5 fields, read in time_zone) or an interval; each scheduled time ' +
        'creates one run, exactly once, with the values given here.',
      scope: 'schedules:write',
      body: schemas.createBody,
      responses: schedule('the schedule as stored, with its next five times'),
      refusals: DEFINITION_REFUSALS,
      async handle({ principal, body, deadline, idempotency }) {
        return { status: 200, body: await service.create(principal, body, deadline, idempotency) };
      },
    }),
    defineRoute({
      operationId: 'updateWorkflowSchedule',
      method: 'POST',
      path: '/update-workflow-schedule',
      summary: 'Change a schedule: the fields given',
      description:
        'A new cadence, time zone or bounds start from now (the times before now are not made up).',
      scope: 'schedules:write',
      body: schemas.updateBody,
      responses: schedule('the schedule as stored'),
      refusals: [...DEFINITION_REFUSALS, 'schedule_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return { status: 200, body: await service.update(principal, body, deadline, idempotency) };
      },
    }),
    pause(true),
    pause(false),
    defineRoute({
      operationId: 'deleteWorkflowSchedule',
      method: 'POST',
      path: '/delete-workflow-schedule',
      summary: 'Delete a schedule (its runs and their history stay)',
      scope: 'schedules:write',
      body: schemas.idBody,
      responses: { 200: { description: 'deleted', schema: ScheduleDeletedSchema } },
      refusals: ['schedule_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.delete(principal, body.id, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'triggerWorkflowSchedule',
      method: 'POST',
      path: '/trigger-workflow-schedule',
      summary: 'Create one run now, outside the cadence',
      description:
        "Under the overlap rule (the schedule's, or the one given): the run is created, held, or skipped; the answer is the record.",
      scope: 'schedules:write',
      body: schemas.triggerBody,
      responses: { 200: { description: 'what happened', schema: ScheduleFireSchema } },
      refusals: ['schedule_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.trigger(principal, body, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'backfillWorkflowSchedule',
      method: 'POST',
      path: '/backfill-workflow-schedule',
      summary: 'Create the runs of the scheduled times in a past range, in order',
      description:
        'At most 1,000 times, each at most once (a time with a record of its own is left as it is), under the overlap rule.',
      scope: 'schedules:write',
      body: schemas.backfillBody,
      responses: { 200: { description: 'what happened', schema: BackfillResultSchema } },
      refusals: ['schedule_not_found', 'invalid_schedule', 'backfill_too_large'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.backfill(principal, body, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'getWorkflowSchedule',
      method: 'GET',
      path: '/get-workflow-schedule',
      summary: 'One schedule, with its next five times and its latest record',
      scope: 'schedules:read',
      query: schemas.getQuery,
      responses: schedule('the schedule'),
      refusals: ['schedule_not_found'],
      async handle({ principal, query }) {
        return { status: 200, body: await service.get(principal, query.id) };
      },
    }),
    defineRoute({
      operationId: 'getWorkflowSchedules',
      method: 'GET',
      path: '/get-workflow-schedules',
      summary: "List the organization's schedules, newest first",
      scope: 'schedules:read',
      query: schemas.listQuery,
      responses: { 200: pageResponse('schedules', WorkflowScheduleSchema) },
      async handle({ principal, query }, ctx) {
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeSeq) =>
            service.list(
              principal,
              { templateId: query.template_id, state: query.state },
              limit,
              beforeSeq,
            ),
          withoutSeq,
        );
      },
    }),
    defineRoute({
      operationId: 'getWorkflowScheduleHistory',
      method: 'GET',
      path: '/get-workflow-schedule-history',
      summary: "A schedule's records, newest first: each time fired, held or skipped, with why",
      scope: 'schedules:read',
      query: schemas.historyQuery,
      responses: { 200: pageResponse('records', ScheduleFireSchema) },
      refusals: ['schedule_not_found'],
      async handle({ principal, query }, ctx) {
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeId) => service.history(principal, query.id, limit, beforeId),
          withoutSeq,
        );
      },
    }),
  ];
}
