// The audit entries of the changes to API keys, made once here for the API (key-service.ts),
// the admin CLI and the reconciler. None holds a secret or its hash: only the key's prefix.
import type { Actor } from '../audit/actor.js';
import { SYSTEM } from '../audit/actor.js';
import type { NewAuditEntry } from '../audit/audit-events.js';
import type { Scope } from './scopes.js';

/** What an entry needs to know of a key. */
export interface AuditedKey {
  id: string;
  organizationId: string;
  name: string | null;
  prefix: string;
  scopes: readonly Scope[];
  expiresAt: Date | null;
}

export function keyCreated(key: AuditedKey, actor: Actor, at: Date): NewAuditEntry {
  return {
    organizationId: key.organizationId,
    type: 'api_key.created',
    actor,
    targetId: key.id,
    at,
    data: {
      ...(key.name === null ? {} : { name: key.name }),
      prefix: key.prefix,
      scopes: [...key.scopes],
      ...(key.expiresAt === null ? {} : { expiresAt: key.expiresAt.toISOString() }),
    },
  };
}

export function keyRevoked(
  key: Pick<AuditedKey, 'id' | 'organizationId' | 'prefix'>,
  actor: Actor,
  at: Date,
): NewAuditEntry {
  return {
    organizationId: key.organizationId,
    type: 'api_key.revoked',
    actor,
    targetId: key.id,
    at,
    data: { prefix: key.prefix },
  };
}

/** The old key was replaced by `replacement`; it keeps working until `oldExpiresAt`. */
export function keyRolled(
  old: Pick<AuditedKey, 'id' | 'organizationId' | 'prefix'>,
  replacement: Pick<AuditedKey, 'id' | 'prefix'>,
  oldExpiresAt: Date,
  actor: Actor,
  at: Date,
): NewAuditEntry {
  return {
    organizationId: old.organizationId,
    type: 'api_key.rolled',
    actor,
    targetId: old.id,
    at,
    data: {
      prefix: old.prefix,
      newKeyId: replacement.id,
      newPrefix: replacement.prefix,
      expiresAt: oldExpiresAt.toISOString(),
    },
  };
}

/** Recorded by the reconciler (the service itself) once the key has passed its expiry. */
export function keyExpired(
  key: Pick<AuditedKey, 'id' | 'organizationId' | 'prefix'> & { expiresAt: Date },
  at: Date,
): NewAuditEntry {
  return {
    organizationId: key.organizationId,
    type: 'api_key.expired',
    actor: SYSTEM,
    targetId: key.id,
    at,
    data: { prefix: key.prefix, expiresAt: key.expiresAt.toISOString() },
  };
}
