// CPU time used by processes over a measurement (utime + stime from /proc/<pid>/stat), to
// say where each request's cost goes: the server, MariaDB, Redis.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime
  } catch {
    return Number.NaN;
  }
}

/**
 * Pids of local processes by command name (mariadbd, redis-server), each optionally required
 * to have a string in its command line (the port of the bench's Redis: other Redis servers
 * may run on the machine).
 */
export function pidsByName(wanted: Record<string, string>): Map<string, number> {
  const found = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      const needle = wanted[comm];
      if (needle === undefined || found.has(comm)) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(needle)) found.set(comm, Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

export class CpuMeter {
  private readonly start: Map<string, number>;

  constructor(private readonly pids: Map<string, number>) {
    this.start = new Map([...pids].map(([name, pid]) => [name, cpuTicks(pid)]));
  }

  /** CPU milliseconds used by each process since the meter was made. */
  elapsedMs(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, pid] of this.pids) {
      out[name] = ((cpuTicks(pid) - this.start.get(name)!) * 1000) / TICKS_PER_SECOND;
    }
    return out;
  }
}
