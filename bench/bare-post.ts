// A bare signed POST, the way the service's worker sends a delivery, and a pool that runs
// many tasks a few at a time: for the webhook phase (its creates, its latency loop) and its
// baseline (bench/bare-poster.ts).
import { type Agent, request as httpRequest } from 'node:http';
import { signDelivery } from '../src/webhooks/signing.js';

/** A bare POST of a signed body, the way the service sends one. */
export function barePost(
  url: string,
  agent: Agent,
  secret: string,
  id: string,
  body: string,
): Promise<void> {
  const headers = signDelivery([secret], id, new Date(), body);
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `task(i)` for i < count, `concurrency` at a time. */
export async function inPool(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}
