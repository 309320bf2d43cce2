// The outermost middleware: a request id, one JSON access-log line per request, and the single
// place where errors become responses, with the statuses of http/errors.ts. Every error body is
// {"message", "code"} (and "field" when one field is at fault): a domain refusal gets its
// code's status; an unexpected error is a 500 whose details stay in the log; an unreachable
// database or Redis is a 503 (and then nothing was done); a write whose commit was not
// confirmed is a 500 outcome_unknown.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Middleware } from 'koa';
import {
  DomainError,
  OutcomeUnknownError,
  isTransientError,
  unavailableMessage,
} from '../errors.js';
import type { Logger } from '../logger.js';
import { httpDuration } from '../metrics/metrics.js';
import type { AppState } from './context.js';
import { HttpError, errorBody, fromDomainError, type ErrorCode } from './errors.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** The code of a status set by the router or thrown by Koa (not by this service's code). */
function frameworkCode(status: number): ErrorCode {
  switch (status) {
    case 404:
      return 'route_not_found';
    case 405:
      return 'method_not_allowed';
    case 501:
      return 'not_implemented';
    default:
      return 'malformed_request';
  }
}

export function requestContext(
  log: Logger,
  isShuttingDown: () => boolean,
  /** A request the process sent itself while warming up (warm-up.ts): not logged or counted. */
  isRehearsal: (ctx: { get(header: string): string }) => boolean = () => false,
): Middleware<AppState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    if (isShuttingDown()) ctx.set('Connection', 'close');
    try {
      await next();
      if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null || ctx.body === '')) {
        // Responses set by the router (404, 405, 501) get the same JSON body as ours.
        const message =
          ctx.status === 404
            ? `no such endpoint: ${ctx.method} ${ctx.path}`
            : (STATUS_CODES[ctx.status] ?? 'error').toLowerCase();
        const status = ctx.status;
        ctx.body = errorBody(frameworkCode(status), message);
        ctx.status = status; // setting a body would otherwise turn it into a 200
      }
    } catch (thrown) {
      const err = thrown instanceof DomainError ? fromDomainError(thrown) : thrown;
      if (err instanceof HttpError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = err.toJSON();
      } else if (err instanceof OutcomeUnknownError) {
        // Not a 503: that would tell the client nothing was done and invite a blind retry.
        log.error('outcome unknown', { requestId, err: err.cause });
        ctx.status = 500;
        ctx.body = errorBody(
          'outcome_unknown',
          'the outcome of this request is unknown: the database did not confirm the commit, ' +
            'so the change may or may not have been made. Retry with the same Idempotency-Key ' +
            '(then a retry cannot do it twice), or look it up before retrying',
        );
      } else if (isTransientError(err)) {
        log.warn('dependency unavailable', { requestId, err });
        ctx.status = 503;
        ctx.set('Retry-After', '1');
        ctx.body = errorBody('unavailable', unavailableMessage(err));
      } else {
        const status = (err as { status?: unknown }).status;
        const expose = (err as { expose?: unknown }).expose;
        if (typeof status === 'number' && status >= 400 && status < 500 && expose) {
          // http-errors thrown by koa or the router (a malformed path, say).
          const code = frameworkCode(status);
          ctx.status = code === 'malformed_request' ? 400 : status;
          ctx.body = errorBody(code, (err as Error).message);
        } else {
          log.error('unhandled error', { requestId, err, stack: (err as Error)?.stack });
          ctx.status = 500;
          ctx.body = errorBody('internal', 'internal server error');
        }
      }
    } finally {
      if (!isRehearsal(ctx)) record();
    }
    function record() {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // The route's template, never the path itself: a label must have few values.
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      httpDuration.observe(
        {
          route: typeof route === 'string' ? route : 'unmatched',
          method: ctx.method,
          status: String(ctx.status),
        },
        ms / 1000,
      );
      log.info('request', {
        requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 100) / 100,
        org: ctx.state.principal?.organizationId,
      });
    }
  };
}
