import type { ParameterizedContext } from 'koa';
import type { Principal } from '../auth/principal.js';
import type { IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import type { Deadline } from '../lib/deadline.js';

export interface AppState {
  requestId: string;
  principal?: Principal;
  body?: unknown;
  /** The query and body, checked against the route's schemas (http/contract.ts). */
  input?: { query: unknown; body: unknown };
  /** Set by requestTimeout: a write may start only while it is open. */
  deadline?: Deadline;
  /** Set when a POST carries an Idempotency-Key that is new: its write stores it. */
  idempotency?: IdempotencyClaim;
}

export type AppContext = ParameterizedContext<AppState>;
