// Turns the phases' figures into the table, the list of targets with PASS/FAIL, the results
// file and the one-line summary.
import type { E2eResult } from './e2e-client.js';
import type { MemoryTracker } from './memory.js';
import type { CreatePhaseResult } from './phases/create-throughput.js';
import type { ListPhaseResult } from './phases/list-scale.js';
import type { WorkerPhaseResult } from './phases/worker-throughput.js';
import { ratio, round } from './stats.js';

export interface Target {
  name: string;
  value: number;
  limit: string;
  pass: boolean;
}

export interface Row {
  measure: string;
  service: string;
  baseline: string;
  ratio: string;
  target: string;
  result: string;
}

export interface Figures {
  /** Cores of the machine: what every process of a create (and the load) shares. */
  cores: number;
  create?: CreatePhaseResult;
  worker?: WorkerPhaseResult;
  e2e?: E2eResult;
  list?: ListPhaseResult;
  memory: MemoryTracker;
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? String(round(n, digits)) : '-');
const mark = (pass: boolean) => (pass ? 'PASS' : 'FAIL');

export function evaluate(f: Figures): { rows: Row[]; targets: Target[] } {
  const rows: Row[] = [];
  const targets: Target[] = [];
  const target = (name: string, value: number, limit: string, pass: boolean) => {
    targets.push({ name, value, limit, pass });
    return mark(pass);
  };

  if (f.create) {
    const { service, echo, naive } = f.create.best;
    const vsEcho = ratio(service.requestsPerSecond, echo.requestsPerSecond);
    const errors = service.errors + service.timeouts + service.non2xx;
    rows.push({
      measure: 'create req/s vs (a) echo',
      service: fmt(service.requestsPerSecond, 0),
      baseline: fmt(echo.requestsPerSecond, 0),
      ratio: fmt(vsEcho, 2),
      target: '>= 0.5',
      result: target('create / echo', vsEcho, '>= 0.5', vsEcho >= 0.5),
    });
    rows.push({
      measure: 'create req/s vs (b) naive',
      service: fmt(service.requestsPerSecond, 0),
      baseline: fmt(naive.requestsPerSecond, 0),
      ratio: fmt(ratio(service.requestsPerSecond, naive.requestsPerSecond), 2),
      target: '(reported)',
      result: '',
    });
    // Where the cores go. A create costs CPU in the API, MariaDB, Redis and the load generator;
    // the echo's requests cost CPU in its server and the load generator only. With every core
    // busy, a create rate cannot pass cores / (CPU per create), whatever the API does; the
    // second figure is that bound if the API cost no more than the echo server itself.
    const total = (run: typeof service) =>
      Object.values(run.cpuUsPerRequest).reduce((sum, us) => sum + us, 0);
    const ceiling = (us: number) => (f.cores * 1e6) / us;
    const { server: echoServer = 0 } = echo.cpuUsPerRequest;
    const storage = total(service) - (service.cpuUsPerRequest.server ?? 0);
    rows.push({
      measure: 'create CPU µs/request, all processes',
      service: fmt(total(service), 0),
      baseline: fmt(total(echo), 0),
      ratio: fmt(ratio(total(echo), total(service)), 2),
      target: '(reported)',
      result: '',
    });
    rows.push({
      measure: `create ceiling req/s on ${f.cores} cores`,
      service: fmt(ceiling(total(service)), 0),
      baseline: fmt(echo.requestsPerSecond, 0),
      ratio: fmt(ratio(ceiling(total(service)), echo.requestsPerSecond), 2),
      target: '(reported)',
      result: '',
    });
    rows.push({
      measure: '  same, API as cheap as the echo',
      service: fmt(ceiling(echoServer + storage), 0),
      baseline: fmt(echo.requestsPerSecond, 0),
      ratio: fmt(ratio(ceiling(echoServer + storage), echo.requestsPerSecond), 2),
      target: '(reported)',
      result: '',
    });
    rows.push({
      measure: 'create p50 / p99 ms (echo, naive)',
      service: `${service.p50} / ${service.p99}`,
      baseline: `${echo.p50} / ${echo.p99}, ${naive.p50} / ${naive.p99}`,
      ratio: '',
      target: 'p99 <= 50',
      result: target('create p99 ms', service.p99, '<= 50', service.p99 <= 50),
    });
    rows.push({
      measure: 'create errors (non-2xx, timeouts)',
      service: `${errors} (${service.non2xx}, ${service.timeouts})`,
      baseline: `${echo.errors + echo.non2xx}, ${naive.errors + naive.non2xx}`,
      ratio: '',
      target: '0',
      result: target('create errors', errors, '= 0', errors === 0),
    });
  }

  if (f.worker) {
    const { worker, bare } = f.worker.best;
    const r = ratio(worker.runsPerSecond, bare.runsPerSecond);
    rows.push({
      measure: `worker runs started/s (${worker.runs} backlog)`,
      service: fmt(worker.runsPerSecond, 0),
      baseline: fmt(bare.runsPerSecond, 0),
      ratio: fmt(r, 2),
      target: '>= 1.0',
      result: target('worker / bare worker', r, '>= 1.0', r >= 1),
    });
  }

  if (f.e2e) {
    const e = f.e2e;
    rows.push({
      measure: `end-to-end p50 ms (at ${e.achievedRate} creates/s)`,
      service: fmt(e.endToEnd.p50, 1),
      baseline: '',
      ratio: '',
      target: '<= 20',
      result: target('e2e p50 ms', e.endToEnd.p50, '<= 20', e.endToEnd.p50 <= 20),
    });
    rows.push({
      measure: `end-to-end p99 ms (${e.unseen} unseen)`,
      service: fmt(e.endToEnd.p99, 1),
      baseline: '',
      ratio: '',
      target: '<= 100, none unseen',
      result: target(
        'e2e p99 ms',
        e.endToEnd.p99,
        '<= 100',
        e.endToEnd.p99 <= 100 && e.unseen === 0 && e.createErrors === 0,
      ),
    });
  }

  if (f.list) {
    const { pages, small, big } = f.list;
    const p = (name: string) => pages[name]?.p50 ?? Number.NaN;
    const label = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);
    const firstRatio = ratio(p('bigFirst'), p('smallFirst'));
    const deepRatio = ratio(p('bigDeep'), p('smallDeep'));
    const smallDeep = ratio(p('smallDeep'), p('smallFirst'));
    const bigDeep = ratio(p('bigDeep'), p('bigFirst'));
    const sizes = `${label(big)} vs ${label(small)}`;
    rows.push({
      measure: `list first page p50 ms, ${sizes}`,
      service: fmt(p('bigFirst'), 2),
      baseline: fmt(p('smallFirst'), 2),
      ratio: fmt(firstRatio, 2),
      target: '<= 1.5',
      result: target(`list first page ${sizes}`, firstRatio, '<= 1.5', firstRatio <= 1.5),
    });
    rows.push({
      measure: `list deep page p50 ms, ${sizes}`,
      service: fmt(p('bigDeep'), 2),
      baseline: fmt(p('smallDeep'), 2),
      ratio: fmt(deepRatio, 2),
      target: '<= 1.5',
      result: target(`list deep page ${sizes}`, deepRatio, '<= 1.5', deepRatio <= 1.5),
    });
    rows.push({
      measure: `list deep vs first p50 ms at ${label(small)}`,
      service: fmt(p('smallDeep'), 2),
      baseline: fmt(p('smallFirst'), 2),
      ratio: fmt(smallDeep, 2),
      target: '<= 1.5',
      result: target(`list deep / first at ${label(small)}`, smallDeep, '<= 1.5', smallDeep <= 1.5),
    });
    rows.push({
      measure: `list deep vs first p50 ms at ${label(big)}`,
      service: fmt(p('bigDeep'), 2),
      baseline: fmt(p('bigFirst'), 2),
      ratio: fmt(bigDeep, 2),
      target: '<= 1.5',
      result: target(`list deep / first at ${label(big)}`, bigDeep, '<= 1.5', bigDeep <= 1.5),
    });
  }

  const m = f.memory;
  const base = m.baseline;
  const later = m.highestLater;
  if (base && later) {
    rows.push({
      measure: `API RSS MiB, median: ${later.phase} vs ${base.phase}`,
      service: fmt(later.medianMiB, 1),
      baseline: fmt(base.medianMiB, 1),
      ratio: fmt(1 + m.growth, 2),
      target: '<= 1.2',
      result: target('API memory growth', m.growth, '<= 0.2', m.growth <= 0.2),
    });
  }
  return { rows, targets };
}

export function formatTable(rows: Row[]): string {
  const header: Row = {
    measure: 'measure',
    service: 'service',
    baseline: 'baseline',
    ratio: 'ratio',
    target: 'target',
    result: 'result',
  };
  const keys = Object.keys(header) as Array<keyof Row>;
  const all = [header, ...rows];
  const widths = keys.map((k) => Math.max(...all.map((r) => r[k].length)));
  const line = (r: Row) =>
    keys
      .map((k, i) => r[k].padEnd(widths[i]!))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
  return [line(header), rule, ...rows.map(line)].join('\n');
}
