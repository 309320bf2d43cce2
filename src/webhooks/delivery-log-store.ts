// The delivery log an organization reads and steers: a page of its deliveries with their
// attempts, and a redelivery (a delivery owed again, now). The attempts themselves are the
// DeliveryStore's.
import { writeTransaction, type Db } from '../db.js';
import { onPool, type Reader } from '../db-replicas.js';
import {
  insertIdempotencyRecords,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import type { AttemptRow, DeliveryRow, DeliveryStatus } from './delivery-rows.js';

export interface DeliveryFilter {
  endpointId?: string;
  status?: DeliveryStatus;
  runId?: string;
}

export class DeliveryLogStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
    /** Where the API's reads of the log go (src/db-replicas.ts). */
    private readonly read: Reader = onPool(db),
  ) {}

  /** A page of the organization's delivery log, newest first, with each delivery's attempts. */
  async list(
    organizationId: string,
    filter: DeliveryFilter,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<{ delivery: DeliveryRow; attempts: AttemptRow[] }>> {
    return this.read((db) => this.readLog(db, organizationId, filter, limit, beforeSeq));
  }

  private async readLog(
    db: Db,
    organizationId: string,
    filter: DeliveryFilter,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<{ delivery: DeliveryRow; attempts: AttemptRow[] }>> {
    const q = db<DeliveryRow>('webhook_deliveries').where({ organization_id: organizationId });
    if (filter.endpointId !== undefined) q.andWhere({ endpoint_id: filter.endpointId });
    if (filter.runId !== undefined) q.andWhere({ run_id: filter.runId });
    if (filter.status !== undefined) q.andWhere({ status: filter.status });
    if (beforeSeq !== null) q.andWhere('seq', '<', beforeSeq);
    const deliveries = await q.orderBy('seq', 'desc').limit(limit);
    if (deliveries.length === 0) return [];
    const attempts = await db<AttemptRow>('webhook_attempts')
      .whereIn(
        'delivery_id',
        deliveries.map((d) => d.id),
      )
      .orderBy('id', 'asc');
    const byDelivery = new Map<string, AttemptRow[]>();
    for (const attempt of attempts) {
      byDelivery.set(attempt.delivery_id, [
        ...(byDelivery.get(attempt.delivery_id) ?? []),
        attempt,
      ]);
    }
    return deliveries.map((delivery) => ({
      delivery,
      attempts: byDelivery.get(delivery.id) ?? [],
    }));
  }

  /**
   * Owes a delivery again, now: a delivered or failed one starts a new round of attempts; a
   * pending one is brought forward. 'not_found' outside the organization; 'disabled' when its
   * endpoint is.
   */
  async redeliver(
    organizationId: string,
    id: string,
    now: Date,
    key?: (delivery: DeliveryRow, attempts: AttemptRow[]) => IdempotencyRecord | undefined,
  ): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] } | 'not_found' | 'disabled'> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const rows = (await query(
        `SELECT d.*, e.enabled AS endpoint_enabled FROM webhook_deliveries d
           JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.id = ? AND d.organization_id = ? FOR UPDATE`,
        [id, organizationId],
      )) as unknown as Array<DeliveryRow & { endpoint_enabled: number }>;
      const row = rows[0];
      if (!row) return 'not_found';
      if (!row.endpoint_enabled) return 'disabled';
      const current: DeliveryRow = { ...row };
      delete (current as Partial<typeof row>).endpoint_enabled;
      const delivery: DeliveryRow =
        current.status === 'pending'
          ? { ...current, next_attempt_at: now }
          : {
              ...current,
              status: 'pending',
              round: Number(current.round) + 1,
              attempts: 0,
              next_attempt_at: now,
              delivered_at: null,
            };
      await query(
        `UPDATE webhook_deliveries
            SET status = ?, round = ?, attempts = ?, next_attempt_at = ?, delivered_at = ?
          WHERE id = ?`,
        [delivery.status, delivery.round, delivery.attempts, now, delivery.delivered_at, id],
      );
      const attempts = (await query(
        'SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY id',
        [id],
      )) as unknown as Array<AttemptRow>;
      const record = key?.(delivery, attempts);
      if (record) await insertIdempotencyRecords(query, [record]);
      return { delivery, attempts };
    });
  }
}
