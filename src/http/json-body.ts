// Reads a JSON request body: declared as JSON in UTF-8, within a size limit and a time limit,
// made of valid UTF-8 and valid Unicode, and a JSON object. What fails any of these is refused
// before anything is done, with the status that says whose problem it is.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { HttpError, badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.js';
import type { AppState } from './context.js';

const TOO_LARGE = Symbol('body too large');
const TOO_SLOW = Symbol('body too slow');

/**
 * The body's bytes, or a rejection with TOO_LARGE as soon as it passes the limit, with TOO_SLOW
 * when it has not all arrived within timeoutMs (in both cases the rest is left unread; the
 * response closes the connection), or with a 400 when the client hangs up first. Listens for
 * events rather than iterating the stream: a body is usually one chunk, and the async iterator
 * costs several promises per request.
 */
function readBody(req: IncomingMessage, limitBytes: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    const stop = (reason: symbol) => {
      cleanup();
      req.pause();
      reject(reason);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) stop(TOO_LARGE);
      else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    // A client that hangs up mid-body: nobody is left to answer, but the request must end, and
    // as the client's doing (400 in the access log), not as a failure of the service.
    const onAbort = () => {
      cleanup();
      reject(badRequest('the client closed the request before its body was complete', 'aborted'));
    };
    // Reading the body is the client's time: a slow body is the client's 408, never the
    // service's 503, and it ends before anything has been done.
    const timer = setTimeout(() => stop(TOO_SLOW), timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

/** Matches an escaped UTF-16 surrogate (\uD800–\uDFFF) in JSON text. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;
/** In a `u` regex a surrogate pair is one code point, so this matches only a lone surrogate. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Where a parsed value holds a string that is not valid Unicode (a lone surrogate, which JSON
 * can only carry as an escape): its path, or undefined when every string is sound. Such a
 * string cannot be stored faithfully (MySQL's utf8mb4 has no code for it), so one run would
 * read back differently from what was accepted.
 */
function illFormedAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedAt(value[i], `${path}.${i}`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (LONE_SURROGATE.test(key)) return path ? `a key of ${path}` : 'a field name';
    const found = illFormedAt(item, at);
    if (found) return found;
  }
  return undefined;
}

export function jsonBody(limitBytes: number, timeoutMs: number): Middleware<AppState> {
  return async (ctx, next) => {
    if (!ctx.request.is('application/json', '+json')) throw unsupportedMediaType();
    const charset = ctx.request.charset.toLowerCase();
    if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new HttpError(
        415,
        'unsupported_charset',
        `charset '${ctx.request.charset}' is not supported; send the body in UTF-8`,
      );
    }
    const encoding = ctx.get('content-encoding');
    if (encoding && encoding.toLowerCase() !== 'identity') {
      throw new HttpError(415, 'unsupported_media_type', 'Content-Encoding is not supported');
    }
    const declared = ctx.request.length;
    if (declared !== undefined && declared > limitBytes) {
      ctx.set('Connection', 'close');
      throw payloadTooLarge(limitBytes);
    }
    const bytes = await readBody(ctx.req, limitBytes, timeoutMs).catch((err: unknown) => {
      if (err === TOO_LARGE) {
        ctx.set('Connection', 'close');
        throw payloadTooLarge(limitBytes);
      }
      if (err === TOO_SLOW) {
        ctx.set('Connection', 'close');
        throw new HttpError(
          408,
          'body_timeout',
          `the request body did not arrive within ${timeoutMs} ms; nothing was done`,
        );
      }
      throw err;
    });
    if (!isUtf8(bytes)) throw badRequest('request body is not valid UTF-8', 'invalid_utf8');
    const raw = bytes.toString('utf8');
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
    // Only an escape can make a lone surrogate, so the walk runs only when the text has one.
    if (ESCAPED_SURROGATE.test(raw)) {
      const at = illFormedAt(parsed, '');
      if (at) {
        throw badRequest(
          `${at} is not valid Unicode (it holds an unpaired surrogate)`,
          'invalid_unicode',
        );
      }
    }
    ctx.state.body = parsed;
    await next();
  };
}
