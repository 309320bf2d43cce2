// The statuses of a run and of its steps: the one vocabulary that the record, the events, the
// filters and the schemas share, in a module of its own that imports nothing.
export const RUN_STATUSES = ['pending', 'active', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type StepStatus = 'waiting' | 'active' | 'completed' | 'cancelled';

/** True while the run can still change by itself or be moved on (not ended). */
export function isOpen(status: RunStatus): boolean {
  return status === 'pending' || status === 'active';
}
