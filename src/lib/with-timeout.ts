/** Resolves with the promise's value, or rejects after ms: Redis must never hold up a caller. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Whether a check (a ping, a SELECT 1) answers within ms: for readiness and for metrics. */
export async function answersWithin(check: () => Promise<unknown>, ms = 1000): Promise<boolean> {
  try {
    await withTimeout(check(), ms, 'check');
    return true;
  } catch {
    return false;
  }
}
