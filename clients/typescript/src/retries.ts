// When a call is tried again, and how long to wait first. Pure: no I/O, no clock.

/** Why an attempt failed, as far as retrying cares. */
export type Failure =
  | { kind: 'connection' }
  | { kind: 'timeout' }
  | { kind: 'status'; status: number; code: string | undefined; retryAfterSeconds?: number };

/**
 * Whether the failure may be retried. Each retried case is one where the request either was not
 * applied or is applied once whatever happens (every POST carries its Idempotency-Key):
 * - no answer (connection error, time-out): the change may or may not have been made;
 * - 429 rate_limited and 503 unavailable: nothing was done;
 * - 500 outcome_unknown: the database did not confirm the commit;
 * - 409 idempotency_key_in_flight on a retry: the earlier attempt of this very call is still
 *   being handled (its connection dropped, the service goes on); waiting gets its answer.
 * Never another 4xx: the request itself is wrong, and sending it again changes nothing.
 */
export function isRetryable(failure: Failure, isRetry: boolean): boolean {
  if (failure.kind !== 'status') return true;
  const { status, code } = failure;
  if (status === 429 || status === 503) return true;
  if (status === 500) return code === 'outcome_unknown';
  return status === 409 && code === 'idempotency_key_in_flight' && isRetry;
}

/**
 * The wait before retry number `retry` (1 for the first): exponential from 250 ms with full
 * jitter over its upper half (so clients that failed together do not come back together), capped
 * at `maxMs`; a Retry-After the service sent is the floor. `random` is in [0, 1).
 */
export function retryDelayMs(
  retry: number,
  failure: Failure,
  maxMs: number,
  random: number,
): number {
  const ceiling = Math.min(maxMs, 250 * 2 ** (retry - 1));
  const jittered = ceiling / 2 + (ceiling / 2) * random;
  const asked = failure.kind === 'status' ? failure.retryAfterSeconds : undefined;
  return asked === undefined ? jittered : Math.max(asked * 1000, jittered);
}
