// Reads a JSON request body with a hard size limit. The body must be a JSON object.
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { HttpError, badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.js';
import type { AppState } from './context.js';

const TOO_LARGE = Symbol('body too large');

/**
 * The body as UTF-8 text, or a rejection with TOO_LARGE as soon as it passes the limit (the
 * rest is left unread; the response closes the connection), or with a 400 when the client
 * hangs up first. Listens for events rather than
 * iterating the stream: a body is usually one chunk, and the async iterator costs several
 * promises per request.
 */
function readBody(req: IncomingMessage, limitBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        req.pause();
        reject(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(
        chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString(),
      );
    };
    // A client that hangs up mid-body: nobody is left to answer, but the request must end, and
    // as the client's doing (400 in the access log), not as a failure of the service.
    const onAbort = () => {
      cleanup();
      reject(badRequest('the client closed the request before its body was complete', 'aborted'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

export function jsonBody(limitBytes: number): Middleware<AppState> {
  return async (ctx, next) => {
    if (!ctx.request.is('application/json', '+json')) throw unsupportedMediaType();
    const encoding = ctx.get('content-encoding');
    if (encoding && encoding.toLowerCase() !== 'identity') {
      throw new HttpError(415, 'unsupported_media_type', 'Content-Encoding is not supported');
    }
    const declared = ctx.request.length;
    if (declared !== undefined && declared > limitBytes) {
      ctx.set('Connection', 'close');
      throw payloadTooLarge(limitBytes);
    }
    const raw = await readBody(ctx.req, limitBytes).catch((err: unknown) => {
      if (err === TOO_LARGE) {
        ctx.set('Connection', 'close');
        throw payloadTooLarge(limitBytes);
      }
      throw err;
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // Also catches RangeError from absurdly deep nesting.
      throw badRequest('request body is not valid JSON', 'invalid_json');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw badRequest('request body must be a JSON object', 'invalid_body');
    }
    ctx.state.body = parsed;
    await next();
  };
}
