// The drain's floor: what the worker's own statements cost MariaDB, and how fast they go, with
// no worker at work. The same backlog as the worker phase's is stored, every run's change is
// worked out before the clock starts (read, applied, written as SQL by the worker's own code:
// applyPending, RunStore.planApplied), and then only the statements are sent,
// as a worker sends them: each turn reads the organization's oldest owed runs (the turn's
// SELECT, its rows thrown away), then writes them in two batches at once on a pool that allows
// several statements a query, each batch's UPDATE and then its events in one transaction.
// So the floor is what the drain would come to were the worker's CPU nothing: the target
// "a drain at 1.2 × the peer" can be set beside it (docs/performance.md: the drain's floor).
import type { Db } from '../../src/db.js';
import { fromRow } from '../../src/runs/run-columns.js';
import type { AppliedWrite } from '../../src/runs/run-sql.js';
import { applyPending } from '../../src/runs/run-state.js';
import { RunStore } from '../../src/runs/run-store.js';
import { APPLY_BATCH, APPLY_IN_FLIGHT } from '../../workers/run-applier.js';
import { countPending } from '../backlog.js';
import { CpuMeter, databasePid } from '../cpu.js';
import { round } from '../stats.js';

export interface DrainFloor {
  runs: number;
  runsPerSecond: number;
  /** MariaDB's CPU µs per run while the statements were sent, and the sender's. */
  cpuUsPerRun: Record<string, number>;
}

/** Writes the organization's owed runs (stored, pending) as a worker would, timed. */
export async function measureDrainFloor(deps: {
  /** A pool that allows several statements a query, as a worker's. */
  pool: Db;
  organizationId: string;
  runs: number;
}): Promise<DrainFloor> {
  const { pool, organizationId } = deps;
  const store = new RunStore(pool, { oneTrip: true, writeTimeoutMs: 30_000 });
  const turnRuns = APPLY_BATCH * APPLY_IN_FLIGHT;
  // Untimed: every owed run, in the order the turns will take them, and its write.
  const rows = await store.owedRuns(organizationId, deps.runs);
  if (rows.length !== deps.runs) throw new Error(`drain floor: ${rows.length} owed runs`);
  const pagesOf = await store.templatesFor(rows);
  const now = new Date();
  const turns: Array<Array<AppliedWrite>> = [];
  for (let i = 0; i < rows.length; i += turnRuns) {
    const batches: Array<AppliedWrite> = [];
    for (let j = i; j < Math.min(i + turnRuns, rows.length); j += APPLY_BATCH) {
      const changes = rows.slice(j, Math.min(j + APPLY_BATCH, i + turnRuns)).map((row) => {
        const before = fromRow(row, pagesOf);
        return { before, after: applyPending(before, now) };
      });
      batches.push(await store.planApplied(changes));
    }
    turns.push(batches);
  }

  const meter = new CpuMeter(new Map([...databasePid(), ['sender', process.pid]]));
  const began = performance.now();
  for (const batches of turns) {
    await store.owedRuns(organizationId, turnRuns);
    await Promise.all(batches.map((write) => store.sendApplied(write)));
  }
  const seconds = (performance.now() - began) / 1000;
  const cpuUsPerRun = meter.usPer(rows.length);
  const left = await countPending(pool, organizationId);
  if (left !== 0) throw new Error(`drain floor: ${left} runs left owed`);
  return { runs: rows.length, runsPerSecond: round(rows.length / seconds, 0), cpuUsPerRun };
}
