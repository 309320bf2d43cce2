// Webhook endpoints in MySQL: what an organization subscribed, where to, with which secret(s),
// and whether it is still enabled (its health: failing since when, disabled why). Every read
// and write a client can cause is scoped to the organization; the health writes join the
// transaction that records a delivery's attempt.
import type { NewAuditEntry } from '../audit/audit-events.js';
import { insertAuditEntries } from '../audit/audit-store.js';
import { inlineSql, writeTransaction, type Db, type TxQuery } from '../db.js';
import { onPool, type Reader } from '../db-replicas.js';
import {
  insertIdempotencyRecords,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import type { RunEventType } from '../runs/run-events.js';

export interface EndpointRow {
  id: string;
  organization_id: string;
  url: string;
  description: string | null;
  event_types: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  enabled: number | boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  from_event_id: number | string;
}

export interface Endpoint {
  id: string;
  organizationId: string;
  url: string;
  description: string | null;
  /** undefined: every type. */
  eventTypes: RunEventType[] | undefined;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: Date | null;
  failingSince: Date | null;
  createdAt: Date;
  fromEventId: number;
}

export function fromEndpointRow(row: EndpointRow): Endpoint {
  return {
    id: row.id,
    organizationId: row.organization_id,
    url: row.url,
    description: row.description,
    eventTypes:
      row.event_types === null ? undefined : (JSON.parse(row.event_types) as RunEventType[]),
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    enabled: Boolean(row.enabled),
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    fromEventId: Number(row.from_event_id),
  };
}

/** The secrets that sign a delivery made at `now`: the current one, and a rotated-out one. */
export function signingSecrets(
  endpoint: Pick<Endpoint, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>,
  now: Date,
): string[] {
  const secrets = [endpoint.secret];
  if (
    endpoint.previousSecret &&
    endpoint.previousSecretExpiresAt &&
    endpoint.previousSecretExpiresAt > now
  ) {
    secrets.push(endpoint.previousSecret);
  }
  return secrets;
}

/** Whether an endpoint subscribed to a type of event. */
export function subscribes(endpoint: Pick<Endpoint, 'eventTypes'>, type: RunEventType): boolean {
  return endpoint.eventTypes === undefined || endpoint.eventTypes.includes(type);
}

export class EndpointStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
    /** Where the API's reads of the endpoints list go (src/db-replicas.ts). */
    private readonly read: Reader = onPool(db),
  ) {}

  /**
   * Adds an endpoint, owed the events committed from now on; refuses (returns undefined) when
   * the organization has `max` already. The count and the insert are one transaction, with
   * the organization's row locked, so two concurrent creates cannot both pass the limit. Its
   * audit entry and the request's Idempotency-Key, if any, are stored in the same transaction.
   */
  async insert(
    endpoint: Omit<Endpoint, 'fromEventId'>,
    max: number,
    audit: NewAuditEntry,
    key?: IdempotencyRecord,
  ): Promise<Endpoint | undefined> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      await query('SELECT id FROM organizations WHERE id = ? FOR UPDATE', [
        endpoint.organizationId,
      ]);
      const [count] = (await query(
        'SELECT COUNT(*) AS n FROM webhook_endpoints WHERE organization_id = ?',
        [endpoint.organizationId],
      )) as unknown as Array<{ n: number | string }>;
      if (Number(count?.n ?? 0) >= max) return undefined;
      const [newest] = (await query(
        'SELECT COALESCE(MAX(id), 0) AS last FROM run_events',
      )) as unknown as Array<{ last: number | string }>;
      const stored: Endpoint = { ...endpoint, fromEventId: Number(newest?.last ?? 0) };
      await query(
        `INSERT INTO webhook_endpoints
           (id, organization_id, url, description, event_types, secret, enabled, created_at, from_event_id)
         VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)`,
        [
          stored.id,
          stored.organizationId,
          stored.url,
          stored.description,
          stored.eventTypes ? JSON.stringify(stored.eventTypes) : null,
          stored.secret,
          stored.createdAt,
          stored.fromEventId,
        ],
      );
      await insertAuditEntries(query, [audit]);
      if (key) await insertIdempotencyRecords(query, [key]);
      return stored;
    });
  }

  async list(organizationId: string): Promise<Endpoint[]> {
    const rows = await this.read((db) =>
      db<EndpointRow>('webhook_endpoints')
        .where({ organization_id: organizationId })
        .orderBy([
          { column: 'created_at', order: 'asc' },
          { column: 'id', order: 'asc' },
        ]),
    );
    return rows.map(fromEndpointRow);
  }

  async find(organizationId: string, id: string): Promise<Endpoint | undefined> {
    const row = await this.db<EndpointRow>('webhook_endpoints')
      .where({ organization_id: organizationId, id })
      .first();
    return row ? fromEndpointRow(row) : undefined;
  }

  /**
   * Removes an endpoint with its deliveries and their attempts, in one transaction with its
   * audit entry (made by `audit` from the endpoint removed): nothing is owed to it afterwards.
   * False when there was none in this organization.
   */
  async delete(
    organizationId: string,
    id: string,
    audit: (endpoint: Endpoint) => NewAuditEntry,
    key?: IdempotencyRecord,
  ): Promise<boolean> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const [row] = (await query(
        'SELECT * FROM webhook_endpoints WHERE organization_id = ? AND id = ? FOR UPDATE',
        [organizationId, id],
      )) as unknown as Array<EndpointRow>;
      if (!row) return false;
      await query('DELETE FROM webhook_endpoints WHERE id = ?', [id]);
      await query(
        `DELETE a FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.endpoint_id = ?`,
        [id],
      );
      await query('DELETE FROM webhook_deliveries WHERE endpoint_id = ?', [id]);
      await insertAuditEntries(query, [audit(fromEndpointRow(row))]);
      if (key) await insertIdempotencyRecords(query, [key]);
      return true;
    });
  }

  /**
   * Makes `secret` the signing secret; the one it replaces keeps signing beside it until
   * `previousUntil`. Undefined when there is no such endpoint in this organization. Its audit
   * entry is made by `audit`, and the answer (it holds the new secret) by `key`, both from the
   * endpoint as stored and in the same transaction, so the Idempotency-Key stored with it
   * replays exactly that.
   */
  async rotateSecret(
    organizationId: string,
    id: string,
    secret: string,
    previousUntil: Date,
    audit: (endpoint: Endpoint) => NewAuditEntry,
    key?: (endpoint: Endpoint) => IdempotencyRecord | undefined,
  ): Promise<Endpoint | undefined> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const [row] = (await query(
        'SELECT * FROM webhook_endpoints WHERE organization_id = ? AND id = ? FOR UPDATE',
        [organizationId, id],
      )) as unknown as Array<EndpointRow>;
      if (!row) return undefined;
      await query(
        `UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_secret_expires_at = ?
          WHERE id = ?`,
        [secret, row.secret, previousUntil, id],
      );
      const rotated: Endpoint = {
        ...fromEndpointRow(row),
        secret,
        previousSecret: row.secret,
        previousSecretExpiresAt: previousUntil,
      };
      await insertAuditEntries(query, [audit(rotated)]);
      const record = key?.(rotated);
      if (record) await insertIdempotencyRecords(query, [record]);
      return rotated;
    });
  }
}

// ---- health: written inside the transaction that records an attempt (delivery-store.ts) ----

/**
 * Notes that an attempt to the endpoint failed at `at` (unless it was failing already); the
 * time since when it has been failing, or null when it is disabled.
 */
export async function markFailing(query: TxQuery, id: string, at: Date): Promise<Date | null> {
  await query(
    'UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ?) WHERE id = ?',
    [at, id],
  );
  const rows = (await query(
    'SELECT failing_since FROM webhook_endpoints WHERE id = ? AND enabled = 1',
    [id],
  )) as unknown as Array<{ failing_since: Date | null }>;
  return rows[0]?.failing_since ?? null;
}

/** The statement that notes a delivered attempt: the endpoint is failing no more. */
export function clearFailingSql(id: string): string {
  return inlineSql(
    'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL',
    [id],
  );
}

/** Disables an endpoint, with the reason; what is owed to it is failed by the caller. */
export async function disableEndpoint(
  query: TxQuery,
  id: string,
  reason: string,
  at: Date,
): Promise<void> {
  await query(
    'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, disabled_at = ? WHERE id = ? AND enabled = 1',
    [reason.slice(0, 255), at, id],
  );
}
