import type { Middleware } from 'koa';
import { HttpError } from '../http/errors.js';
import type { AppState } from '../http/context.js';
import { headerCount } from '../http/headers.js';
import { keyFromHeader } from './api-keys.js';
import type { KeyStore } from './key-store.js';
import type { Scope } from './scopes.js';

/**
 * 403 unless the Authorization header holds a live key (not revoked, not expired); sets
 * ctx.state.principal. Expiry is compared with the clock on every request, so a key stops at
 * its expiry to the millisecond, whatever the key cache holds.
 */
export function requireApiKey(keys: KeyStore): Middleware<AppState> {
  return async (ctx, next) => {
    // Node keeps the first of repeated Authorization headers; a proxy in front may keep the
    // last and authorize another organization. Two credentials are refused, never guessed at.
    if (headerCount(ctx.req, 'authorization') > 1) {
      throw new HttpError('duplicate_header', 'send one Authorization header, not several');
    }
    const key = keyFromHeader(ctx.get('authorization'));
    if (!key)
      throw new HttpError('forbidden', 'missing API key: send it in the Authorization header');
    const principal = await keys.authenticate(key);
    if (!principal) throw new HttpError('forbidden', 'unknown or revoked API key');
    if (principal.expiresAt !== null && principal.expiresAt.getTime() <= Date.now()) {
      throw new HttpError(
        'api_key_expired',
        `the API key expired at ${principal.expiresAt.toISOString()}`,
      );
    }
    ctx.state.principal = principal;
    keys.recordUse(principal.keyId);
    await next();
  };
}

/** 403 unless the request's key holds the scope its route needs (the route's contract). */
export function requireScope(scope: Scope): Middleware<AppState> {
  return async (ctx, next) => {
    if (!ctx.state.principal?.scopes.has(scope)) {
      throw new HttpError(
        'insufficient_scope',
        `this operation needs the scope '${scope}', which the API key does not hold`,
      );
    }
    await next();
  };
}
