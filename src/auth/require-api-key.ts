import type { Middleware } from 'koa';
import { HttpError } from '../http/errors.js';
import type { AppState } from '../http/context.js';
import { headerCount } from '../http/headers.js';
import { keyFromHeader } from './api-keys.js';
import type { KeyStore } from './key-store.js';

/** 403 unless the Authorization header holds a live key; sets ctx.state.principal. */
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
    ctx.state.principal = principal;
    await next();
  };
}
