// Who a request comes from, as the services see it: the key's organization, scopes and actor.
// Its own module so that every service can name it without knowing the key store.
import type { Actor } from '../audit/actor.js';
import type { Scope } from './scopes.js';

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
