// The Idempotency-Key header on POST routes (the IETF httpapi Idempotency-Key draft, as Stripe
// practises it): the same organization, key, endpoint and body get the first answer again, with
// Idempotent-Replayed: true; the same key with another endpoint or body is a 422; while the
// first request with a key is in flight, a second is a 409. The key is stored by the request's
// own write, in the same transaction as its effect (see IdempotencyClaim), so a request that
// did nothing (refused, failed) leaves no key behind and the key may be used again.
import type { Middleware } from 'koa';
import { HttpError } from './errors.js';
import {
  isDuplicateKey,
  requestHash,
  type IdempotencyStore,
  type StoredAnswer,
} from '../idempotency/idempotency-keys.js';
import type { AppContext, AppState } from './context.js';
import { headerCount } from './headers.js';

/** Printable ASCII without spaces, as the draft's sf-string keys are in practice. */
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

function replay(ctx: AppContext, stored: StoredAnswer, endpoint: string, hash: string): void {
  if (stored.endpoint !== endpoint || stored.requestHash !== hash) {
    throw new HttpError(
      'idempotency_key_reused',
      'this Idempotency-Key was used with another request (another endpoint or body); use a new key',
    );
  }
  ctx.status = stored.status;
  ctx.type = 'application/json';
  ctx.body = stored.response;
  ctx.set('Idempotent-Replayed', 'true');
}

export function idempotencyKeys(store: IdempotencyStore, ttlMs: number) {
  /** Keys of requests this process is handling: a second one meanwhile is a 409. */
  const inFlight = new Set<string>();
  return (endpoint: string): Middleware<AppState> =>
    async (ctx, next) => {
      const key = ctx.req.headers['idempotency-key'];
      if (key === undefined) return next();
      if (typeof key !== 'string' || headerCount(ctx.req, 'idempotency-key') > 1) {
        throw new HttpError('duplicate_header', 'send one Idempotency-Key header, not several');
      }
      if (!KEY_RE.test(key)) {
        throw new HttpError(
          'invalid_idempotency_key',
          'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces',
        );
      }
      const organizationId = ctx.state.principal!.organizationId;
      const hash = requestHash(endpoint, ctx.state.body);
      const slot = `${organizationId}\n${key}`;
      if (inFlight.has(slot)) {
        throw new HttpError(
          'idempotency_key_in_flight',
          'a request with this Idempotency-Key is still being handled; retry shortly',
        );
      }
      inFlight.add(slot);
      try {
        const stored = await store.find(organizationId, key);
        if (stored) return replay(ctx, stored, endpoint, hash);
        ctx.state.idempotency = {
          organizationId,
          key,
          endpoint,
          requestHash: hash,
          expiresAt: new Date(Date.now() + ttlMs),
        };
        try {
          await next();
        } catch (err) {
          // Another API process stored the key first (its transaction held the key's place
          // until it committed): this request did nothing, and gets that request's answer.
          if (!isDuplicateKey(err)) throw err;
          const winner = await store.find(organizationId, key);
          if (!winner) throw err;
          replay(ctx, winner, endpoint, hash);
        }
      } finally {
        inFlight.delete(slot);
      }
    };
}
