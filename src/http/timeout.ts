import type { Middleware } from 'koa';
import { HttpError } from './errors.js';
import { Deadline } from '../lib/deadline.js';
import type { AppState } from './context.js';

/**
 * Bounds the service's time on a request, counted from when its body has arrived (the client's
 * time is the body reader's to bound). When the time is up before the request's write was
 * sent, it is answered 503 and the write never goes; once the write is on its way, the answer
 * waits for its outcome instead (see Deadline).
 */
export function requestTimeout(ms: number): Middleware<AppState> {
  return async (ctx, next) => {
    const deadline = new Deadline();
    ctx.state.deadline = deadline;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (deadline.expire())
          reject(new HttpError('timed_out', `request took longer than ${ms} ms; nothing was done`));
      }, ms);
    });
    try {
      await Promise.race([next(), expired]);
    } finally {
      clearTimeout(timer);
    }
  };
}
