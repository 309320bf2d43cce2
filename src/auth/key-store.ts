// API keys in MySQL, with a short-lived cache in front of the lookup. Lookups go by the hash of
// the presented key through a unique index, so the time taken does not depend on how much of a
// stored key the caller guessed. The cache holds misses too, so a flood of bad keys does not
// reach MySQL; its TTL bounds how long a revoked key keeps working in a running API.
import type { Db } from '../db.js';
import { newId } from '../lib/ids.js';
import { KEY_PREFIX, generateApiKey, hashApiKey } from './api-keys.js';

export interface Principal {
  organizationId: string;
  keyId: string;
}

interface CacheEntry {
  principal: Principal | null;
  expiresAt: number;
}

const CACHE_LIMIT = 50_000;

export class KeyStore {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
    /** A lookup not answered in this time fails (a 503): the database is hanging. */
    private readonly lookupTimeoutMs = 10_000,
  ) {}

  async authenticate(key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.principal;
    const row = await this.db('api_keys')
      .select('id', 'organization_id')
      .where({ key_hash: hash })
      .whereNull('revoked_at')
      .first()
      .timeout(this.lookupTimeoutMs);
    const principal: Principal | null = row
      ? { organizationId: row.organization_id, keyId: row.id }
      : null;
    if (this.ttlMs > 0) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(hash, { principal, expiresAt: now + this.ttlMs });
    }
    return principal;
  }

  async create(organizationId: string, name: string | null) {
    const key = generateApiKey();
    const record = {
      id: newId(),
      organization_id: organizationId,
      name,
      key_hash: hashApiKey(key),
      key_prefix: key.slice(0, KEY_PREFIX.length + 6),
      created_at: new Date(),
      revoked_at: null,
    };
    await this.db('api_keys').insert(record);
    return {
      id: record.id,
      organization_id: organizationId,
      name,
      key,
      key_prefix: record.key_prefix,
      created_at: record.created_at.toISOString(),
    };
  }

  /** Revokes a key; returns undefined when no such key exists. Revoking twice keeps the first time. */
  async revoke(id: string) {
    await this.db('api_keys')
      .where({ id })
      .whereNull('revoked_at')
      .update({ revoked_at: new Date() });
    const row = await this.db('api_keys')
      .select('id', 'organization_id', 'name', 'key_prefix', 'revoked_at')
      .where({ id })
      .first();
    if (!row) return undefined;
    return {
      id: row.id as string,
      organization_id: row.organization_id as string,
      name: row.name as string | null,
      key_prefix: row.key_prefix as string,
      revoked_at: (row.revoked_at as Date).toISOString(),
    };
  }
}
