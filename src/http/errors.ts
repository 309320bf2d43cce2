// The one place where errors meet HTTP: every code a client can meet, with its status. The
// domain's refusals (DomainError, src/errors.ts) are mapped here; the HTTP layer's own
// refusals (reading, authenticating and limiting a request) are HttpErrors with codes of this
// table. The table of error codes in docs/api.md lists exactly these (a test holds them together).
import { DomainError, type DomainErrorCode } from '../errors.js';

/** What a code means for HTTP: its status, and a few words for the API document. */
interface ErrorInfo {
  status: number;
  meaning: string;
}

/** Each refusal the domain makes: a new domain code does not compile without its entry. */
const DOMAIN_ERRORS: Record<DomainErrorCode, ErrorInfo> = {
  invalid_body: { status: 400, meaning: 'a body field breaks its schema (see field)' },
  invalid_query: {
    status: 400,
    meaning: 'a query parameter is not valid or not known (see field)',
  },
  unknown_template: { status: 400, meaning: 'no such template in this organization' },
  unknown_template_version: {
    status: 400,
    meaning: 'workflow_template_version names no version of the template',
  },
  duplicate_page_name: { status: 400, meaning: 'two pages of the template share a name' },
  duplicate_input_id: { status: 400, meaning: 'two input fields of the template share an inputId' },
  unknown_input_field: { status: 400, meaning: 'an input_fields key the template or step lacks' },
  unknown_page: { status: 400, meaning: 'a user_assignments key that is not a page' },
  missing_required_field: { status: 400, meaning: 'a required field of the step has no value' },
  decision_required: {
    status: 400,
    meaning: 'completing an approval step takes a decision (approved or rejected)',
  },
  decision_not_taken: {
    status: 400,
    meaning: 'a decision or comment was given for a step that is not an approval',
  },
  invalid_field_value: {
    status: 400,
    meaning: "a value does not parse as its field's type, or breaks one of its limits",
  },
  invalid_template_field: {
    status: 400,
    meaning:
      'a field or page of the template is not well defined: options, limits, pattern or default that its type does not take or that do not hold together; approval settings on a page that is no approval, a rejection that reopens no earlier page, candidates from a field that names no people, escalations without a due time',
  },
  invalid_rule: {
    status: 400,
    meaning:
      'a rule of the template names a page or field that does not exist, tests a value not known yet when it is evaluated, or compares across types',
  },
  invalid_page_map: {
    status: 400,
    meaning:
      'page_map names a page neither version has, maps two pages onto one, or the mapped pages would change their order',
  },
  invalid_cron: {
    status: 400,
    meaning: 'cron is not a cron expression of 5 fields (the message says what is wrong)',
  },
  invalid_schedule: {
    status: 400,
    meaning:
      'a schedule without a cadence or with two (cron and interval_seconds), end_at not after start_at, or a backfill range that is not in the past',
  },
  backfill_too_large: {
    status: 400,
    meaning: 'a backfill range holding more than 1,000 scheduled times',
  },
  invalid_url: { status: 400, meaning: 'a webhook URL the policy refuses' },
  expiry_in_past: { status: 400, meaning: 'expires_at is not in the future' },
  filter_required: {
    status: 400,
    meaning: 'a bulk action needs a filter of at least one parameter',
  },
  invalid_time_zone: { status: 400, meaning: 'not an IANA time zone this service knows' },
  scope_not_held: {
    status: 403,
    meaning: 'the key would grant a scope it does not hold itself (named)',
  },
  expiry_not_held: {
    status: 403,
    meaning: 'a key can give a new key no later expiry than its own',
  },
  run_not_found: { status: 404, meaning: 'no such run in this organization' },
  endpoint_not_found: { status: 404, meaning: 'no such webhook endpoint in this organization' },
  delivery_not_found: { status: 404, meaning: 'no such webhook delivery in this organization' },
  api_key_not_found: { status: 404, meaning: 'no such API key in this organization' },
  template_not_found: { status: 404, meaning: 'no such template in this organization' },
  template_version_not_found: { status: 404, meaning: 'the template has no such version' },
  bulk_action_not_found: { status: 404, meaning: 'no such bulk action in this organization' },
  schedule_not_found: { status: 404, meaning: 'no such schedule in this organization' },
  run_not_started: { status: 409, meaning: 'the run is still pending; retry shortly' },
  run_not_active: { status: 409, meaning: 'the run has ended' },
  completion_pending: { status: 409, meaning: 'a completion already waits for a worker' },
  step_not_current: { status: 409, meaning: 'step_name is not the current step' },
  step_already_claimed: {
    status: 409,
    meaning: 'someone else holds the step; claim with allow_override to take it',
  },
  step_not_held: { status: 409, meaning: 'the step is not held by the user_id given' },
  run_not_cancellable: { status: 409, meaning: 'the run has ended' },
  run_not_retryable: { status: 409, meaning: 'the run is not failed, or holds no failed change' },
  run_not_migratable: {
    status: 409,
    meaning:
      'the run has ended (only a pending or active run moves), or no longer uses from_version',
  },
  migration_same_version: { status: 409, meaning: 'the run already uses to_version' },
  migration_step_unmapped: {
    status: 409,
    meaning: 'the step the run is at maps to no page of the target version (named)',
  },
  migration_incompatible_value: {
    status: 409,
    meaning:
      "a value of the run that the target version's field refuses (named); drop_incompatible drops it",
  },
  run_changed_concurrently: {
    status: 409,
    meaning: 'the run kept changing meanwhile; nothing was done, retrying is safe',
  },
  endpoint_limit_reached: {
    status: 409,
    meaning: 'the organization has as many endpoints as it may',
  },
  endpoint_disabled: { status: 409, meaning: "the delivery's endpoint is disabled" },
  api_key_inactive: {
    status: 409,
    meaning: 'the key is revoked, expired or already replaced by a roll',
  },
  template_version_conflict: {
    status: 409,
    meaning: 'expected_version is not the latest version: another was saved first',
  },
  template_archived: { status: 409, meaning: 'the template is archived: it takes no new runs' },
  template_changed_concurrently: {
    status: 409,
    meaning:
      'the template kept changing while the run was made; nothing was done, retrying is safe',
  },
  invalid_last_event_id: { status: 400, meaning: 'Last-Event-ID is not an event id' },
  too_many_streams: {
    status: 429,
    meaning: 'the key holds as many open event streams as it may (STREAM_MAX_PER_KEY)',
  },
  timed_out: { status: 503, meaning: 'not finished in time; nothing was done' },
};

/** The refusals of the HTTP layer itself, and the answers to failures of the service. */
const HTTP_ERRORS = {
  malformed_request: { status: 400, meaning: "Node's HTTP parser refused the request" },
  invalid_json: { status: 400, meaning: 'the body is not JSON' },
  invalid_utf8: { status: 400, meaning: 'the body is not UTF-8' },
  invalid_unicode: { status: 400, meaning: 'a string holds a lone surrogate' },
  aborted: { status: 400, meaning: 'the client closed the request mid-body' },
  duplicate_header: { status: 400, meaning: 'Authorization or Idempotency-Key sent twice' },
  invalid_idempotency_key: { status: 400, meaning: 'the Idempotency-Key is malformed' },
  invalid_cursor: { status: 400, meaning: 'the cursor is not one this service made' },
  unauthorized: { status: 401, meaning: "the operators' board needs the operator credential" },
  forbidden: { status: 403, meaning: 'missing, unknown or revoked API key' },
  api_key_expired: { status: 403, meaning: 'the API key has expired (or its roll overlap ended)' },
  insufficient_scope: { status: 403, meaning: "the key lacks the operation's scope (named)" },
  route_not_found: { status: 404, meaning: 'no such path' },
  method_not_allowed: { status: 405, meaning: 'the path takes another method' },
  body_timeout: { status: 408, meaning: 'the body did not arrive in time; nothing was done' },
  request_timeout: { status: 408, meaning: 'the headers did not arrive in time' },
  idempotency_key_in_flight: {
    status: 409,
    meaning: 'a request with this Idempotency-Key is still being handled',
  },
  payload_too_large: { status: 413, meaning: 'the body is larger than BODY_LIMIT_BYTES' },
  unsupported_media_type: { status: 415, meaning: 'the body is not declared as JSON' },
  unsupported_charset: { status: 415, meaning: 'a charset other than UTF-8' },
  idempotency_key_reused: {
    status: 422,
    meaning: 'the Idempotency-Key was used with another endpoint or body',
  },
  rate_limited: { status: 429, meaning: "the key's request limit is spent (see Retry-After)" },
  headers_too_large: { status: 431, meaning: 'the request headers are too large' },
  internal: { status: 500, meaning: 'a defect of the service' },
  outcome_unknown: {
    status: 500,
    meaning: 'the commit was not confirmed: the change may have been made',
  },
  not_implemented: { status: 501, meaning: 'an HTTP method the service does not know' },
  unavailable: { status: 503, meaning: 'MySQL unreachable; nothing was done' },
  not_ready: { status: 503, meaning: '/readyz: MySQL or Redis away, warming up, or shutting down' },
} as const satisfies Record<string, ErrorInfo>;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;
export type ErrorCode = DomainErrorCode | HttpErrorCode;

/** Every code a client can meet, with its status and meaning. */
export const ERRORS: Readonly<Record<ErrorCode, ErrorInfo>> = { ...DOMAIN_ERRORS, ...HTTP_ERRORS };

/**
 * Codes that answer no operation in particular: the HTTP parser's, the router's, /readyz and
 * the operators' board. Every other code is listed under the operations that can give it.
 */
export const GENERAL_ERROR_CODES: readonly ErrorCode[] = [
  'malformed_request',
  'request_timeout',
  'headers_too_large',
  'route_not_found',
  'method_not_allowed',
  'not_implemented',
  'not_ready',
  'unauthorized',
];

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
    this.status = ERRORS[code].status;
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
