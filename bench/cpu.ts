// CPU time used by processes over a measurement (utime + stime from /proc/<pid>/stat), to
// say where each request's cost goes: the server, MariaDB or PostgreSQL, Redis, the load.
import { readdirSync, readFileSync } from 'node:fs';

export const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** A process's CPU ticks so far; with children, also those of its children that have ended. */
function cpuTicks(pid: number, withChildren = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]); // utime, stime
    return withChildren ? own + Number(fields[13]) + Number(fields[14]) : own; // cutime, cstime
  } catch {
    return Number.NaN;
  }
}

function processes(): Array<{ pid: number; comm: string; ppid: number }> {
  const out: Array<{ pid: number; comm: string; ppid: number }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.push({ pid: Number(entry), comm, ppid });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/**
 * Pids of local processes by command name (mariadbd, redis-server), each optionally required
 * to have a string in its command line (the port of the bench's Redis: other Redis servers
 * may run on the machine).
 */
export function pidsByName(wanted: Record<string, string>): Map<string, number> {
  const found = new Map<string, number>();
  for (const { pid, comm } of processes()) {
    const needle = wanted[comm];
    if (needle === undefined || found.has(comm)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(needle)) found.set(comm, pid);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/**
 * Pids of the storage the service uses, by command name: MariaDB (mariadbd, or mysqld) and the
 * bench's Redis (the one on `redisUrl`'s port).
 */
export function storagePids(redisUrl: string): Map<string, number> {
  const redisPort = new URL(redisUrl).port || '6379';
  return pidsByName({ mariadbd: '', mysqld: '', 'redis-server': `:${redisPort}` });
}

/** Reads a CPU tick counter that only grows: one process, or a group of them. */
export type TickReader = () => number;

/** One process (and, with children, what its ended children used: wrk under the load child). */
export const processTicks =
  (pid: number, withChildren = false): TickReader =>
  () =>
    cpuTicks(pid, withChildren);

/**
 * Every PostgreSQL process: the postmaster with what its ended children used, and every live
 * child (a backend per connection, the writers). PostgreSQL's work is spread over them.
 */
export function postgresTicks(): TickReader | undefined {
  const all = processes();
  const postmaster = all.find(
    (p) => (p.comm === 'postgres' || p.comm === 'postmaster') && p.ppid === 1,
  );
  if (!postmaster) return undefined;
  return () => {
    let ticks = cpuTicks(postmaster.pid, true);
    for (const p of processes()) if (p.ppid === postmaster.pid) ticks += cpuTicks(p.pid) || 0;
    return ticks;
  };
}

export class CpuMeter {
  private readonly readers: Map<string, TickReader>;
  private readonly start: Map<string, number>;

  /** Each name with a pid (its own CPU) or a reader of its own (a group of processes). */
  constructor(pids: Map<string, number | TickReader>) {
    this.readers = new Map(
      [...pids].map(([name, p]) => [name, typeof p === 'number' ? processTicks(p) : p]),
    );
    this.start = new Map([...this.readers].map(([name, read]) => [name, read()]));
  }

  /** CPU milliseconds used by each process since the meter was made. */
  elapsedMs(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, read] of this.readers) {
      out[name] = ((read() - this.start.get(name)!) * 1000) / TICKS_PER_SECOND;
    }
    return out;
  }

  /** CPU µs used by each process since the meter was made, per item done (at least one). */
  usPer(items: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, ms] of Object.entries(this.elapsedMs())) {
      out[name] = Math.round((ms * 1000) / Math.max(1, items));
    }
    return out;
  }
}

/** A process with its live children and what its ended children used (a supervisor's tree). */
export const processTreeTicks =
  (pid: number): TickReader =>
  () => {
    let ticks = cpuTicks(pid, true);
    for (const p of processes()) if (p.ppid === pid) ticks += cpuTicks(p.pid) || 0;
    return ticks;
  };
