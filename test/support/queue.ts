// The test's own view of the runs queue in a private Redis: job counts, and a global pause.
import { Queue } from 'bullmq';
import { RUNS_QUEUE, type RunJobData } from '../../src/queue.js';
import { testEnv } from './env.js';

export function openRunsQueue(redisUrl: string): Queue<RunJobData> {
  const queue = new Queue<RunJobData>(RUNS_QUEUE, {
    connection: { url: redisUrl, maxRetriesPerRequest: 1 },
    prefix: testEnv.QUEUE_PREFIX,
  });
  queue.on('error', () => undefined); // the tests break this Redis on purpose
  return queue;
}
