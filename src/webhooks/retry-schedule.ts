// When a failed delivery is tried again: 3× longer after each failure, from
// WEBHOOK_BACKOFF_BASE_MS, capped at 4320× the base (6 h for the default 5 s), each delay
// spread by ±25% so that deliveries that failed together (a receiver down) do not come back
// together. With the defaults, 12 attempts span about 22 hours.
const FACTOR = 3;
const CAP = 4320;
const JITTER = 0.25;

/** The delay before attempt number `attemptsMade + 1`, after `attemptsMade` failures. */
export function retryDelayMs(attemptsMade: number, baseMs: number, random = Math.random): number {
  const plain = Math.min(baseMs * FACTOR ** Math.max(0, attemptsMade - 1), baseMs * CAP);
  return Math.round(plain * (1 - JITTER + 2 * JITTER * random()));
}
