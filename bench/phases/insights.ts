// Phase: insights at scale. A small and a big organization, each with a history of completed
// runs over the last 30 days (five events a run: created, started, two steps completed,
// completed), seeded straight into run_events as the service writes them; one worker folds them
// (timed: the catch-up rate), then GET /get-run-insights is timed for each organization by a
// sequential probe: one template by day over 30 days, by hour over 2 days, and the whole
// organization by week. The target: an answer at the big size costs at most twice the small
// one's (it reads rollup rows, one per hour with activity, never the runs or their events).
import type { Db } from '../../src/db.js';
import { sqlLiteral } from '../../src/lib/sql-literal.js';
import { newId } from '../../src/lib/ids.js';
import { skipInsightsBacklog, type Tenant } from '../fixtures.js';
import type { ListProbeOptions, ListProbeResult } from '../list-probe.js';
import { runChildScript, startScript, waitForWorker, type BenchProcess } from '../processes.js';
import { PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { round } from '../stats.js';

export interface InsightsPhaseResult {
  small: number;
  big: number;
  events: number;
  seedSeconds: number;
  /** The worker's fold of every seeded event: seconds, and events a second. */
  foldSeconds: number;
  foldPerSecond: number;
  pages: ListProbeResult;
  /** Big over small p50, per view; the target is ≤ 2 for each. */
  ratios: Record<string, number>;
}

const CHUNK = 100_000;
const DAY_MS = 86_400_000;
const EVENTS_PER_RUN = 5;

/** Seeds `count` completed runs of the tenant's template, created evenly over `days` to now. */
async function seedHistory(db: Db, tenant: Tenant, count: number, days: number): Promise<void> {
  const pages = tenant.template.pages.map((p) => p.name);
  const [a, b] = [pages[0]!, pages[1] ?? pages[0]!];
  const json = (value: unknown) => sqlLiteral(JSON.stringify(value));
  // Each kind of event: its seq, type, data, and its time after the run's creation as
  // off + (s % 3600) s × f1 + (7s % 7200) s × f2 (the steps' varied durations).
  const kinds = [
    [
      1,
      'run.created',
      { templateId: tenant.template.id, templateVersion: 1, workflowName: tenant.template.name },
      0,
      0,
      0,
    ],
    [2, 'run.started', { step: a, assignee: 'bench' }, 1000, 0, 0],
    [
      3,
      'step.completed',
      { step: a, inputFields: {}, nextStep: b, nextAssignee: 'bench' },
      1000,
      1,
      0,
    ],
    [4, 'step.completed', { step: b, inputFields: {} }, 1000, 1, 1],
    [5, 'run.completed', {}, 1000, 1, 1],
  ] as const;
  const kindTable = kinds
    .map(
      ([seq, type, data, off, f1, f2]) =>
        `SELECT ${seq} AS n, ${sqlLiteral(type)} AS type, ${json(data)} AS data, ${off} AS off, ${f1} AS f1, ${f2} AS f2`,
    )
    .join(' UNION ALL ');
  const start = Date.now() - days * DAY_MS;
  const spacing = Math.max(1, Math.floor((days * DAY_MS - 4 * 3_600_000) / count));
  const idPrefix = newId().slice(0, 24);
  for (let from = 1; from <= count; from += CHUNK) {
    const to = Math.min(count, from + CHUNK - 1);
    await db.raw(
      `INSERT INTO run_events (run_id, organization_id, seq, type, at, data, dispatched)
       SELECT CONCAT(?, LPAD(HEX(s.seq), 12, '0')), ?, k.n, k.type,
              TIMESTAMPADD(MICROSECOND,
                (? + s.seq * ? + k.off + (s.seq % 3600) * 1000 * k.f1 + (s.seq * 7 % 7200) * 1000 * k.f2) * 1000,
                TIMESTAMP'1970-01-01 00:00:00'),
              k.data, 1
       FROM seq_${from}_to_${to} s JOIN (${kindTable}) k
       ORDER BY s.seq, k.n`,
      [idPrefix, tenant.orgId, start, spacing],
    );
  }
}

export async function measureInsights(deps: {
  settings: BenchSettings;
  db: Db;
  small: Tenant;
  big: Tenant;
  apiUrl: string;
  log: (line: string) => void;
}): Promise<InsightsPhaseResult> {
  const { settings, db } = deps;
  const small = settings.insightsSmall;
  const big = settings.insightsBig;
  // What came before is taken as folded: the fold timed here is of the seeded history alone.
  await skipInsightsBacklog(db);
  const seeding = Date.now();
  await seedHistory(db, deps.small, small, 30);
  await seedHistory(db, deps.big, big, 30);
  const seedSeconds = round((Date.now() - seeding) / 1000, 1);
  const [[{ maxId }]] = (await db.raw('SELECT MAX(id) AS maxId FROM run_events')) as [
    [{ maxId: number }],
  ];
  const events = (small + big) * EVENTS_PER_RUN;
  deps.log(`  seeded ${small} + ${big} runs (${events} events) in ${seedSeconds} s`);

  const worker: BenchProcess = startScript('insights-worker', 'workers/main.js', {
    env: serviceEnv(PREFIXES.api),
  });
  let foldSeconds: number;
  try {
    const folding = Date.now();
    await waitForWorker(worker, 'workers/main.js');
    for (;;) {
      const row = (await db('insight_cursor').where('id', 1).first('event_id')) as {
        event_id: number | string;
      };
      if (Number(row.event_id) >= Number(maxId)) break;
      if (!worker.running) throw new Error(`insights: the worker exited:\n${worker.tail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    foldSeconds = round((Date.now() - folding) / 1000, 1);
  } finally {
    await worker.stop();
  }
  const foldPerSecond = Math.round(events / foldSeconds);
  deps.log(`  folded ${events} events in ${foldSeconds} s: ${foldPerSecond} events/s`);

  const now = Date.now();
  const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
  const views = {
    day: (t: Tenant) =>
      `template_id=${t.template.id}&bucket=day&from=${iso(now - 30 * DAY_MS)}&to=${iso(now)}`,
    hour: (t: Tenant) =>
      `template_id=${t.template.id}&bucket=hour&from=${iso(now - 2 * DAY_MS)}&to=${iso(now)}`,
    orgWeek: () => `bucket=week&from=${iso(now - 28 * DAY_MS)}&to=${iso(now)}`,
  };
  const url = (query: string) => `${deps.apiUrl}/get-run-insights?${query}`;
  const pages = await runChildScript<ListProbeResult>(
    'insights-probe',
    'bench/list-probe.js',
    {
      targets: Object.entries(views).flatMap(([name, query]) => [
        { name: `small:${name}`, url: url(query(deps.small)), key: deps.small.key },
        { name: `big:${name}`, url: url(query(deps.big)), key: deps.big.key },
      ]),
      samples: settings.insightsSamples,
      warmup: Math.ceil(settings.insightsSamples / 10),
    } satisfies ListProbeOptions,
    120_000,
  );
  const ratios: Record<string, number> = {};
  for (const name of Object.keys(views)) {
    ratios[name] = round(pages[`big:${name}`]!.p50 / pages[`small:${name}`]!.p50, 2);
  }
  return { small, big, events, seedSeconds, foldSeconds, foldPerSecond, pages, ratios };
}
