// API keys in MySQL, with a short-lived cache in front of the lookup. Lookups go by the hash of
// the presented key through a unique index, so the time taken does not depend on how much of a
// stored key the caller guessed. The cache holds misses too, so a flood of bad keys does not
// reach MySQL; its TTL bounds how long a revoked key keeps working in a running API.
import { actorOf, type Actor } from '../audit/actor.js';
import type { Db } from '../db.js';
import { newId } from '../lib/ids.js';
import { KEY_PREFIX, generateApiKey, hashApiKey } from './api-keys.js';
import { ALL_SCOPES, parseScopes, type Scope } from './scopes.js';

/** Who a request comes from: a live key, its organization, and what it may do. */
export interface Principal {
  organizationId: string;
  keyId: string;
  keyName: string | null;
  scopes: ReadonlySet<Scope>;
  /** After this the key is refused (api_key_expired); checked on every request, never cached. */
  expiresAt: Date | null;
  /** The key as the actor of the changes it makes (run events, audit entries). */
  actor: Actor;
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
      // Keys made by the admin CLI hold every scope.
      scopes: JSON.stringify(ALL_SCOPES),
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
