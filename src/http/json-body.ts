// Reads a JSON request body: declared as JSON in UTF-8, within a size limit and a time limit,
// made of valid UTF-8 and valid Unicode, and a JSON object. What fails any of these is refused
// before anything is done, with the status that says whose problem it is.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { pointer } from '../errors.js';
import { HttpError, payloadTooLarge } from './errors.js';
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
      reject(
        new HttpError('aborted', 'the client closed the request before its body was complete'),
      );
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
 * can only carry as an escape): the path to it (for a key, the path to its object), or
 * undefined when every string is sound. Such a string cannot be stored faithfully (MySQL's
 * utf8mb4 has no code for it), so one run would read back differently from what was accepted.
 */
function illFormedAt(value: unknown, path: string[]): { path: string[]; key?: true } | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? { path } : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  const entries = Array.isArray(value)
    ? value.map((item, i) => [String(i), item] as const)
    : Object.entries(value);
  for (const [key, item] of entries) {
    if (LONE_SURROGATE.test(key)) return { path, key: true };
    const found = illFormedAt(item, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

export function jsonBody(limitBytes: number, timeoutMs: number): Middleware<AppState> {
  return async (ctx, next) => {
    if (!ctx.request.is('application/json', '+json')) {
      throw new HttpError('unsupported_media_type', 'Content-Type must be application/json');
    }
    const charset = ctx.request.charset.toLowerCase();
    if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new HttpError(
        'unsupported_charset',
        `charset '${ctx.request.charset}' is not supported; send the body in UTF-8`,
      );
    }
    const encoding = ctx.get('content-encoding');
    if (encoding && encoding.toLowerCase() !== 'identity') {
      throw new HttpError('unsupported_media_type', 'Content-Encoding is not supported');
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
          'body_timeout',
          `the request body did not arrive within ${timeoutMs} ms; nothing was done`,
        );
      }
      throw err;
    });
    if (!isUtf8(bytes)) throw new HttpError('invalid_utf8', 'request body is not valid UTF-8');
    const raw = bytes.toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // Also catches RangeError from absurdly deep nesting.
      throw new HttpError('invalid_json', 'request body is not valid JSON');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new HttpError('invalid_body', 'request body must be a JSON object');
    }
    // Only an escape can make a lone surrogate, so the walk runs only when the text has one.
    if (ESCAPED_SURROGATE.test(raw)) {
      const at = illFormedAt(parsed, []);
      if (at) {
        const where = at.path.join('.');
        throw new HttpError(
          'invalid_unicode',
          at.key
            ? `${where ? `a key of ${where}` : 'a field name'} is not valid Unicode (it holds an unpaired surrogate)`
            : `${where} is not valid Unicode (it holds an unpaired surrogate)`,
          {},
          pointer(...at.path),
        );
      }
    }
    ctx.state.body = parsed;
    await next();
  };
}
