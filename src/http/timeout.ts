import type { Middleware } from 'koa';
import { serviceUnavailable } from '../errors.js';
import type { AppState } from './context.js';

/** Answers 503 when a request takes longer than the limit, instead of leaving the client hanging. */
export function requestTimeout(ms: number): Middleware<AppState> {
  return async (_ctx, next) => {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(serviceUnavailable(`request took longer than ${ms} ms`)), ms);
    });
    try {
      await Promise.race([next(), expired]);
    } finally {
      clearTimeout(timer);
    }
  };
}
