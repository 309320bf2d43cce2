// Errors a caller may see. Each carries its HTTP status and a stable machine-readable code;
// the error middleware turns them into {"message", "code"} bodies. Anything else is a 500
// (or a 503 when the database or Redis is unreachable).

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): { message: string; code: string } {
    return { message: this.message, code: this.code };
  }
}

export const badRequest = (message: string, code = 'bad_request') =>
  new HttpError(400, code, message);
export const forbidden = (message = 'missing, unknown or revoked API key') =>
  new HttpError(403, 'forbidden', message);
export const notFound = (message = 'not found') => new HttpError(404, 'not_found', message);
export const methodNotAllowed = (allowed: string[]) =>
  new HttpError(405, 'method_not_allowed', `method not allowed; use ${allowed.join(', ')}`, {
    Allow: allowed.join(', '),
  });
export const conflict = (message: string) => new HttpError(409, 'conflict', message);
export const payloadTooLarge = (limit: number) =>
  new HttpError(413, 'payload_too_large', `request body is larger than ${limit} bytes`);
export const unsupportedMediaType = () =>
  new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json');
export const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(429, 'rate_limited', 'too many requests for this API key', {
    'Retry-After': String(retryAfterSeconds),
  });
export const serviceUnavailable = (message: string) => new HttpError(503, 'unavailable', message);

/**
 * A write whose COMMIT was sent but whose answer never came (the connection died, or the
 * database stopped answering): it may or may not have been stored. Never answered as a failure
 * (a client would retry and do it twice): see requestContext.
 */
export class OutcomeUnknownError extends Error {
  constructor(cause: unknown) {
    super('the database did not confirm the commit', { cause });
    this.name = 'OutcomeUnknownError';
  }
}

/** A write that did not finish in time before its COMMIT: rolled back, so nothing was done. */
export class WriteTimeoutError extends Error {
  constructor(ms: number) {
    super(`the database did not answer the write within ${ms} ms`);
    // Named like the other timeouts, so isTransientError maps it to a 503.
    this.name = 'TimeoutError';
  }
}

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);

const CONNECTION_CODES = new Set([
  ...SOCKET_CODES,
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_QUERY_INTERRUPTED',
]);

/** True when a connection itself failed (mysql2 marks such errors fatal), not a statement. */
export function isConnectionLost(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as Error & { code?: unknown; fatal?: unknown };
  return e.fatal === true || (typeof e.code === 'string' && SOCKET_CODES.has(e.code));
}

/**
 * True for failures of the infrastructure rather than of the data: the database or Redis
 * unreachable, a connection dropped, a pool timeout, a deadlock. They are retried, never
 * blamed on the run or the caller.
 */
export function isTransientError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as Error & { code?: unknown; fatal?: unknown };
  if (e.name === 'KnexTimeoutError' || e.name === 'TimeoutError') return true;
  if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
  if (e.fatal === true) return true;
  return /Connection is closed|connect ECONNREFUSED|Stream isn't writeable|Can't add new command when connection is in closed state/i.test(
    e.message,
  );
}
