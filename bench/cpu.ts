// CPU time used by processes over a measurement (utime + stime from /proc/<pid>/stat), to
// say where each request's cost goes: the server, MariaDB or PostgreSQL, Redis, the load.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { BENCH_DATABASE_URL } from './settings.js';

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

/** The inodes of the sockets listening on a TCP port (IPv4 and IPv6), from /proc/net. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue; // no IPv6 here
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local address (ip:PORT in hex), state 0A = LISTEN, inode in the tenth column
      if (f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A' && f[9]) inodes.add(f[9]);
    }
  }
  return inodes;
}

/**
 * The process listening on a local TCP port, with its command name: MariaDB or Redis as the
 * bench reaches them, whichever of several instances on the machine that is (another may be
 * the machine's own, or a replica's). Undefined when none is found (not local, or not ours to
 * see).
 */
export function listenerOf(port: number): { pid: number; comm: string } | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  for (const { pid, comm } of processes()) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // ended, or not ours to read
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) return { pid, comm };
      } catch {
        // the descriptor was closed while we looked
      }
    }
  }
  return undefined;
}

/** The process listening on a URL's port (`fallback` when the URL names none), by name. */
function listenerByName(url: string, fallback: number): Map<string, number> {
  const listener = listenerOf(Number(new URL(url).port || fallback));
  return new Map(listener ? [[listener.comm, listener.pid]] : []);
}

/**
 * The MariaDB (or MySQL) server the bench uses: the process listening on its database URL's
 * port, so a second instance on the machine is never measured in its place.
 */
export function databasePid(databaseUrl = BENCH_DATABASE_URL): Map<string, number> {
  return listenerByName(databaseUrl, 3306);
}

/**
 * Pids of the storage the service uses, by command name: MariaDB (mariadbd, or mysqld) and
 * Redis, each the process listening on the port the bench reaches it at.
 */
export function storagePids(redisUrl: string): Map<string, number> {
  return new Map([...databasePid(), ...listenerByName(redisUrl, 6379)]);
}

/** Reads a CPU tick counter that only grows: one process, or a group of them. */
export type TickReader = () => number;

/** One process (and, with children, what its ended children used: wrk under the load child). */
export const processTicks =
  (pid: number, withChildren = false): TickReader =>
  () =>
    cpuTicks(pid, withChildren);

/** Several processes together (the nodes of a database cluster). */
export const processesTicks =
  (pids: readonly number[]): TickReader =>
  () =>
    pids.reduce((sum, pid) => sum + (cpuTicks(pid) || 0), 0);

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

/** CPU figures by process as a log line shows them: `api 312, mariadbd 120, …`. */
export function cpuList(us: Record<string, number>): string {
  return Object.entries(us)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
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
