// Applies runs' pending changes in batches: the runs named by the jobs in hand are read in one
// SELECT and written back in one guarded UPDATE. A run whose change another worker already
// applied is skipped by the guard, so delivering a job twice changes nothing.
import { Batcher } from '../src/lib/batcher.js';
import { applyPending, hasPendingChange, RunStateError } from '../src/runs/run-state.js';
import { fromRow, type RunStore } from '../src/runs/run-store.js';

export type ApplyOutcome = 'applied' | 'nothing-owed' | 'missing';

/** A run that cannot be applied: carries the applied_seq read, for marking it failed. */
export class RunApplyError extends Error {
  constructor(
    message: string,
    readonly appliedSeq: number,
  ) {
    super(message);
    this.name = 'RunApplyError';
  }
}

export class RunApplier {
  private readonly batcher: Batcher<string, ApplyOutcome>;

  constructor(private readonly store: RunStore) {
    this.batcher = new Batcher((ids) => this.applyBatch(ids), { maxBatch: 250, maxInFlight: 2 });
  }

  apply(runId: string): Promise<ApplyOutcome> {
    return this.batcher.submit(runId);
  }

  private async applyBatch(ids: string[]): Promise<Array<ApplyOutcome | Error>> {
    const unique = [...new Set(ids)];
    const rows = await this.store.findRowsByIds(unique);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const outcomes = new Map<string, ApplyOutcome | Error>();
    const changes: Parameters<RunStore['storeApplied']>[0] = [];
    const now = new Date();
    for (const id of unique) {
      const row = byId.get(id);
      if (!row) {
        outcomes.set(id, 'missing');
        continue;
      }
      try {
        const run = fromRow(row);
        if (!hasPendingChange(run)) {
          outcomes.set(id, 'nothing-owed');
          continue;
        }
        changes.push({ expectedAppliedSeq: run.appliedSeq, run: applyPending(run, now) });
        outcomes.set(id, 'applied');
      } catch (err) {
        if (!(err instanceof RunStateError)) throw err;
        outcomes.set(id, new RunApplyError(err.message, Number(row.applied_seq)));
      }
    }
    await this.store.storeApplied(changes);
    return ids.map((id) => outcomes.get(id)!);
  }
}
