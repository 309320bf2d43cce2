// The one place where errors meet HTTP: every code a client can meet, with its status. The
// domain's refusals (DomainError, src/errors.ts) are mapped here; the HTTP layer's own
// refusals (reading, authenticating and limiting a request) are HttpErrors with codes of this
// table. The README's table of error codes lists exactly these (a test holds them together).
import { DomainError, type DomainErrorCode } from '../errors.js';

/** The status of each refusal the domain makes: a new domain code does not compile without one. */
const DOMAIN_STATUS: Record<DomainErrorCode, number> = {
  invalid_body: 400,
  invalid_query: 400,
  unknown_template: 400,
  unknown_input_field: 400,
  unknown_page: 400,
  missing_required_field: 400,
  invalid_url: 400,
  run_not_found: 404,
  endpoint_not_found: 404,
  delivery_not_found: 404,
  run_not_started: 409,
  run_not_active: 409,
  completion_pending: 409,
  step_not_current: 409,
  run_not_cancellable: 409,
  run_not_retryable: 409,
  run_changed_concurrently: 409,
  endpoint_limit_reached: 409,
  endpoint_disabled: 409,
  timed_out: 503,
};

/** The refusals of the HTTP layer itself, and the answers to failures of the service. */
const HTTP_STATUS = {
  malformed_request: 400,
  invalid_json: 400,
  invalid_utf8: 400,
  invalid_unicode: 400,
  aborted: 400,
  duplicate_header: 400,
  invalid_idempotency_key: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  forbidden: 403,
  route_not_found: 404,
  method_not_allowed: 405,
  body_timeout: 408,
  request_timeout: 408,
  idempotency_key_in_flight: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unsupported_charset: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  outcome_unknown: 500,
  not_implemented: 501,
  unavailable: 503,
  not_ready: 503,
} as const;

export type HttpErrorCode = keyof typeof HTTP_STATUS;
export type ErrorCode = DomainErrorCode | HttpErrorCode;

/** Every code a client can meet, with its status. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  ...DOMAIN_STATUS,
  ...HTTP_STATUS,
};

/** An error body: what went wrong for a person, for a program, and where. */
export interface ErrorBody {
  message: string;
  code: ErrorCode;
  /** The request field at fault, as a JSON Pointer (`/input_fields/email`). */
  field?: string;
}

export function errorBody(code: ErrorCode, message: string, field?: string): ErrorBody {
  return field === undefined ? { message, code } : { message, code, field };
}

/** A refusal to answer with its code's status, its body and any headers it needs. */
export class HttpError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly field?: string,
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = ERROR_STATUS[code];
  }

  toJSON(): ErrorBody {
    return errorBody(this.code, this.message, this.field);
  }
}

/** A domain refusal as HTTP. */
export function fromDomainError(err: DomainError): HttpError {
  return new HttpError(err.code, err.message, {}, err.field);
}

export const payloadTooLarge = (limit: number) =>
  new HttpError('payload_too_large', `request body is larger than ${limit} bytes`);
export const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError('rate_limited', 'too many requests for this API key', {
    'Retry-After': String(retryAfterSeconds),
  });
