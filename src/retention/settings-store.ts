// An organization's settings in MySQL (columns of organizations): for now how long it keeps its
// finished runs. A change is written with its audit entry and its Idempotency-Key in one
// transaction; a change to the value it already has writes neither entry nor change.
import { writeTransaction, type Db } from '../db.js';
import type { Actor } from '../audit/actor.js';
import { insertAuditEntries } from '../audit/audit-store.js';
import { insertIdempotencySql, type IdempotencyRecord } from '../idempotency/idempotency-keys.js';

export interface OrganizationSettings {
  /** The organization's own retention of finished runs, in days; undefined: the default. */
  runRetentionDays: number | undefined;
}

const fromColumn = (value: number | string | null | undefined) =>
  value === null || value === undefined ? undefined : Number(value);

export class SettingsStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
  ) {}

  async read(organizationId: string): Promise<OrganizationSettings> {
    const row = await this.db('organizations')
      .select('run_retention_days')
      .where({ id: organizationId })
      .first<{ run_retention_days: number | null } | undefined>();
    return { runRetentionDays: fromColumn(row?.run_retention_days) };
  }

  /**
   * Sets the organization's retention (undefined: back to the default), with its audit entry,
   * unless it already is that; stores the request's key either way. Returns the settings now.
   */
  async update(
    organizationId: string,
    runRetentionDays: number | undefined,
    actor: Actor,
    now: Date,
    key: (settings: OrganizationSettings) => IdempotencyRecord | undefined,
  ): Promise<OrganizationSettings> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const [row] = (await query(
        'SELECT run_retention_days FROM organizations WHERE id = ? FOR UPDATE',
        [organizationId],
      )) as unknown as Array<{ run_retention_days: number | null }>;
      const before = fromColumn(row?.run_retention_days);
      if (row && before !== runRetentionDays) {
        const changed = await query(
          'UPDATE organizations SET run_retention_days = ? WHERE id = ?',
          [runRetentionDays ?? null, organizationId],
        );
        if (changed.affectedRows !== 1) throw new Error('organization changed under its lock');
        await insertAuditEntries(query, [
          {
            organizationId,
            type: 'organization.settings_updated',
            actor,
            targetId: organizationId,
            data: runRetentionDays === undefined ? {} : { runRetentionDays },
            at: now,
          },
        ]);
      }
      const settings = { runRetentionDays };
      const record = key(settings);
      const keySql = record && insertIdempotencySql([record], now);
      if (keySql) await query(keySql);
      return settings;
    });
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
}
