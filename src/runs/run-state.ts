// The life of a run, as pure functions over an in-memory record: no I/O here, so every rule
// can be tested alone. The API records requested changes (start, complete a step) as the run's
// single pending command; a worker applies it. Only one command waits at a time, so a change
// is applied exactly once and in order: requested_seq = applied_seq + 1 while it waits. Some
// changes are made at once instead (cancel, retry, what the clock owes a step, a claim). Every change
// returns the new record together with the events that describe it (run-events.ts), which
// its writer stores in the same transaction.
//
// Each transition has its file under state/: a new run, a completion requested, the pending
// command applied (entering the next step through state/step-flow.ts, where the template's
// rules decide), and the changes made at once. This module is their one door.
export { newRun } from './state/new-run.js';
export { requestStepCompletion } from './state/complete-request.js';
export { applyPending } from './state/apply-pending.js';
export { cancelRun, failRun, retryRun } from './state/run-actions.js';
export { wakeStep } from './state/step-clock.js';
export { assignStep, claimStep, unclaimStep } from './state/step-people.js';
export { migrateRun, planMigration } from './state/migrate-run.js';
export type { MigrationPlan, MigrationReport, PageMapInput } from './state/migrate-run.js';
