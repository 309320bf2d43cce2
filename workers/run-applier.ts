// Applies runs' pending changes in batches: the runs named by the jobs in hand are read in one
// SELECT and written back, with their events, in one transaction (RunStore.storeApplied). A
// run whose change another worker already applied is skipped by the guard, so delivering a
// job twice changes nothing.
import { OutcomeUnknownError, isTransientError } from '../src/errors.js';
import { countChange } from '../src/metrics/metrics.js';
import { Batcher } from '../src/lib/batcher.js';
import { applyPending } from '../src/runs/run-state.js';
import { hasPendingChange, RunStateError, type RunRecord } from '../src/runs/run-record.js';
import { fromRow, type RunRow } from '../src/runs/run-columns.js';
import type { AppliedChange } from '../src/runs/run-sql.js';
import type { RunStore } from '../src/runs/run-store.js';

/** Most runs the applier writes in one transaction. */
export const APPLY_BATCH = 250;
/** The applier's transactions in flight at once. */
export const APPLY_IN_FLIGHT = 2;

/** A run to apply, with its row when the caller has it. */
interface ToApply {
  id: string;
  row?: RunRow;
}

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
  private readonly batcher: Batcher<ToApply, ApplyOutcome>;

  constructor(
    private readonly store: RunStore,
    /** Told of the runs whose change was stored, after the commit (due timers, webhooks); never throws. */
    private readonly onApplied: (runs: RunRecord[]) => Promise<void> = async () => undefined,
  ) {
    this.batcher = new Batcher((items) => this.applyBatch(items), {
      maxBatch: APPLY_BATCH,
      maxInFlight: APPLY_IN_FLIGHT,
    });
  }

  /**
   * Applies the run's waiting change. `row`, when the caller has just read it (a turn reads its
   * runs' rows), spares the batch reading it again; the guarded write checks it as it would
   * one the batch read.
   */
  apply(runId: string, row?: RunRow): Promise<ApplyOutcome> {
    return this.batcher.submit({ id: runId, row });
  }

  private async applyBatch(items: ToApply[]): Promise<Array<ApplyOutcome | Error>> {
    const ids = items.map((item) => item.id);
    const unique = [...new Set(ids)];
    const byId = new Map<string, RunRow>();
    for (const { id, row } of items) if (row) byId.set(id, row);
    const unread = unique.filter((id) => !byId.has(id));
    for (const row of await this.store.findRowsByIds(unread)) byId.set(row.id, row);
    const pagesOf = await this.store.templatesFor([...byId.values()]);
    const outcomes = new Map<string, ApplyOutcome | Error>();
    const changes: AppliedChange[] = [];
    const now = new Date();
    for (const id of unique) {
      const row = byId.get(id);
      if (!row) {
        outcomes.set(id, 'missing');
        continue;
      }
      try {
        const run = fromRow(row, pagesOf);
        if (!hasPendingChange(run)) {
          outcomes.set(id, 'nothing-owed');
          continue;
        }
        changes.push({ before: run, after: applyPending(run, now) });
        outcomes.set(id, 'applied');
      } catch (err) {
        if (!(err instanceof RunStateError)) throw err;
        outcomes.set(id, new RunApplyError(err.message, Number(row.applied_seq)));
      }
    }
    const stored = await this.storeEach(changes, outcomes);
    // Not awaited: what follows a commit (due timers) must not hold up the next batch.
    void this.onApplied(stored);
    return ids.map((id) => outcomes.get(id)!);
  }

  /**
   * Stores the batch in one statement; if the database refuses it for a reason that is not
   * transient (a value it will not take), stores the runs one by one so that only the offending
   * run fails (and, after its attempts, is marked failed) while the others go through.
   */
  private async storeEach(
    changes: AppliedChange[],
    outcomes: Map<string, ApplyOutcome | Error>,
  ): Promise<RunRecord[]> {
    // The runs whose change was written (or that another writer had changed first: either
    // way nothing more is owed for them here).
    try {
      await this.store.storeApplied(changes);
      for (const { before, after } of changes) {
        // applyPending applied the run's pending command: there is one.
        countChange(before.document.pending?.type ?? 'start', after.events);
      }
      return changes.map((c) => c.after);
    } catch (err) {
      if (isTransientError(err) || err instanceof OutcomeUnknownError) throw err;
      if (changes.length > 1) {
        const held: RunRecord[] = [];
        for (const change of changes) held.push(...(await this.storeEach([change], outcomes)));
        return held;
      }
      const change = changes[0]!;
      outcomes.set(
        change.after.id,
        new RunApplyError(
          `could not store the run: ${(err as { sqlMessage?: string }).sqlMessage ?? (err as Error).message.slice(-300)}`,
          change.before.appliedSeq,
        ),
      );
      return [];
    }
  }
}
