// The client's errors: what the service answered (WorkflowRunError), and what it never answered
// (WorkflowRunConnectionError). Both carry the Idempotency-Key of a POST, so a caller who gives up
// can retry later with it and still change nothing twice.
import type { Error as ErrorBody } from './generated/types.gen.js';

/** Every code the service answers with (the API document's list). */
export type ErrorCode = ErrorBody['code'];

/** The service answered with an error status and its JSON `{message, code, field}`. */
export class WorkflowRunError extends Error {
  override readonly name = 'WorkflowRunError';
  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The service's machine-readable code (see the API document's list). */
    readonly code: ErrorCode,
    message: string,
    /** The request field at fault, as a JSON Pointer (`/input_fields/email`), when there is one. */
    readonly field: string | undefined,
    /** The POST's Idempotency-Key. */
    readonly idempotencyKey: string | undefined,
    /** Seconds the service asked to wait (Retry-After), on a 429 or 503. */
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(message);
  }
}

/**
 * No answer came: the connection failed or each attempt timed out, retries included. For a POST
 * the change may or may not have been made: retrying with `idempotencyKey` settles it.
 */
export class WorkflowRunConnectionError extends Error {
  override readonly name = 'WorkflowRunConnectionError';
  constructor(
    message: string,
    readonly idempotencyKey: string | undefined,
    /** True when the attempts timed out, false when the connection failed. */
    readonly timedOut: boolean,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** Reads an error answer; anything but the service's JSON error still becomes a WorkflowRunError. */
export async function errorOf(res: Response, idempotencyKey: string | undefined) {
  const retryAfter = retryAfterSeconds(res.headers.get('retry-after'));
  let body: Partial<ErrorBody> = {};
  try {
    body = (await res.json()) as Partial<ErrorBody>;
  } catch {
    // not JSON (a proxy's page, say): described by its status below
  }
  const message =
    typeof body.message === 'string' ? body.message : `the service answered ${res.status}`;
  // A body without a code comes from something in front of the service (a proxy's 502 page):
  // named by what its status means to a caller.
  const code = (typeof body.code === 'string' ? body.code : fallbackCode(res.status)) as ErrorCode;
  const field = typeof body.field === 'string' ? body.field : undefined;
  return new WorkflowRunError(res.status, code, message, field, idempotencyKey, retryAfter);
}

/** Retry-After as seconds: a number of seconds or an HTTP date. */
export function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

function fallbackCode(status: number): ErrorCode {
  if (status === 429) return 'rate_limited';
  if (status === 502 || status === 503 || status === 504) return 'unavailable';
  return 'internal';
}
