// The test's own view of the runs queue in a private Redis: job counts, and a global pause.
import { type ConnectionOptions, Queue } from 'bullmq';
import { applyRunsJob, type ApplyRunsData } from '../../src/jobs/apply-runs.js';
import { testEnv } from './env.js';

export function openRunsQueue(redis: { connection(): ConnectionOptions }): Queue<ApplyRunsData> {
  const queue = new Queue<ApplyRunsData>(applyRunsJob.queue, {
    connection: redis.connection(),
    prefix: testEnv.QUEUE_PREFIX,
  });
  queue.on('error', () => undefined); // the tests break this Redis on purpose
  return queue;
}
