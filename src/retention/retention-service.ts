// Deleting a run on request, and the organization's settings, behind thin routes. Every call is
// scoped to the caller's organization: another organization's run is not found.
import type { Principal } from '../auth/principal.js';
import { DomainError, pointer } from '../errors.js';
import { answered, type IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import { beginWrite, type WriteGate } from '../lib/deadline.js';
import { countChange } from '../metrics/metrics.js';
import { DEFAULT_TIME_ZONE, isTimeZone } from '../templates/definition/due-dates.js';
import type { RunDeletionStore } from './deletion-store.js';
import type {
  DeleteRunBody,
  OrganizationSettingsView,
  UpdateSettingsBody,
} from './retention-schemas.js';
import {
  type OrganizationSettings,
  type SettingsChange,
  type SettingsStore,
} from './settings-store.js';

export class RetentionService {
  constructor(
    private readonly deletions: RunDeletionStore,
    private readonly settings: SettingsStore,
    /** The operator's default retention in days (RUN_RETENTION_DAYS); undefined: forever. */
    private readonly defaultDays: number | undefined,
  ) {}

  /**
   * Deletes the organization's run with its history, deliveries and Idempotency-Key answers;
   * its run.deleted event goes out to the webhooks. 404 for another organization's run or none.
   */
  async deleteRun(
    principal: Principal,
    request: DeleteRunBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<{ id: string; deleted: true }> {
    const id = request.workflow_run_id;
    const answer = { id, deleted: true as const };
    beginWrite(gate);
    const deleted = await this.deletions.deleteRun(
      principal.organizationId,
      id,
      principal.actor,
      new Date(),
      // The answer names the run and nothing else: it outlives the run (no runId to follow).
      () => answered(claim, 200, () => JSON.stringify(answer)),
    );
    if (!deleted) throw new DomainError('run_not_found', `workflow run '${id}' not found`);
    countChange('delete', [{ type: 'run.deleted' }]);
    return answer;
  }

  async getSettings(principal: Principal): Promise<OrganizationSettingsView> {
    return this.view(await this.settings.read(principal.organizationId));
  }

  async updateSettings(
    principal: Principal,
    request: UpdateSettingsBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<OrganizationSettingsView> {
    const change = settingsChange(request);
    beginWrite(gate);
    const settings = await this.settings.update(
      principal.organizationId,
      change,
      principal.actor,
      new Date(),
      (now) => answered(claim, 200, () => JSON.stringify(this.view(now))),
    );
    return this.view(settings);
  }

  /** The settings as answered: the organization's own, the default, and what applies. */
  private view(settings: OrganizationSettings): OrganizationSettingsView {
    const own = settings.runRetentionDays;
    const effective = own ?? this.defaultDays;
    return {
      timeZone: settings.timeZone ?? DEFAULT_TIME_ZONE,
      ...(own !== undefined ? { runRetentionDays: own } : {}),
      ...(this.defaultDays !== undefined ? { defaultRunRetentionDays: this.defaultDays } : {}),
      ...(effective !== undefined ? { effectiveRunRetentionDays: effective } : {}),
    };
  }
}

/**
 * The change a request asks for: each setting it names, "default" as null (back to the
 * default). The default time zone by its name is the default too, so that naming it changes
 * nothing where none was set.
 */
function settingsChange(request: UpdateSettingsBody): SettingsChange {
  const change: SettingsChange = {};
  const days = request.run_retention_days;
  if (days !== undefined) change.runRetentionDays = days === 'default' ? null : days;
  const zone = request.time_zone;
  if (zone !== undefined) {
    if (zone !== 'default' && !isTimeZone(zone)) {
      throw new DomainError(
        'invalid_time_zone',
        `time_zone '${zone}' is not an IANA time zone this service knows`,
        pointer('time_zone'),
      );
    }
    change.timeZone = zone === 'default' || zone === DEFAULT_TIME_ZONE ? null : zone;
  }
  return change;
}
