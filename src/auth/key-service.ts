// API keys over the API, behind thin routes: create, list, revoke and roll, each scoped to the
// caller's organization (another organization's keys are not found). Least privilege holds
// here too: a key can give a new key only scopes it holds itself, and can roll only a key
// whose every scope it holds (or a narrow key could mint a wide one).
//
// A key's secret is in the answer that makes it and nowhere else: not in the database (only
// its SHA-256), not in the audit log, and not in the stored answer of an Idempotency-Key. A
// request replayed with the Idempotency-Key of one that made a key gets that answer again,
// 200 with the key made, but without its `key` (roll it to get a new secret): a stored secret
// would be readable from the database for a day, and would be handed to any key of the
// organization that replays the request, without the scope checks above. The replay is still
// a success, as the request was: a client told of a failure must be able to rely on nothing
// having been done.
import { DomainError, pointer } from '../errors.js';
import { answered, type IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import { beginWrite, type WriteGate } from '../lib/deadline.js';
import { keyCreated, keyRevoked, keyRolled } from './key-audit.js';
import {
  DEFAULT_OVERLAP_HOURS,
  type ApiKeyView,
  type ApiKeyWithSecret,
  type CreateApiKeyBody,
  type RollApiKeyBody,
} from './key-schemas.js';
import { newApiKey, rowOf, type ApiKeyRow, type KeyStore, type NewApiKey } from './key-store.js';
import type { Principal } from './principal.js';
import { parseScopes, type Scope } from './scopes.js';

/** A key as the list shows it: never its secret or hash; values it lacks left out. */
export function toKeyView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    ...(row.name === null ? {} : { name: row.name }),
    prefix: row.key_prefix,
    scopes: parseScopes(row.scopes),
    createdAt: row.created_at.toISOString(),
    ...(row.expires_at === null ? {} : { expiresAt: row.expires_at.toISOString() }),
    ...(row.last_used_at === null ? {} : { lastUsedAt: row.last_used_at.toISOString() }),
    ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at.toISOString() }),
    ...(row.replaced_by === null ? {} : { replacedBy: row.replaced_by }),
  };
}

const keyNotFound = (id: string) =>
  new DomainError('api_key_not_found', `API key '${id}' not found`, pointer('id'));

const scopeNotHeld = (scope: Scope, field: string, what: string) =>
  new DomainError(
    'scope_not_held',
    `${what} needs the scope '${scope}', which the calling API key does not hold`,
    field,
  );

const inactive = (message: string) => new DomainError('api_key_inactive', message, pointer('id'));

/**
 * What an Idempotency-Key of a request that made a key replays: the answer without the key's
 * secret (the secret is shown once, and stored nowhere).
 */
function withoutSecret(claim: IdempotencyClaim | undefined, key: NewApiKey) {
  return answered(claim, 200, () => JSON.stringify(toKeyView(rowOf(key, 0))));
}

export class KeyService {
  constructor(private readonly keys: KeyStore) {}

  async create(
    principal: Principal,
    body: CreateApiKeyBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<ApiKeyWithSecret> {
    const now = new Date();
    let expiresAt: Date | null = null;
    if (body.expires_at !== undefined) {
      expiresAt = new Date(body.expires_at);
      if (Number.isNaN(expiresAt.getTime())) {
        throw new DomainError('invalid_body', 'expires_at is not a time', pointer('expires_at'));
      }
      if (expiresAt.getTime() <= now.getTime()) {
        throw new DomainError(
          'expiry_in_past',
          `expires_at must be in the future; ${body.expires_at} is not`,
          pointer('expires_at'),
        );
      }
    }
    body.scopes.forEach((scope, i) => {
      if (!principal.scopes.has(scope)) {
        throw scopeNotHeld(scope, pointer('scopes', i), 'granting it');
      }
    });
    // Nor a longer life than its own: a key that expires makes keys that expire no later
    // (by default, when it does).
    const own = principal.expiresAt;
    if (own !== null) {
      if (expiresAt === null) {
        expiresAt = own;
      } else if (expiresAt.getTime() > own.getTime()) {
        throw new DomainError(
          'expiry_not_held',
          `expires_at may not be later than the calling key's own expiry, ${own.toISOString()}`,
          pointer('expires_at'),
        );
      }
    }
    const key = newApiKey({
      organizationId: principal.organizationId,
      name: body.name,
      scopes: body.scopes,
      expiresAt,
      createdBy: principal.actor,
      at: now,
    });
    beginWrite(gate);
    const row = await this.keys.insert(key, {
      audit: [keyCreated(key, principal.actor, now)],
      idempotency: withoutSecret(claim, key),
    });
    return { ...toKeyView(row), key: key.secret };
  }

  async list(
    principal: Principal,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<{ seq: number; view: ApiKeyView }>> {
    const rows = await this.keys.list(principal.organizationId, limit, beforeSeq);
    return rows.map((row) => ({ seq: Number(row.seq), view: toKeyView(row) }));
  }

  /** The calling key itself: what a client (the console) may do with it. */
  async current(principal: Principal): Promise<ApiKeyView> {
    const row = await this.keys.get(principal.organizationId, principal.keyId);
    // The key was just authenticated; only a deletion in between leaves no row.
    if (!row) throw keyNotFound(principal.keyId);
    return toKeyView(row);
  }

  /** Revokes a key: refused at once by this process, by the others within their cache's TTL. */
  async revoke(
    principal: Principal,
    id: string,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<ApiKeyView> {
    const at = new Date();
    beginWrite(gate);
    const row = await this.keys.revokeKey(principal.organizationId, id, at, (key, revokedNow) => ({
      // Revoking twice keeps the first time, and the audit log its one entry.
      audit: revokedNow
        ? [
            keyRevoked(
              { id, organizationId: key.organization_id, prefix: key.key_prefix },
              principal.actor,
              at,
            ),
          ]
        : [],
      idempotency: answered(claim, 200, () => JSON.stringify(toKeyView(key))),
    }));
    if (!row) throw keyNotFound(id);
    this.keys.evict(id);
    return toKeyView(row);
  }

  /**
   * A new key in place of an old one, with its name, scopes and expiry (rolling replaces a
   * secret; it does not lengthen a key's life). The old key keeps working until the overlap
   * ends (or its own expiry, if sooner), then is refused with api_key_expired.
   */
  async roll(
    principal: Principal,
    body: RollApiKeyBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<ApiKeyWithSecret> {
    const now = new Date();
    const overlapMs = Math.round((body.overlap_hours ?? DEFAULT_OVERLAP_HOURS) * 3_600_000);
    let secret = '';
    beginWrite(gate);
    const rolled = await this.keys.roll(principal.organizationId, body.id, (old) => {
      if (old.revoked_at !== null) {
        throw inactive(`API key '${old.id}' was revoked at ${old.revoked_at.toISOString()}`);
      }
      if (old.expires_at !== null && old.expires_at.getTime() <= now.getTime()) {
        throw inactive(`API key '${old.id}' expired at ${old.expires_at.toISOString()}`);
      }
      if (old.replaced_by !== null) {
        throw inactive(
          `API key '${old.id}' was already rolled: it is replaced by '${old.replaced_by}' (roll that one)`,
        );
      }
      const scopes = parseScopes(old.scopes);
      const missing = scopes.find((scope) => !principal.scopes.has(scope));
      if (missing) throw scopeNotHeld(missing, pointer('id'), 'rolling this key');
      const overlapEnd = now.getTime() + overlapMs;
      const oldExpiresAt = new Date(Math.min(old.expires_at?.getTime() ?? overlapEnd, overlapEnd));
      const key = newApiKey({
        organizationId: principal.organizationId,
        name: old.name,
        scopes,
        expiresAt: old.expires_at,
        createdBy: principal.actor,
        at: now,
      });
      secret = key.secret;
      const oldKey = { id: old.id, organizationId: old.organization_id, prefix: old.key_prefix };
      return {
        key,
        oldExpiresAt,
        records: {
          audit: [
            keyRolled(oldKey, key, oldExpiresAt, principal.actor, now),
            keyCreated(key, principal.actor, now),
          ],
          idempotency: withoutSecret(claim, key),
        },
      };
    });
    if (!rolled) throw keyNotFound(body.id);
    this.keys.evict(body.id);
    return { ...toKeyView(rolled.key), key: secret };
  }
}
