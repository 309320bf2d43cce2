// Moving one run onto another version of its template: the run and both versions read, the
// plan checked (migration-plans.ts), the run moved by the state machine (state/migrate-run.ts)
// and stored in one guarded transaction with its run.migrated event and the request's key. A
// run that changed between the read and the write is a 409: the move was planned on what was
// read, so it is not planned again behind the caller's back. A dry run stores nothing but its
// key's answer.
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
import { answered, type IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import { beginWrite, type WriteGate } from '../lib/deadline.js';
import { countChange } from '../metrics/metrics.js';
import type { DueTimers } from '../runs/due-timers.js';
import type { RunRecord } from '../runs/run-record.js';
import { migrateRun, type MigrationReport } from '../runs/run-state.js';
import type { RunStore } from '../runs/run-store.js';
import { resourceJson } from '../runs/run-views.js';
import { needsTimeZone } from '../templates/definition/template-definition.js';
import type { TemplateStore } from '../templates/template-store.js';
import { loadPlan } from './migration-plans.js';
import type { MigrateRunBody } from './migration-schemas.js';

/** A migration's answer as JSON text: the report, and the run (written as the run endpoints write it). */
export function migrationJson(dryRun: boolean, report: MigrationReport, run: RunRecord): string {
  return `{"dryRun":${dryRun},"migration":${JSON.stringify(report)},"run":${resourceJson(run)}}`;
}

export class MigrationService {
  constructor(
    private readonly templates: TemplateStore,
    private readonly runs: RunStore,
    /** The organization's time zone, for a target version that counts due times in days. */
    private readonly timeZoneOf: (organizationId: string) => Promise<string>,
    /** The moved run's step may owe the clock at another time: its timer (best effort). */
    private readonly timers: DueTimers | undefined,
  ) {}

  async migrate(
    principal: Principal,
    body: MigrateRunBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<string> {
    const run = await this.runs.findForOrganization(principal.organizationId, body.workflow_run_id);
    if (!run) {
      throw new DomainError('run_not_found', `workflow run '${body.workflow_run_id}' not found`);
    }
    const plan = await loadPlan(this.templates, {
      templateId: run.templateId,
      fromVersion: run.templateVersion,
      toVersion: body.to_version,
      pageMap: body.page_map,
      dropIncompatible: body.drop_incompatible,
    });
    const timeZone =
      needsTimeZone(plan.to) && !run.document.time_zone
        ? await this.timeZoneOf(principal.organizationId)
        : undefined;
    const { after, report } = migrateRun(run, plan, new Date(), principal.actor, timeZone);
    // A dry run's answer shows the run as the move would leave it.
    const dryRun = body.dry_run === true;
    const json = migrationJson(dryRun, report, after);
    const key = answered(claim, 200, () => json, run.id);
    beginWrite(gate);
    if (dryRun) {
      if (key) await this.runs.storeAnswer(key);
      return json;
    }
    if (!(await this.runs.storeChange(run, after, key))) {
      throw new DomainError(
        'run_changed_concurrently',
        'the run changed while it was being moved; nothing was done: read it, and move it again',
      );
    }
    countChange('migrate', after.events);
    await this.timers?.schedule([after]);
    return json;
  }
}
