// What happened inside the service during one create round, to tell where a slow tail comes
// from: the API's event-loop delay and garbage collection (from its /metrics, whose event-loop
// histogram prom-client resets at every read, so a read at the start of a round and one at its
// end cover exactly the round), and MariaDB's counters of flushing, log waits, fsyncs and lock
// waits over the round.
import type { Db } from '../src/db.js';
import { round } from './stats.js';

const MARIADB_COUNTERS = [
  'Innodb_log_waits', // a commit waited for room in the log buffer
  'Innodb_log_writes', // log writes (group commit makes these fewer than commits)
  'Innodb_data_fsyncs', // fsyncs of the log and the data files
  'Innodb_buffer_pool_pages_flushed', // dirty pages written (checkpointing, LRU)
  'Innodb_buffer_pool_wait_free', // a read waited for a free page (flushing too slow)
  'Innodb_buffer_pool_reads', // pages read from disk (not found in the buffer pool)
  'Innodb_checkpoint_age', // bytes of redo since the last checkpoint (a level, not a counter)
  'Innodb_row_lock_waits',
  'Innodb_row_lock_time_max', // milliseconds (a maximum since start, not a counter)
  'Com_commit',
  'Com_insert',
] as const;

type MariadbStatus = Record<(typeof MARIADB_COUNTERS)[number], number>;

/** MariaDB's counters named above, server-wide, now. */
export async function mariadbStatus(db: Db): Promise<MariadbStatus> {
  const [rows] = (await db.raw(
    `SHOW GLOBAL STATUS WHERE Variable_name IN (${MARIADB_COUNTERS.map(() => '?').join(', ')})`,
    [...MARIADB_COUNTERS],
  )) as [Array<{ Variable_name: string; Value: string }>];
  const status = Object.fromEntries(MARIADB_COUNTERS.map((name) => [name, 0])) as MariadbStatus;
  for (const row of rows) status[row.Variable_name as keyof MariadbStatus] = Number(row.Value);
  return status;
}

interface ApiMetrics {
  /** Event-loop delay since the last read, seconds. */
  lagP99: number;
  lagMax: number;
  /** Garbage collection so far: seconds and count, by kind (minor, major, incremental). */
  gcSeconds: Record<string, number>;
  gcCount: Record<string, number>;
}

function parseMetrics(text: string): ApiMetrics {
  const out: ApiMetrics = { lagP99: 0, lagMax: 0, gcSeconds: {}, gcCount: {} };
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const [name = '', value = ''] = line.split(' ');
    const kind = /kind="(\w+)"/.exec(name)?.[1] ?? '';
    if (name === 'nodejs_eventloop_lag_p99_seconds') out.lagP99 = Number(value);
    else if (name === 'nodejs_eventloop_lag_max_seconds') out.lagMax = Number(value);
    else if (name.startsWith('nodejs_gc_duration_seconds_sum')) out.gcSeconds[kind] = Number(value);
    else if (name.startsWith('nodejs_gc_duration_seconds_count')) out.gcCount[kind] = Number(value);
  }
  return out;
}

async function apiMetrics(url: string): Promise<ApiMetrics | undefined> {
  try {
    const reply = await fetch(url);
    return reply.ok ? parseMetrics(await reply.text()) : undefined;
  } catch {
    return undefined;
  }
}

export interface RoundProbe {
  /** API event-loop delay over the round, ms (p99 and max). */
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  /** API garbage collection over the round: ms in all, and major collections (count, ms). */
  gcMs: number;
  majorGcs: number;
  majorGcMs: number;
  /**
   * MariaDB over the round (row_lock_time_max: since the server started; checkpoint_age: at
   * the round's end).
   */
  mariadb: MariadbStatus;
}

/** Starts watching a round; the returned function ends it and gives what was seen. */
export async function watchRound(
  db: Db,
  metricsUrl: string | undefined,
): Promise<() => Promise<RoundProbe>> {
  const before = await mariadbStatus(db);
  const apiBefore = metricsUrl ? await apiMetrics(metricsUrl) : undefined; // resets the lag
  return async () => {
    const after = await mariadbStatus(db);
    const api = metricsUrl ? await apiMetrics(metricsUrl) : undefined;
    const gc = (m: ApiMetrics | undefined, kind?: string) =>
      Object.entries(m?.gcSeconds ?? {})
        .filter(([k]) => kind === undefined || k === kind)
        .reduce((sum, [, s]) => sum + s, 0);
    const mariadb = { ...after };
    for (const name of MARIADB_COUNTERS) {
      if (name !== 'Innodb_row_lock_time_max' && name !== 'Innodb_checkpoint_age') {
        mariadb[name] = after[name] - before[name];
      }
    }
    return {
      eventLoopP99Ms: round((api?.lagP99 ?? Number.NaN) * 1000, 1),
      eventLoopMaxMs: round((api?.lagMax ?? Number.NaN) * 1000, 1),
      gcMs: round((gc(api) - gc(apiBefore)) * 1000, 0),
      majorGcs: (api?.gcCount.major ?? 0) - (apiBefore?.gcCount.major ?? 0),
      majorGcMs: round((gc(api, 'major') - gc(apiBefore, 'major')) * 1000, 0),
      mariadb,
    };
  };
}

export function describeProbe(p: RoundProbe): string {
  const m = p.mariadb;
  return (
    `event loop delay p99 ${p.eventLoopP99Ms} ms max ${p.eventLoopMaxMs} ms; GC ${p.gcMs} ms` +
    ` (${p.majorGcs} major, ${p.majorGcMs} ms); MariaDB: ${m.Com_commit} commits,` +
    ` ${m.Innodb_log_writes} log writes, ${m.Innodb_data_fsyncs} fsyncs, ${m.Innodb_log_waits} log waits,` +
    ` ${m.Innodb_buffer_pool_pages_flushed} pages flushed, ${m.Innodb_buffer_pool_wait_free} free-page waits,` +
    ` ${m.Innodb_row_lock_waits} row lock waits`
  );
}
