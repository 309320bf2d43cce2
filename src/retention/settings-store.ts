// An organization's settings in MySQL (columns of organizations): how long it keeps its finished
// runs, and the time zone its due times count days in. A change is written with its audit entry
// and its Idempotency-Key in one transaction; a change to the values it already has writes
// neither entry nor change.
import { writeTransaction, type Db } from '../db.js';
import type { Actor } from '../audit/actor.js';
import { insertAuditEntries } from '../audit/audit-store.js';
import { insertIdempotencySql, type IdempotencyRecord } from '../idempotency/idempotency-keys.js';
import { Batcher } from '../lib/batcher.js';
import { DEFAULT_TIME_ZONE } from '../templates/definition/due-dates.js';

export interface OrganizationSettings {
  /** The organization's own retention of finished runs, in days; undefined: the default. */
  runRetentionDays: number | undefined;
  /** The organization's IANA time zone; undefined: the default, UTC. */
  timeZone: string | undefined;
}

/**
 * A change of the settings: each one given is set (null: back to its default), each one left
 * out stays as it is.
 */
export interface SettingsChange {
  runRetentionDays?: number | null;
  timeZone?: string | null;
}

interface SettingsRow {
  run_retention_days: number | string | null;
  time_zone: string | null;
}

const fromColumn = (value: number | string | null | undefined) =>
  value === null || value === undefined ? undefined : Number(value);

const settingsOf = (row: SettingsRow | undefined): OrganizationSettings => ({
  runRetentionDays: fromColumn(row?.run_retention_days),
  timeZone: row?.time_zone ?? undefined,
});

/** How long a process uses an organization's time zone as read before reading it again. */
export const TIME_ZONE_CACHE_MS = 10_000;
const ZONE_CACHE_LIMIT = 10_000;

export class SettingsStore {
  private readonly timeZones: Batcher<string, string>;
  private readonly zoneCache = new Map<string, { zone: string; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
  ) {
    // Creates of runs that keep a zone ask when their cached one is old: concurrent asks share
    // one SELECT rather than one each.
    this.timeZones = new Batcher((ids) => this.readTimeZones(ids), {
      maxBatch: 500,
      maxInFlight: 2,
    });
  }

  async read(organizationId: string): Promise<OrganizationSettings> {
    const row = await this.db('organizations')
      .select('run_retention_days', 'time_zone')
      .where({ id: organizationId })
      .first<SettingsRow | undefined>();
    return settingsOf(row);
  }

  /** The organization's time zone, read now: UTC when unset or unknown. */
  timeZone(organizationId: string): Promise<string> {
    return this.timeZones.submit(organizationId);
  }

  /**
   * The organization's time zone for its new runs' due times, as read at most
   * TIME_ZONE_CACHE_MS ago: a create of a run that counts days needs it, and reading it for
   * each such create would make every create of such a template pay a read. A change made
   * through this process is seen at once; one made through another API process within that
   * time (docs/templates.md says so).
   */
  async cachedTimeZone(organizationId: string): Promise<string> {
    const now = Date.now();
    const hit = this.zoneCache.get(organizationId);
    if (hit && hit.until > now) return hit.zone;
    const zone = await this.timeZones.submit(organizationId);
    if (this.zoneCache.size >= ZONE_CACHE_LIMIT) this.zoneCache.clear();
    this.zoneCache.set(organizationId, { zone, until: now + TIME_ZONE_CACHE_MS });
    return zone;
  }

  /**
   * Makes the change, with its audit entry (the settings as they then are), unless the settings
   * already are so; stores the request's key either way. Returns the settings now.
   */
  async update(
    organizationId: string,
    change: SettingsChange,
    actor: Actor,
    now: Date,
    key: (settings: OrganizationSettings) => IdempotencyRecord | undefined,
  ): Promise<OrganizationSettings> {
    // This process's new runs use a new zone at once (others within TIME_ZONE_CACHE_MS): the
    // entry is dropped once the change is committed, so a read made meanwhile is not kept.
    const committed = await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const [row] = (await query(
        'SELECT run_retention_days, time_zone FROM organizations WHERE id = ? FOR UPDATE',
        [organizationId],
      )) as unknown as SettingsRow[];
      const before = settingsOf(row);
      const after: OrganizationSettings = {
        runRetentionDays:
          change.runRetentionDays === undefined
            ? before.runRetentionDays
            : (change.runRetentionDays ?? undefined),
        timeZone: change.timeZone === undefined ? before.timeZone : (change.timeZone ?? undefined),
      };
      if (
        row &&
        (before.runRetentionDays !== after.runRetentionDays || before.timeZone !== after.timeZone)
      ) {
        const changed = await query(
          'UPDATE organizations SET run_retention_days = ?, time_zone = ? WHERE id = ?',
          [after.runRetentionDays ?? null, after.timeZone ?? null, organizationId],
        );
        if (changed.affectedRows !== 1) throw new Error('organization changed under its lock');
        await insertAuditEntries(query, [
          {
            organizationId,
            type: 'organization.settings_updated',
            actor,
            targetId: organizationId,
            // A setting left out is at its default.
            data: {
              ...(after.runRetentionDays !== undefined
                ? { runRetentionDays: after.runRetentionDays }
                : {}),
              ...(after.timeZone !== undefined ? { timeZone: after.timeZone } : {}),
            },
            at: now,
          },
        ]);
      }
      const record = key(after);
      const keySql = record && insertIdempotencySql([record], now);
      if (keySql) await query(keySql);
      return after;
    });
    this.zoneCache.delete(organizationId);
    return committed;
  }

  /**
   * Every organization whose finished runs expire, with its retention in days: its own, or
   * `defaultDays` (undefined: only those that set their own).
   */
  async retentions(
    defaultDays: number | undefined,
  ): Promise<Array<{ organizationId: string; days: number }>> {
    const query = this.db('organizations').select('id', 'run_retention_days');
    if (defaultDays === undefined) query.whereNotNull('run_retention_days');
    const rows = (await query.orderBy('id')) as Array<{
      id: string;
      run_retention_days: number | null;
    }>;
    return rows.flatMap((row) => {
      const days = fromColumn(row.run_retention_days) ?? defaultDays;
      return days === undefined ? [] : [{ organizationId: row.id, days }];
    });
  }

  /** The time zones of the organizations asked for, in one query; one entry per id, in order. */
  private async readTimeZones(ids: string[]): Promise<string[]> {
    const rows = (await this.db('organizations')
      .select('id', 'time_zone')
      .whereIn('id', [...new Set(ids)])) as Array<{ id: string; time_zone: string | null }>;
    const byId = new Map(rows.map((row) => [row.id, row.time_zone]));
    return ids.map((id) => byId.get(id) ?? DEFAULT_TIME_ZONE);
  }
}
