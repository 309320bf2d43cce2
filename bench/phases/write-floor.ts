// What batching can bring MariaDB's CPU per run down to: the service's own writes of runs
// created and started, made in this process through the code the API and the worker use
// (RunStore.insertMany on a pool that allows several statements a query, as the API's batch
// pool; RunStore.owedRuns and RunApplier on a worker's pool), with nothing else at work: no
// HTTP, no Redis, no other process of the service on the cores, one batch after another.
// Each pair of sizes is a number of creates per transaction and of starts per transaction:
// a trickle's, the steady flow's (about 12 and 24: see the steady phase's transactions per
// run), larger ones and a backlog's. So the steady phase's MariaDB cost can be set beside what
// the same rows cost MariaDB on this machine in batches as large as a backlog's. A yardstick
// of the machine is measured with it: MariaDB's CPU per `SELECT 1`, back to back on one
// connection, which moves with the machine's state and not with the service.
import { SYSTEM } from '../../src/audit/actor.js';
import type { Db } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import { RunStore } from '../../src/runs/run-store.js';
import { newRun } from '../../src/runs/run-state.js';
import { RunApplier } from '../../workers/run-applier.js';
import { CpuMeter, databasePid } from '../cpu.js';
import {
  clearRuns,
  INPUT_FIELDS,
  USER_ASSIGNMENTS,
  type Tenant,
  clearHistory,
} from '../fixtures.js';
import { mariadbStatus } from '../round-probes.js';

export interface FloorRow {
  /** Runs per create transaction, and per start transaction. */
  creates: number;
  starts: number;
  runs: number;
  /** MariaDB's CPU µs per run created and started. */
  mariadbUsPerRun: number;
  /** Transactions MariaDB committed per run created and started (Com_commit, server-wide). */
  commitsPerRun: number;
}

export interface FloorPhaseResult {
  rows: FloorRow[];
  /** MariaDB's CPU µs per `SELECT 1`, one connection sending them back to back. */
  selectOneUs: number;
}

/**
 * The steady flow's creates and starts per transaction: about 0.11–0.12 transactions per run
 * created and started in the steady phase.
 */
export const FLOW_SIZES = [12, 24] as const;

/** Creates per transaction and starts per transaction, from a trickle to a backlog's. */
export const FLOOR_SIZES: ReadonlyArray<readonly [number, number]> = [
  [4, 8],
  FLOW_SIZES,
  [32, 64],
  [250, 250],
];

const YARDSTICK_STATEMENTS = 2_000;

export async function measureWriteFloor(deps: {
  /** The bench's pool (one statement a query): the reads and checks. */
  db: Db;
  /** A pool that allows several statements a query: the API's batches and the worker's. */
  pool: Db;
  tenant: Tenant;
  runsPerSize: number;
  sizes?: ReadonlyArray<readonly [number, number]>;
  log: (line: string) => void;
}): Promise<FloorPhaseResult> {
  const { db, pool, tenant, runsPerSize, sizes = FLOOR_SIZES } = deps;
  const api = new RunStore(db, { batches: pool });
  const worker = new RunStore(pool, { oneTrip: true });
  const applier = new RunApplier(worker);
  const mariadb = databasePid();
  // As the API makes them: each run assumes its template's head, which the batch checks.
  const assumption = { templateId: tenant.template.id, latestVersion: tenant.template.version };
  const rows: FloorRow[] = [];
  for (const [creates, starts] of sizes) {
    // Each size from the same empty tables.
    await clearRuns(db);
    await clearHistory(db);
    const commitsBefore = (await mariadbStatus(db)).Com_commit;
    const meter = new CpuMeter(mariadb);
    let created = 0;
    let owed = 0;
    while (created < runsPerSize) {
      const now = new Date();
      const batch = Array.from({ length: Math.min(creates, runsPerSize - created) }, () =>
        newRun(newId(), tenant.orgId, tenant.template, INPUT_FIELDS, USER_ASSIGNMENTS, now, SYSTEM),
      );
      await api.insertMany(batch, [], [assumption]);
      created += batch.length;
      owed += batch.length;
      // A turn takes a full batch of starts, as one finds them in a flow; the last takes the rest.
      while (owed >= starts || (created === runsPerSize && owed > 0)) {
        const read = await worker.owedRuns(tenant.orgId, starts);
        const outcomes = await Promise.all(read.map((row) => applier.apply(row.id, row)));
        const notApplied = outcomes.filter((o) => o !== 'applied');
        if (read.length === 0 || notApplied.length > 0) {
          throw new Error(`write floor: ${read.length} owed runs read, not applied: ${notApplied}`);
        }
        owed -= read.length;
      }
    }
    const cpu = Object.values(meter.usPer(created))[0] ?? NaN;
    const commits = (await mariadbStatus(db)).Com_commit - commitsBefore;
    await checkStarted(db, tenant.orgId, created);
    const row: FloorRow = {
      creates,
      starts,
      runs: created,
      mariadbUsPerRun: cpu,
      commitsPerRun: Math.round((commits / created) * 1000) / 1000,
    };
    deps.log(
      `  ${creates} creates and ${starts} starts a transaction: ${created} runs, MariaDB CPU µs per run created and started ${cpu}, transactions per run ${row.commitsPerRun}`,
    );
    rows.push(row);
  }
  await clearRuns(db);

  const meter = new CpuMeter(mariadb);
  await pool.transaction(async (trx) => {
    for (let i = 0; i < YARDSTICK_STATEMENTS; i++) await trx.raw('SELECT 1');
  });
  const selectOneUs = Object.values(meter.usPer(YARDSTICK_STATEMENTS))[0] ?? NaN;
  deps.log(
    `  yardstick: MariaDB CPU µs per SELECT 1, back to back on one connection ${selectOneUs}`,
  );
  return { rows, selectOneUs };
}

/** That every run measured was created and started, each with its two events. */
async function checkStarted(db: Db, organizationId: string, runs: number): Promise<void> {
  const [[counts]] = (await db.raw(
    `SELECT (SELECT COUNT(*) FROM workflow_runs WHERE organization_id = ? AND status = 'active') AS active,
            (SELECT COUNT(*) FROM workflow_runs WHERE organization_id = ?) AS total,
            (SELECT COUNT(*) FROM run_events e JOIN workflow_runs r ON r.id = e.run_id
              WHERE r.organization_id = ?) AS events`,
    [organizationId, organizationId, organizationId],
  )) as [[{ active: number; total: number; events: number }]];
  const { active, total, events } = counts;
  if (Number(active) !== runs || Number(total) !== runs || Number(events) !== 2 * runs) {
    throw new Error(
      `write floor: ${runs} runs measured, but ${total} stored, ${active} active, ${events} events`,
    );
  }
}
