// Creating runs and requesting step completions: validate against the template, commit to
// MySQL, then notify the workers. A caller is answered only after the commit.
import { DomainError, OutcomeUnknownError, isTransientError, pointer } from '../errors.js';
import {
  answered,
  isDuplicateKey,
  type IdempotencyClaim,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import { beginWrite, type WriteGate } from '../lib/deadline.js';
import { countChange, runsCreated } from '../metrics/metrics.js';
import { resourceJson } from './run-views.js';
import type { Logger } from '../logger.js';
import { Batcher } from '../lib/batcher.js';
import { newId } from '../lib/ids.js';
import type { Principal } from '../auth/principal.js';
import { needsTimeZone, templateNames } from '../templates/definition/template-definition.js';
import { checkValues } from './state/values.js';
import { DEFAULT_TIME_ZONE } from '../templates/definition/due-dates.js';
import type { Template } from '../templates/template.js';
import type { TemplateStore } from '../templates/template-store.js';
import type { RunNotifier } from './run-notifier.js';
import type {
  AssignStepBody,
  CancelRunBody,
  ClaimStepBody,
  CompleteStepBody,
  CreateRunBody,
  RetryRunBody,
  UnclaimStepBody,
} from './run-schemas.js';
import type { RunEvent } from './run-events.js';
import {
  assignStep,
  cancelRun,
  claimStep,
  newRun,
  requestStepCompletion,
  retryRun,
  unclaimStep,
} from './run-state.js';
import type { RunRecord } from './run-record.js';
import { TemplateHeadChanged, type RunStore } from './run-store.js';
import type { TemplateAssumption } from './run-sql.js';

/**
 * A run waiting to be written, with the Idempotency-Key (and answer) to store beside it, and
 * what it assumed of its template's head (checked in the transaction that stores it).
 */
interface NewRun {
  run: RunRecord;
  key: IdempotencyRecord | undefined;
  assumption: TemplateAssumption;
}

/** How often a create is made again when its template changed under it, before a 409. */
const CREATE_ATTEMPTS = 3;

/** The key a request claimed, with the run as its answer (idempotency-keys' answered). */
const runAnswer = (claim: IdempotencyClaim | undefined, status: number, run: RunRecord) =>
  answered(claim, status, () => resourceJson(run), run.id);

export function checkAgainstTemplate(
  template: Template,
  inputFields: Record<string, string>,
  userAssignments: Record<string, string>,
): void {
  const { inputIds, pages } = templateNames(template);
  for (const key of Object.keys(inputFields)) {
    if (!inputIds.has(key)) {
      throw new DomainError(
        'unknown_input_field',
        `input_fields has '${key}', which is not an inputId of the template`,
        pointer('input_fields', key),
      );
    }
  }
  for (const page of Object.keys(userAssignments)) {
    if (!pages.has(page)) {
      throw new DomainError(
        'unknown_page',
        `user_assignments names page '${page}', which the template does not have`,
        pointer('user_assignments', page),
      );
    }
  }
  checkValues(template, inputFields);
}

/** Why a run cannot be made from the template asked for (a create's, or a schedule's). */
export function templateRefusal(
  reason: 'unknown_template' | 'template_archived' | 'unknown_template_version',
  request: Pick<CreateRunBody, 'workflow_template_id' | 'workflow_template_version'>,
): DomainError {
  const id = request.workflow_template_id;
  switch (reason) {
    case 'unknown_template':
      // The same answer for a template of another organization as for none at all.
      return new DomainError(
        'unknown_template',
        `workflow template '${id}' not found`,
        pointer('workflow_template_id'),
      );
    case 'template_archived':
      return new DomainError(
        'template_archived',
        `workflow template '${id}' is archived: it takes no new runs (restore it first)`,
        pointer('workflow_template_id'),
      );
    case 'unknown_template_version':
      return new DomainError(
        'unknown_template_version',
        `workflow template '${id}' has no version ${request.workflow_template_version}`,
        pointer('workflow_template_version'),
      );
  }
}

const runNotFound = (id: string) =>
  new DomainError('run_not_found', `workflow run '${id}' not found`);

export class RunService {
  private readonly inserts: Batcher<NewRun, RunRecord>;

  constructor(
    private readonly templates: TemplateStore,
    private readonly runs: RunStore,
    private readonly notifier: RunNotifier,
    private readonly log: Logger,
    /** The organization's time zone (UTC when unset), kept by runs that count due times in days. */
    private readonly timeZoneOf: (organizationId: string) => Promise<string> = async () =>
      DEFAULT_TIME_ZONE,
  ) {
    this.inserts = new Batcher((batch) => this.insertAndNotify(batch), {
      maxBatch: 200,
      maxInFlight: 2,
    });
  }

  /**
   * Creates a run. `gate` is asked just before the run's INSERT is sent: when it refuses (the
   * request has already been answered as failed), the run is never written.
   */
  async create(
    principal: Principal,
    request: CreateRunBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<RunRecord> {
    const assignments = request.user_assignments ?? {};
    for (let attempt = 1; ; attempt++) {
      const found = await this.templates.forNewRun(
        principal.organizationId,
        request.workflow_template_id,
        request.workflow_template_version,
      );
      if (!found.ok) throw templateRefusal(found.reason, request);
      const { template, assumption } = found;
      checkAgainstTemplate(template, request.input_fields, assignments);
      // Read only for the templates that need it: a plain run pays no read.
      const timeZone = needsTimeZone(template)
        ? await this.timeZoneOf(principal.organizationId)
        : undefined;
      const run = newRun(
        newId(),
        principal.organizationId,
        template,
        request.input_fields,
        assignments,
        new Date(),
        principal.actor,
        request.labels,
        timeZone,
      );
      try {
        return await this.inserts.submit({ run, key: runAnswer(claim, 200, run), assumption }, () =>
          gate.beginWrite(),
        );
      } catch (err) {
        // Nothing was stored: the template changed since its head was read. Read it again.
        if (!(err instanceof TemplateHeadChanged)) throw err;
        this.templates.forget(template.id);
        if (attempt >= CREATE_ATTEMPTS) {
          throw new DomainError(
            'template_changed_concurrently',
            'the template kept changing while the run was created; nothing was done, and trying again is safe',
            pointer('workflow_template_id'),
          );
        }
      }
    }
  }

  /**
   * Stores a step completion for a worker to apply; `gate` as for create. A change made
   * meanwhile by someone else (a step marked overdue, say) is read again and the completion
   * checked again; a competing completion that won is a 409.
   */
  async completeStep(
    principal: Principal,
    request: CompleteStepBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<RunRecord> {
    return this.changeRun(principal, request.workflow_run_id, gate, async (run) => {
      const next = requestStepCompletion(
        run,
        request.input_fields ?? {},
        new Date(),
        principal.actor,
        request.step_name,
        { completedBy: request.completed_by, decision: request.decision, comment: request.comment },
      );
      if (!(await this.runs.storeRequest(run, next, runAnswer(claim, 202, next)))) return undefined;
      await this.notifier.notify(next.organizationId);
      return next;
    });
  }

  /** Cancels a pending or active run at once; a change waiting for a worker is dropped. */
  async cancel(
    principal: Principal,
    request: CancelRunBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<RunRecord> {
    return this.changeRun(principal, request.workflow_run_id, gate, async (run) => {
      const next = cancelRun(run, request.reason, new Date(), principal.actor);
      if (!(await this.runs.storeChange(run, next, runAnswer(claim, 200, next)))) return undefined;
      countChange('cancel', next.events);
      return next;
    });
  }

  /** Requests a failed run's failed change again, for a worker to apply. */
  async retry(
    principal: Principal,
    request: RetryRunBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<RunRecord> {
    return this.changeRun(principal, request.workflow_run_id, gate, async (run) => {
      const next = retryRun(run, new Date(), principal.actor);
      if (!(await this.runs.storeChange(run, next, runAnswer(claim, 202, next)))) return undefined;
      countChange('retry', next.events);
      await this.notifier.notify(next.organizationId);
      return next;
    });
  }

  /**
   * Gives the current step to a user unless someone else holds it (allow_override takes it
   * anyway). Of two racing claims, the one stored first wins; the other, read again, meets it.
   */
  claim(
    principal: Principal,
    request: ClaimStepBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<RunRecord> {
    return this.changeAssignee(principal, request.workflow_run_id, gate, claim, (run, now) =>
      claimStep(
        run,
        request.step_name,
        request.user_id,
        request.allow_override === true,
        now,
        principal.actor,
      ),
    );
  }

  /** Leaves the current step to its candidates (with user_id: only if that user holds it). */
  unclaim(
    principal: Principal,
    request: UnclaimStepBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<RunRecord> {
    return this.changeAssignee(principal, request.workflow_run_id, gate, claim, (run, now) =>
      unclaimStep(run, request.step_name, request.user_id, now, principal.actor),
    );
  }

  /** Gives the current step to a user, whoever holds it. */
  assign(
    principal: Principal,
    request: AssignStepBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<RunRecord> {
    return this.changeAssignee(principal, request.workflow_run_id, gate, claim, (run, now) =>
      assignStep(run, request.step_name, request.user_id, now, principal.actor),
    );
  }

  /**
   * A change of the current step's assignee (step-people.ts: undefined when it changes
   * nothing), made and stored at once on the run as read; read again when someone changed it
   * first. One that changes nothing stores only its key, so that the key's answer stays this
   * one whatever happens to the step later.
   */
  private changeAssignee(
    principal: Principal,
    id: string,
    gate: WriteGate,
    claim: IdempotencyClaim | undefined,
    change: (run: RunRecord, now: Date) => RunRecord | undefined,
  ): Promise<RunRecord> {
    return this.changeRun(principal, id, gate, async (run) => {
      const next = change(run, new Date());
      if (!next) {
        const key = runAnswer(claim, 200, run);
        if (key) await this.runs.storeAnswer(key);
        return run;
      }
      if (!(await this.runs.storeChange(run, next, runAnswer(claim, 200, next)))) return undefined;
      countChange('assign', next.events);
      return next;
    });
  }

  /** One run in full, with its history; 404 for another organization's run or none. */
  async get(principal: Principal, id: string): Promise<{ run: RunRecord; history: RunEvent[] }> {
    const found = await this.runs.findInFull(principal.organizationId, id);
    if (!found) throw runNotFound(id);
    return found;
  }

  /**
   * Reads the organization's run and lets `change` write its change, guarded by what was read;
   * when someone else changed the run in between (change resolves undefined), reads it again
   * and lets `change` decide again, a few times. The gate is asked before the first write.
   */
  private async changeRun(
    principal: Principal,
    id: string,
    gate: WriteGate,
    change: (run: RunRecord) => Promise<RunRecord | undefined>,
  ): Promise<RunRecord> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const run = await this.runs.findForOrganization(principal.organizationId, id);
      if (!run) throw runNotFound(id);
      if (attempt === 0) beginWrite(gate);
      const next = await change(run);
      if (next) return next;
    }
    throw new DomainError(
      'run_changed_concurrently',
      'the run kept changing while this request was handled; nothing was done, and trying again is safe',
    );
  }

  /** Waits for accepted creates still being written and notified (shutdown). */
  async drain(): Promise<void> {
    await this.inserts.idle();
    await this.notifier.idle();
  }

  private async insertAndNotify(batch: NewRun[]): Promise<Array<RunRecord | Error>> {
    let results: Array<RunRecord | Error> = batch.map((item) => item.run);
    try {
      await this.runs.insertMany(
        batch.map((item) => item.run),
        batch.flatMap((item) => (item.key ? [item.key] : [])),
        batch.map((item) => item.assumption),
      );
    } catch (err) {
      // Rows whose outcome is unknown may be stored: writing them again could store them twice.
      if (err instanceof OutcomeUnknownError || isTransientError(err) || batch.length === 1) {
        throw err;
      }
      // One bad row must not fail its neighbours: write them one by one to find it. (A key
      // another process stored first is such a row: its request gets that request's answer.)
      if (!isDuplicateKey(err) && !(err instanceof TemplateHeadChanged)) {
        this.log.warn('batch insert failed; inserting rows one by one', {
          err,
          rows: batch.length,
        });
      }
      results = await Promise.all(
        batch.map(({ run, key, assumption }) =>
          this.runs.insertMany([run], key ? [key] : [], [assumption]).then(
            () => run,
            (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
          ),
        ),
      );
    }
    const stored = results.filter((r): r is RunRecord => !(r instanceof Error));
    runsCreated.inc(stored.length);
    for (const run of stored) countChange('create', run.events);
    // Answer as soon as the runs are committed: the job is only a notification (and the
    // reconciler covers a lost one), so callers do not wait for Redis too.
    this.notifier.post(stored.map((run) => run.organizationId));
    return results;
  }
}
