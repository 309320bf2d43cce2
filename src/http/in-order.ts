// Requests pipelined on one connection are handled one after another. Node parses and hands
// over every pipelined request at once (only the answers are queued in order), so without this
// a list sent right behind a create on the same connection could run before the create's
// commit and miss the new run. A later request must see the effects of an earlier one.
import type { Socket } from 'node:net';
import type { Middleware } from 'koa';
import type { AppState } from './context.js';

export function inOrderPerConnection(): Middleware<AppState> {
  /** The last request being handled on a connection, while there is one. */
  const handling = new WeakMap<Socket, Promise<void>>();
  return async (ctx, next) => {
    const socket = ctx.req.socket;
    const before = handling.get(socket);
    // The usual case, one request at a time on a connection: nothing to wait for, and only
    // a marker to leave for a request that might come in behind this one.
    let finished!: () => void;
    const mine = new Promise<void>((resolve) => (finished = resolve));
    handling.set(socket, mine);
    try {
      if (before) await before;
      await next();
    } finally {
      finished();
      if (handling.get(socket) === mine) handling.delete(socket);
    }
  };
}
