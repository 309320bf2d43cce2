// When a worker process is ready to work: each of its BullMQ workers connected with its
// scripts loaded (BullMQ retries its connections itself), and MySQL answering (asked again
// until it does: it may be away when the worker starts) and numbering ids one by one (db.ts,
// checkIdStep: the webhooks and insights it folds read events behind a watermark), with its
// pool opened whole, as an API process's is before /readyz (src/warm-up.ts): a worker back
// from an outage meets a backlog, and its first batches would otherwise wait for connections.
import type { Worker } from 'bullmq';
import { checkIdStep, type Db } from '../src/db.js';
import { openWhole } from '../src/warm-up.js';

const RETRY_MS = 500;

/**
 * Resolves with the milliseconds from the process's start once it is ready, or undefined if
 * it stops first.
 */
export async function whenReady(deps: {
  workers: readonly Pick<Worker, 'waitUntilReady'>[];
  db: Db;
  stopped: () => boolean;
  /** A check that failed (MySQL away, or ids stepped by more than one); asked again. */
  notReady?: (err: unknown) => void;
}): Promise<number | undefined> {
  const mysql = async () => {
    while (!deps.stopped()) {
      try {
        await checkIdStep(deps.db);
        await openWhole(deps.db);
        return;
      } catch (err) {
        deps.notReady?.(err);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  };
  await Promise.all([...deps.workers.map((w) => w.waitUntilReady()), mysql()]);
  return deps.stopped() ? undefined : Math.round(performance.now());
}
