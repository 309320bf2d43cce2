// Bull Board at /admin/queues (under BASE_PATH): the queues of every job kind, for operators.
// Behind OPERATOR_TOKEN, given as the password of HTTP Basic auth (so a browser asks for it) or
// as "Authorization: Bearer <token>", compared in constant time. An organization's API key
// never opens it. Without OPERATOR_TOKEN nothing is served here.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Queue } from 'bullmq';
import type { Middleware } from 'koa';
import { HttpError } from './errors.js';
import type { AppState } from './context.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The token a request presents: Bearer, or the password of Basic auth. */
function presented(header: string): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

export function operatorBoard(options: {
  token: string | undefined;
  basePath: string;
  queues: Queue[];
}): Middleware<AppState> | undefined {
  if (!options.token) return undefined;
  const prefix = `${options.basePath}/admin/queues`;
  const adapter = new KoaAdapter();
  adapter.setBasePath(prefix);
  createBullBoard({
    queues: options.queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter: adapter,
  });
  const board = adapter.registerPlugin() as unknown as Middleware<AppState>;
  // Digests of equal length, so the comparison takes the same time whatever was sent.
  const expected = digest(options.token);
  return async (ctx, next) => {
    if (ctx.path !== prefix && !ctx.path.startsWith(`${prefix}/`)) return next();
    const header = ctx.get('authorization');
    if (!header) {
      throw new HttpError('unauthorized', 'operator credential required', {
        'WWW-Authenticate': 'Basic realm="operators", charset="UTF-8"',
      });
    }
    const token = presented(header);
    if (token === undefined || !timingSafeEqual(digest(token), expected)) {
      throw new HttpError('forbidden', 'not an operator credential');
    }
    await board(ctx, next);
  };
}
