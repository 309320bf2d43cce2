// The replica phase: list and run-in-full throughput of one API process reading the primary
// alone, and of one reading from a replica (DATABASE_REPLICA_URLS, with its read-your-writes
// wait), in one run, on a primary and replica of the bench's own (test/support/mariadb-pair.ts:
// the machine's MariaDB writes no binary log). The two processes are measured in turn, twice,
// so that noise falls on both alike. Also reported: the rows the primary read per request,
// which is what a replica takes off it.
import { loadConfig } from '../../src/config.js';
import { createDb } from '../../src/db.js';
import { migrate } from '../../src/migrate.js';
import { MariadbPair } from '../../test/support/mariadb-pair.js';
import { createTenant } from '../fixtures.js';
import type { GetLoadOptions, GetLoadResult } from '../get-load.js';
import { runChildScript, type BenchProcess } from '../processes.js';
import { seedRuns } from '../seed-runs.js';
import { round } from '../stats.js';

export interface ReplicaTargetResult extends GetLoadResult {
  /** Rows the primary read (Rows_read) per request answered. */
  primaryRowsPerRequest: number;
}

export interface ReplicaPhaseResult {
  runs: number;
  connections: number;
  seconds: number;
  list: { primary: ReplicaTargetResult; replica: ReplicaTargetResult };
  full: { primary: ReplicaTargetResult; replica: ReplicaTargetResult };
  /** Throughput with the replica over without, in this run. */
  ratio: { list: number; full: number };
}

export async function measureReplica(deps: {
  quick: boolean;
  /** Starts an API process with this environment (over the bench's own). */
  startApi: (
    name: string,
    env: Record<string, string>,
  ) => Promise<{ proc: BenchProcess; url: string }>;
  log: (line: string) => void;
}): Promise<ReplicaPhaseResult> {
  const runs = deps.quick ? 2000 : 20000;
  const connections = 16;
  const seconds = deps.quick ? 4 : 10;
  const pair = await MariadbPair.start('wrs_bench');
  const procs: BenchProcess[] = [];
  try {
    const config = loadConfig({ DATABASE_URL: pair.url('primary') });
    await migrate(config);
    const db = createDb({ ...config, dbPoolMax: 2 });
    let tenant;
    let runId: string;
    try {
      tenant = await createTenant(db, 'Bench replica organization');
      await seedRuns(db, tenant, runs);
      const [rows] = (await db.raw('SELECT id FROM workflow_runs ORDER BY seq DESC LIMIT 1')) as [
        Array<{ id: string }>,
      ];
      runId = rows[0]!.id;
    } finally {
      await db.destroy();
    }
    await pair.waitCaughtUp(120);
    const [alone, withReplica] = await Promise.all([
      deps.startApi('api-primary-only', { DATABASE_URL: pair.url('primary') }),
      deps.startApi('api-with-replica', pair.env),
    ]);
    procs.push(alone.proc, withReplica.proc);
    // The first replica check puts the replica in service.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const rowsRead = () =>
      Number(pair.primary.sql("SHOW GLOBAL STATUS LIKE 'Rows_read'").split('\t')[1]);
    const load = async (base: string, path: string): Promise<ReplicaTargetResult> => {
      const before = rowsRead();
      const result = await runChildScript<GetLoadResult>(
        'get-load',
        'bench/get-load.js',
        { url: `${base}${path}`, key: tenant.key, connections, seconds } satisfies GetLoadOptions,
        (seconds + 30) * 1000,
      );
      const requests = Math.max(1, result.requestsPerSecond * seconds);
      return { ...result, primaryRowsPerRequest: round((rowsRead() - before) / requests, 1) };
    };
    const best = (a: ReplicaTargetResult, b: ReplicaTargetResult) =>
      a.requestsPerSecond >= b.requestsPerSecond ? a : b;
    const paths = { list: '/get-workflow-runs?limit=20', full: `/get-workflow-run?id=${runId}` };
    const out = {} as Pick<ReplicaPhaseResult, 'list' | 'full'>;
    for (const [name, path] of Object.entries(paths) as Array<['list' | 'full', string]>) {
      // Warm both (pools, caches), then alternate: primary, replica, primary, replica.
      await load(alone.url, path);
      await load(withReplica.url, path);
      const p1 = await load(alone.url, path);
      const r1 = await load(withReplica.url, path);
      const p2 = await load(alone.url, path);
      const r2 = await load(withReplica.url, path);
      out[name] = { primary: best(p1, p2), replica: best(r1, r2) };
      const { primary, replica } = out[name];
      deps.log(
        `  ${name.padEnd(5)} primary only ${primary.requestsPerSecond} req/s (p99 ${primary.p99} ms, ${primary.primaryRowsPerRequest} primary rows/req), ` +
          `with replica ${replica.requestsPerSecond} req/s (p99 ${replica.p99} ms, ${replica.primaryRowsPerRequest} primary rows/req); ` +
          `failed ${primary.failed + replica.failed}`,
      );
    }
    return {
      runs,
      connections,
      seconds,
      ...out,
      ratio: {
        list: round(out.list.replica.requestsPerSecond / out.list.primary.requestsPerSecond, 2),
        full: round(out.full.replica.requestsPerSecond / out.full.primary.requestsPerSecond, 2),
      },
    };
  } finally {
    await Promise.all(procs.map((proc) => proc.stop()));
    await pair.stop();
  }
}
