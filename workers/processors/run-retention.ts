// Processor of "run retention" jobs (src/jobs/run-retention.ts): one retention pass
// (src/retention/retention-pass.ts), deciding from MySQL what is due.
import type { Job } from 'bullmq';
import type { RunRetentionData } from '../../src/jobs/run-retention.js';
import type { RetentionPass } from '../../src/retention/retention-pass.js';

export function runRetentionProcessor(deps: { pass: RetentionPass }) {
  return async (_job: Job<RunRetentionData>) => deps.pass.run();
}
