// API keys in MySQL, with a short-lived cache in front of the lookup. Lookups go by the hash of
// the presented key through a unique index, so the time taken does not depend on how much of a
// stored key the caller guessed. The cache holds misses too, so a flood of bad keys does not
// reach MySQL; its TTL bounds how long a revoked key keeps working in a running API (a change
// made through this process evicts the key from its own cache at once).
//
// The changes (create, revoke, roll, the record of an expiry) are each one transaction holding
// the key row, its audit entries and the request's Idempotency-Key, so none is half-written.
// Only a key's SHA-256 and a short prefix are stored, never the key.
import { ADMIN_CLI, actorJson, actorOf, type Actor } from '../audit/actor.js';
import type { NewAuditEntry } from '../audit/audit-events.js';
import { insertAuditEntries } from '../audit/audit-store.js';
import { writeTransaction, type Db, type TxQuery } from '../db.js';
import { onPool, type Reader } from '../db-replicas.js';
import {
  insertIdempotencyRecords,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import { newId } from '../lib/ids.js';
import { generateApiKey, hashApiKey, keyPrefix } from './api-keys.js';
import { keyCreated, keyExpired, keyRevoked } from './key-audit.js';
import type { KeyUsage } from './key-usage.js';
import type { Principal } from './principal.js';
import { ALL_SCOPES, parseScopes, type Scope } from './scopes.js';

/** A stored key as it is shown (never with its hash). */
export interface ApiKeyRow {
  seq: number | string;
  id: string;
  organization_id: string;
  name: string | null;
  key_prefix: string;
  scopes: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  replaced_by: string | null;
}

const ROW_COLUMNS =
  'seq, id, organization_id, name, key_prefix, scopes, created_at, expires_at, last_used_at, revoked_at, replaced_by';

/** A key about to be stored, with its secret: shown once in the answer, never stored. */
export interface NewApiKey {
  id: string;
  organizationId: string;
  name: string | null;
  secret: string;
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  createdBy: Actor;
}

export function newApiKey(fields: {
  organizationId: string;
  name: string | null;
  scopes: readonly Scope[];
  expiresAt: Date | null;
  createdBy: Actor;
  at: Date;
}): NewApiKey {
  const secret = generateApiKey();
  // In the order of SCOPES, once each, whatever order they were asked in.
  const scopes = ALL_SCOPES.filter((s) => fields.scopes.includes(s));
  return {
    id: newId(),
    organizationId: fields.organizationId,
    name: fields.name,
    secret,
    prefix: keyPrefix(secret),
    scopes,
    createdAt: fields.at,
    expiresAt: fields.expiresAt,
    createdBy: fields.createdBy,
  };
}

/** The row a new key becomes, as the list shows it. */
export function rowOf(key: NewApiKey, seq: number): ApiKeyRow {
  return {
    seq,
    id: key.id,
    organization_id: key.organizationId,
    name: key.name,
    key_prefix: key.prefix,
    scopes: JSON.stringify(key.scopes),
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    last_used_at: null,
    revoked_at: null,
    replaced_by: null,
  };
}

/** What a change writes beside the key, in its transaction. */
export interface KeyChangeRecords {
  audit: NewAuditEntry[];
  idempotency?: IdempotencyRecord;
}

async function writeRecords(query: TxQuery, records: KeyChangeRecords): Promise<void> {
  await insertAuditEntries(query, records.audit);
  if (records.idempotency) await insertIdempotencyRecords(query, [records.idempotency]);
}

async function insertKey(query: TxQuery, key: NewApiKey): Promise<number> {
  const result = await query(
    `INSERT INTO api_keys
       (id, organization_id, name, key_hash, key_prefix, created_at, revoked_at, scopes, expires_at, created_by)
     VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
    [
      key.id,
      key.organizationId,
      key.name,
      hashApiKey(key.secret),
      key.prefix,
      key.createdAt,
      JSON.stringify(key.scopes),
      key.expiresAt,
      actorJson(key.createdBy),
    ],
  );
  return Number(result.insertId);
}

/** The key row, locked for the change; undefined when there is none (in that organization). */
async function lockKey(
  query: TxQuery,
  organizationId: string | undefined,
  id: string,
): Promise<ApiKeyRow | undefined> {
  const rows = (await query(
    `SELECT ${ROW_COLUMNS} FROM api_keys WHERE id = ?${organizationId === undefined ? '' : ' AND organization_id = ?'} FOR UPDATE`,
    organizationId === undefined ? [id] : [id, organizationId],
  )) as unknown as ApiKeyRow[];
  return rows[0];
}

/** A roll as the service decided it, from the old key as locked. */
export interface RollPlan {
  key: NewApiKey;
  /** Until when the old key keeps working. */
  oldExpiresAt: Date;
  records: KeyChangeRecords;
}

interface CacheEntry {
  principal: Principal | null;
  expiresAt: number;
}

const CACHE_LIMIT = 50_000;

export interface KeyStoreOptions {
  /** A lookup not answered in this time fails (a 503): the database is hanging. */
  lookupTimeoutMs?: number;
  writeTimeoutMs?: number;
  /** Where the API process notes each accepted use (lastUsedAt); none elsewhere. */
  usage?: KeyUsage;
  /** Where the API's reads of the keys list go (src/db-replicas.ts). */
  reader?: Reader;
}

export class KeyStore {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lookupTimeoutMs: number;
  private readonly writeTimeoutMs: number;
  private readonly usage: KeyUsage | undefined;
  private readonly read: Reader;

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
    options: KeyStoreOptions = {},
  ) {
    this.lookupTimeoutMs = options.lookupTimeoutMs ?? 10_000;
    this.writeTimeoutMs = options.writeTimeoutMs ?? 5000;
    this.usage = options.usage;
    this.read = options.reader ?? onPool(db);
  }

  async authenticate(key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.principal;
    const row = (await this.db('api_keys')
      .select('id', 'organization_id', 'name', 'scopes', 'expires_at')
      .where({ key_hash: hash })
      .whereNull('revoked_at')
      .first()
      .timeout(this.lookupTimeoutMs)) as
      | {
          id: string;
          organization_id: string;
          name: string | null;
          scopes: string;
          expires_at: Date | null;
        }
      | undefined;
    const principal: Principal | null = row
      ? {
          organizationId: row.organization_id,
          keyId: row.id,
          keyName: row.name,
          scopes: new Set(parseScopes(row.scopes)),
          expiresAt: row.expires_at,
          actor: actorOf({ keyId: row.id, keyName: row.name }),
        }
      : null;
    if (this.ttlMs > 0) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      // `now` was read before the lookup: an entry never outlives a change committed after it
      // by more than the TTL.
      this.cache.set(hash, { principal, expiresAt: now + this.ttlMs });
    }
    return principal;
  }

  /** Notes that a request was accepted with the key (see key-usage.ts): memory only. */
  recordUse(keyId: string): void {
    this.usage?.record(keyId);
  }

  /**
   * Forgets a key this process has cached, after a change to it (revoked, rolled): this
   * process sees the change at once, the others within their cache's TTL. Changes are rare,
   * so the cache is walked rather than indexed a second time.
   */
  evict(keyId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.principal?.keyId === keyId) this.cache.delete(hash);
    }
  }

  /** Stores a new key with its records; returns its row. */
  async insert(key: NewApiKey, records: KeyChangeRecords): Promise<ApiKeyRow> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const seq = await insertKey(query, key);
      await writeRecords(query, records);
      return rowOf(key, seq);
    });
  }

  /** One key of the organization, as stored; undefined when there is none. */
  async get(organizationId: string, id: string): Promise<ApiKeyRow | undefined> {
    return (await this.db<ApiKeyRow>('api_keys')
      .select(ROW_COLUMNS.split(', '))
      .where({ organization_id: organizationId, id })
      .first()) as ApiKeyRow | undefined;
  }

  /** A page of the organization's keys, newest first, before a seq (keyset). */
  async list(organizationId: string, limit: number, beforeSeq: number | null) {
    return this.read(async (db) => {
      const query = db<ApiKeyRow>('api_keys')
        .select(ROW_COLUMNS.split(', '))
        .where({ organization_id: organizationId })
        .orderBy('seq', 'desc')
        .limit(limit);
      if (beforeSeq !== null) query.andWhere('seq', '<', beforeSeq);
      return (await query) as unknown as ApiKeyRow[];
    });
  }

  /**
   * Revokes a key (of the organization, when one is given); undefined when there is none.
   * Revoking twice keeps the first time: `records` is told whether this call revoked it.
   */
  async revokeKey(
    organizationId: string | undefined,
    id: string,
    at: Date,
    records: (row: ApiKeyRow, revokedNow: boolean) => KeyChangeRecords,
  ): Promise<ApiKeyRow | undefined> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const row = await lockKey(query, organizationId, id);
      if (!row) return undefined;
      const revokedNow = row.revoked_at === null;
      if (revokedNow) {
        await query('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [at, id]);
        row.revoked_at = at;
      }
      await writeRecords(query, records(row, revokedNow));
      return row;
    });
  }

  /**
   * Replaces a key by a new one: `plan` decides from the old key as locked (and may refuse by
   * throwing, which stores nothing); the old key then expires at the plan's time and names
   * its replacement. Undefined when there is no such key in the organization.
   */
  async roll(
    organizationId: string,
    id: string,
    plan: (old: ApiKeyRow) => RollPlan,
  ): Promise<{ old: ApiKeyRow; key: ApiKeyRow } | undefined> {
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const old = await lockKey(query, organizationId, id);
      if (!old) return undefined;
      const decided = plan(old);
      await query('UPDATE api_keys SET expires_at = ?, replaced_by = ? WHERE id = ?', [
        decided.oldExpiresAt,
        decided.key.id,
        id,
      ]);
      const seq = await insertKey(query, decided.key);
      await writeRecords(query, decided.records);
      return {
        old: { ...old, expires_at: decided.oldExpiresAt, replaced_by: decided.key.id },
        key: rowOf(decided.key, seq),
      };
    });
  }

  /**
   * Records in the audit log, once each, up to `limit` keys that have passed their expiry
   * (the reconciler calls it): marked and audited in one transaction. Rows another worker is
   * recording are skipped, not waited for. A key revoked before its expiry is marked but not
   * audited as expired: it had stopped working already.
   */
  async recordExpiries(now: Date, limit: number): Promise<number> {
    return writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query) => {
        const rows = (await query(
          `SELECT id, organization_id, key_prefix, expires_at, revoked_at FROM api_keys
            WHERE expiry_recorded_at IS NULL AND expires_at <= ?
            ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED`,
          [now, limit],
        )) as unknown as Array<{
          id: string;
          organization_id: string;
          key_prefix: string;
          expires_at: Date;
          revoked_at: Date | null;
        }>;
        if (rows.length === 0) return 0;
        await query(
          `UPDATE api_keys SET expiry_recorded_at = ? WHERE id IN (${rows.map(() => '?').join(', ')})`,
          [now, ...rows.map((r) => r.id)],
        );
        await insertAuditEntries(
          query,
          rows
            .filter((r) => r.revoked_at === null || r.revoked_at > r.expires_at)
            .map((r) =>
              keyExpired(
                {
                  id: r.id,
                  organizationId: r.organization_id,
                  prefix: r.key_prefix,
                  expiresAt: r.expires_at,
                },
                now,
              ),
            ),
        );
        return rows.length;
      },
      { readCommitted: true },
    );
  }

  /**
   * A key made by an operator (admin CLI, test and benchmark fixtures): every scope unless
   * told otherwise, audited as made by the admin CLI.
   */
  async create(
    organizationId: string,
    name: string | null,
    options: { scopes?: readonly Scope[]; expiresAt?: Date } = {},
  ) {
    const at = new Date();
    const key = newApiKey({
      organizationId,
      name,
      scopes: options.scopes ?? ALL_SCOPES,
      expiresAt: options.expiresAt ?? null,
      createdBy: ADMIN_CLI,
      at,
    });
    await this.insert(key, { audit: [keyCreated(key, ADMIN_CLI, at)] });
    return {
      id: key.id,
      organization_id: organizationId,
      name,
      key: key.secret,
      key_prefix: key.prefix,
      scopes: key.scopes,
      created_at: at.toISOString(),
      ...(key.expiresAt ? { expires_at: key.expiresAt.toISOString() } : {}),
    };
  }

  /** Revokes a key an operator names (admin CLI); undefined when no such key exists. */
  async revoke(id: string) {
    const at = new Date();
    const row = await this.revokeKey(undefined, id, at, (key, revokedNow) => ({
      audit: revokedNow
        ? [
            keyRevoked(
              { id, organizationId: key.organization_id, prefix: key.key_prefix },
              ADMIN_CLI,
              at,
            ),
          ]
        : [],
    }));
    if (!row) return undefined;
    return {
      id: row.id,
      organization_id: row.organization_id,
      name: row.name,
      key_prefix: row.key_prefix,
      revoked_at: row.revoked_at!.toISOString(),
    };
  }
}
