// Idempotency-Keys in MySQL (the IETF httpapi Idempotency-Key draft, as Stripe practises it).
// A key is stored in the same transaction as the effect of its request, with the answer the
// client was given, so no crash can leave a key without its effect or an effect without its
// key; a later request with the key gets that answer again. Keys expire by themselves.
import { createHash } from 'node:crypto';
import type { Db, TxQuery } from '../db.js';
import { sqlLiteral } from '../lib/sql-literal.js';

/** What a request claims by sending a key; stored with the answer if its effect is. */
export interface IdempotencyClaim {
  organizationId: string;
  key: string;
  /** The operation it was sent to (the route's operationId). */
  endpoint: string;
  /** SHA-256 of the request body as parsed: another body with the same key is refused. */
  requestHash: string;
  expiresAt: Date;
}

/** A claim with the answer its request got, ready to be stored with the effect. */
export interface IdempotencyRecord extends IdempotencyClaim {
  status: number;
  /** The answer's JSON text. */
  response: string;
  /** The run the answer shows, if any: deleting the run deletes the answer (it holds inputs). */
  runId?: string;
}

export interface StoredAnswer {
  endpoint: string;
  requestHash: string;
  status: number;
  response: string;
}

/**
 * The key a request claimed, with the answer it gets: stored with the request's effect. The
 * answer's JSON is made only when there is a key to store it with.
 */
export function answered(
  claim: IdempotencyClaim | undefined,
  status: number,
  response: () => string,
  runId?: string,
): IdempotencyRecord | undefined {
  return claim ? { ...claim, status, response: response(), runId } : undefined;
}

export function requestHash(endpoint: string, body: unknown): string {
  return createHash('sha256')
    .update(endpoint)
    .update('\n')
    .update(JSON.stringify(body ?? null))
    .digest('hex');
}

/** The INSERT that stores keys inside the transaction of their effect (none: undefined). */
export function insertIdempotencySql(
  records: readonly IdempotencyRecord[],
  now = new Date(),
): string | undefined {
  if (records.length === 0) return undefined;
  const values = records.map(
    (r) =>
      `(${[r.organizationId, r.key, r.endpoint, r.requestHash].map(sqlLiteral).join(', ')}, ${r.status}, ${sqlLiteral(r.response)}, ${sqlLiteral(now)}, ${sqlLiteral(r.expiresAt)}, ${r.runId === undefined ? 'NULL' : sqlLiteral(r.runId)})`,
  );
  return (
    'INSERT INTO idempotency_keys (`organization_id`, `idem_key`, `endpoint`, `request_hash`, `status_code`, `response`, `created_at`, `expires_at`, `run_id`) VALUES ' +
    values.join(', ')
  );
}

/** Stores keys inside the transaction of their effect. */
export async function insertIdempotencyRecords(
  query: TxQuery,
  records: readonly IdempotencyRecord[],
  now = new Date(),
): Promise<void> {
  const sql = insertIdempotencySql(records, now);
  if (sql) await query(sql);
}

/** True for the error of storing a key that is already stored (by a request that won). */
export function isDuplicateKey(err: unknown): boolean {
  const e = err as { code?: unknown; sqlMessage?: unknown } | null;
  return (
    e?.code === 'ER_DUP_ENTRY' &&
    typeof e.sqlMessage === 'string' &&
    e.sqlMessage.includes('idempotency_keys_org_key')
  );
}

export class IdempotencyStore {
  constructor(private readonly db: Db) {}

  /**
   * The stored answer for a key, if it has not expired. An expired key is deleted here, so its
   * place is free for the request that brought it again.
   */
  async find(
    organizationId: string,
    key: string,
    now = new Date(),
  ): Promise<StoredAnswer | undefined> {
    const row = await this.db('idempotency_keys')
      .select('endpoint', 'request_hash', 'status_code', 'response', 'expires_at')
      .where({ organization_id: organizationId, idem_key: key })
      .first();
    if (!row) return undefined;
    if ((row.expires_at as Date).getTime() <= now.getTime()) {
      await this.db('idempotency_keys')
        .where({ organization_id: organizationId, idem_key: key })
        .andWhere('expires_at', '<=', now)
        .delete();
      return undefined;
    }
    return {
      endpoint: row.endpoint as string,
      requestHash: row.request_hash as string,
      status: Number(row.status_code),
      response: row.response as string,
    };
  }

  /** Deletes up to `limit` expired keys; returns how many (the reconciler calls it). */
  async deleteExpired(now = new Date(), limit = 1000): Promise<number> {
    return this.db('idempotency_keys').where('expires_at', '<=', now).limit(limit).delete();
  }
}
