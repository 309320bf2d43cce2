// The statuses of a run and of its steps: the one vocabulary that the record, the events, the
// filters and the schemas share, in a module of its own that imports nothing.
export const RUN_STATUSES = ['pending', 'active', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** skipped: the template's rules hid the step's page when the run reached it. */
export const STEP_STATUSES = ['waiting', 'active', 'completed', 'skipped', 'cancelled'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** True while the run can still change by itself or be moved on (not ended). */
export function isOpen(status: RunStatus): boolean {
  return status === 'pending' || status === 'active';
}
