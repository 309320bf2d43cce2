// Errors of the domain and of the infrastructure. A refusal is a DomainError: a stable
// machine-readable code, a message for a person and, when one field of the request is at
// fault, that field as a JSON Pointer. Domain code knows nothing of HTTP: src/http/ maps each
// code to its status in one place.

/** Every refusal the domain (services, state machine, validation) can make, by its code. */
export const DOMAIN_ERROR_CODES = [
  'invalid_body',
  'invalid_query',
  'unknown_template',
  'unknown_template_version',
  'duplicate_page_name',
  'duplicate_input_id',
  'unknown_input_field',
  'unknown_page',
  'missing_required_field',
  'decision_required',
  'decision_not_taken',
  'invalid_field_value',
  'invalid_template_field',
  'invalid_rule',
  'invalid_page_map',
  'invalid_cron',
  'invalid_schedule',
  'backfill_too_large',
  'invalid_url',
  'expiry_in_past',
  'filter_required',
  'invalid_time_zone',
  'scope_not_held',
  'expiry_not_held',
  'run_not_found',
  'endpoint_not_found',
  'delivery_not_found',
  'api_key_not_found',
  'template_not_found',
  'template_version_not_found',
  'bulk_action_not_found',
  'schedule_not_found',
  'run_not_started',
  'run_not_active',
  'completion_pending',
  'step_not_current',
  'step_already_claimed',
  'step_not_held',
  'run_not_cancellable',
  'run_not_retryable',
  'run_not_migratable',
  'migration_same_version',
  'migration_step_unmapped',
  'migration_incompatible_value',
  'run_changed_concurrently',
  'endpoint_limit_reached',
  'endpoint_disabled',
  'api_key_inactive',
  'template_version_conflict',
  'template_archived',
  'template_changed_concurrently',
  'invalid_last_event_id',
  'too_many_streams',
  'timed_out',
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/** A request the domain refuses; nothing was done. */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    /** The field at fault, as a JSON Pointer into the request (`/input_fields/email`). */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** A JSON Pointer to a field: its path segments escaped (RFC 6901). */
export function pointer(...segments: Array<string | number>): string {
  return segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

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
  // 1047: a Galera node outside the primary component ("WSREP has not yet prepared node for
  // application use") takes no queries until the cluster has a majority again.
  'ER_UNKNOWN_COM_ERROR',
  // A Galera node cut off from the primary component during a statement's replication.
  'ER_ERROR_DURING_COMMIT',
]);

/** What a 503 tells the caller of a failure of the infrastructure. */
export function unavailableMessage(err: unknown): string {
  if (err instanceof Error && (err as Error & { code?: unknown }).code === 'ER_UNKNOWN_COM_ERROR') {
    return (
      'service temporarily unavailable: the database cluster has lost the majority of its ' +
      'nodes and takes no reads or writes until it has one again; nothing was done, try again ' +
      'shortly'
    );
  }
  return 'service temporarily unavailable, try again shortly';
}

/**
 * A transaction the database rolled back whole to settle a write conflict: an InnoDB deadlock,
 * or on Galera a certification conflict at COMMIT (both 1213). Nothing of it was stored.
 */
export function isWriteConflict(err: unknown): boolean {
  return err instanceof Error && (err as Error & { code?: unknown }).code === 'ER_LOCK_DEADLOCK';
}

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
