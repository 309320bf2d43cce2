// Phase 4: the list at scale. A small and a big organization in the same table; the first
// page and a page deep in the cursor chain (reached by following Link rel="next") of each,
// the first page of each filter (matches of 1 in 10 to 1 in 100, spread through the runs), and
// the task inbox's first page of each of its filters, timed by a sequential probe.
import type { Db } from '../../src/db.js';
import type { Tenant } from '../fixtures.js';
import type { ListProbeOptions, ListProbeResult } from '../list-probe.js';
import { runChildScript } from '../processes.js';
import { taskPageReads } from '../task-reads.js';
import { SEEDED_FILTERS, SEEDED_TASK_FILTERS, seedRuns } from '../seed-runs.js';
import type { BenchSettings } from '../settings.js';
import { round } from '../stats.js';

export interface ListPhaseResult {
  small: number;
  big: number;
  seedSeconds: number;
  depth: { small: number; big: number };
  hops: { small: number; big: number };
  pages: ListProbeResult;
  /** Rows and index entries MySQL read for each inbox filter's first page (task-reads.ts). */
  taskReads: Record<string, { small: number; big: number }>;
}

const HOP_LIMIT = 1000; // the largest page the service allows: fewest hops to get deep

function nextLink(header: string | null, origin: string): string | undefined {
  const match = header ? /<([^>]+)>;\s*rel="next"/.exec(header) : null;
  return match ? new URL(match[1]!, origin).toString() : undefined;
}

/**
 * Follows the cursor chain until `depth` rows have been passed; returns the URL of the next
 * page with the default page size (the chain's cursor, the first page's limit).
 */
async function deepPageUrl(
  firstUrl: string,
  key: string,
  depth: number,
): Promise<{ url: string; hops: number }> {
  const origin = new URL(firstUrl).origin;
  let remaining = depth;
  const url = new URL(firstUrl);
  url.searchParams.set('limit', String(Math.min(HOP_LIMIT, remaining)));
  let next = url.toString();
  let hops = 0;
  for (;;) {
    const res = await fetch(next, { headers: { authorization: key } });
    if (!res.ok) throw new Error(`GET ${next}: HTTP ${res.status}`);
    remaining -= ((await res.json()) as unknown[]).length;
    hops++;
    const link = nextLink(res.headers.get('link'), origin);
    if (!link) throw new Error(`the cursor chain ended before ${depth} rows`);
    const following = new URL(link);
    if (remaining <= 0) {
      following.searchParams.delete('limit');
      return { url: following.toString(), hops };
    }
    following.searchParams.set('limit', String(Math.min(HOP_LIMIT, remaining)));
    next = following.toString();
  }
}

export async function measureListScale(deps: {
  settings: BenchSettings;
  db: Db;
  small: Tenant;
  big: Tenant;
  apiUrl: string;
  log: (line: string) => void;
}): Promise<ListPhaseResult> {
  const { settings } = deps;
  const started = Date.now();
  const smallSeed = await seedRuns(deps.db, deps.small, settings.listSmall);
  const bigSeed = await seedRuns(deps.db, deps.big, settings.listBig);
  await deps.db.raw('ANALYZE TABLE workflow_runs, run_task_terms');
  const seedSeconds = round((Date.now() - started) / 1000, 1);
  deps.log(`  seeded ${settings.listSmall} + ${settings.listBig} runs in ${seedSeconds} s`);

  const first = `${deps.apiUrl}/get-workflow-runs`;
  // Seeded due dates start at the prototype's and spread over 1,000 minutes: a tenth of them
  // fall before this (a range at the start of the order).
  const [[earliest]] = (await deps.db.raw(
    'SELECT MIN(current_step_due_date) AS due FROM workflow_runs WHERE organization_id = ?',
    [deps.small.orgId],
  )) as [[{ due: Date }]];
  const dueBefore = new Date(earliest.due.getTime() + 100 * 60_000).toISOString();
  // An inbox query as sent: its placeholders filled in (values URL-encoded).
  const fill = (query: string, rareTemplate: string) =>
    query
      .replace('{dueBefore}', encodeURIComponent(dueBefore))
      .replace('{rareTemplate}', encodeURIComponent(rareTemplate));
  const tasksUrl = (query: string, rareTemplate: string) =>
    `${deps.apiUrl}/get-tasks?${fill(query, rareTemplate)}${query ? '&' : ''}limit=10`;
  // Deep: the last page of the small organization; half way down the big one.
  const depth = { small: settings.listSmall - 100, big: Math.floor(settings.listBig / 2) };
  const smallDeep = await deepPageUrl(first, deps.small.key, depth.small);
  const bigDeep = await deepPageUrl(first, deps.big.key, depth.big);

  const pages = await runChildScript<ListProbeResult>(
    'list-probe',
    'bench/list-probe.js',
    {
      targets: [
        { name: 'smallFirst', url: first, key: deps.small.key },
        { name: 'smallDeep', url: smallDeep.url, key: deps.small.key },
        { name: 'bigFirst', url: first, key: deps.big.key },
        { name: 'bigDeep', url: bigDeep.url, key: deps.big.key },
        // Ten rows a page: the small organization has at least that many of each minority.
        ...Object.entries(SEEDED_FILTERS).flatMap(([name, query]) => [
          { name: `smallFilter:${name}`, url: `${first}?${query}&limit=10`, key: deps.small.key },
          { name: `bigFilter:${name}`, url: `${first}?${query}&limit=10`, key: deps.big.key },
        ]),
        // The task inbox's first page of each filter, ten tasks a page.
        ...Object.entries(SEEDED_TASK_FILTERS).flatMap(([name, query]) => [
          {
            name: `smallTasks:${name}`,
            url: tasksUrl(query, smallSeed.rareTemplateId),
            key: deps.small.key,
          },
          {
            name: `bigTasks:${name}`,
            url: tasksUrl(query, bigSeed.rareTemplateId),
            key: deps.big.key,
          },
        ]),
      ],
      samples: settings.listSamples,
      warmup: Math.ceil(settings.listSamples / 10),
    } satisfies ListProbeOptions,
    120_000,
  );
  // What MySQL reads for each inbox filter's first page, at each size.
  const taskReads: ListPhaseResult['taskReads'] = {};
  for (const [name, query] of Object.entries(SEEDED_TASK_FILTERS)) {
    taskReads[name] = {
      small: await taskPageReads(
        deps.db,
        deps.small.orgId,
        fill(query, smallSeed.rareTemplateId),
        10,
      ),
      big: await taskPageReads(deps.db, deps.big.orgId, fill(query, bigSeed.rareTemplateId), 10),
    };
  }
  return {
    taskReads,
    small: settings.listSmall,
    big: settings.listBig,
    seedSeconds,
    depth,
    hops: { small: smallDeep.hops, big: bigDeep.hops },
    pages,
  };
}
