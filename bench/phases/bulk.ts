// Phases "bulk" and "migrate": a bulk cancel, or a bulk migration onto another template version,
// of many runs, and what it costs the creates of another organization meanwhile. Organization X
// holds N active runs carrying one label, seeded straight into MySQL as the service stores them
// (one run made and stored by the service's own code, then copied by the database, each copy
// with its own id and its run_labels row). One worker runs. Organization Y creates runs through
// the API at a steady rate (open loop: a slow answer does not slow the schedule), first with no
// bulk action running (the baseline), then while X's bulk action (a cancel of label=bench:bulk,
// or a move of X's template's runs from version 1 to a version 2 whose first page is due sooner)
// works through its N runs. Measured:
//   - runs changed per second: done ÷ (finishedAt − startedAt) of the action as the API reports
//     it (from the request to its last batch), and from its events' own times;
//   - Y's create latency p50 / p99 (client side, the response's time) with and without the bulk
//     action running;
//   - the result: matched = done = N, nothing skipped, exactly N events (run.cancelled or
//     run.migrated), one per run.
// The action's progress is read every 500 ms: reading it is not free, and the worker shares
// the cores with the bench.
import { SYSTEM } from '../../src/audit/actor.js';
import type { Db } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import { INSERT_COLUMNS } from '../../src/runs/run-columns.js';
import { applyPending, newRun } from '../../src/runs/run-state.js';
import { clearQueue, clearRuns, INPUT_FIELDS, USER_ASSIGNMENTS, type Tenant } from '../fixtures.js';
import { insertRuns } from '../insert-runs.js';
import { sleep, startScript, type BenchProcess, waitForWorker } from '../processes.js';
import { pacedCreates, type CreateRound } from '../paced-creates.js';
import { PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';
import { round } from '../stats.js';
import { TemplateStore } from '../../src/templates/template-store.js';

/** The label every seeded run of X carries, and the filter of the bulk cancel. */
const LABEL = { key: 'bench', value: 'bulk' } as const;
const FILTER = { label: [`${LABEL.key}:${LABEL.value}`] };
const POLL_MS = 500;
const SEED_CHUNK = 100_000;

/** What the phase's bulk action does to X's runs. */
export type BulkPhaseAction = 'cancel' | 'migrate';

/** Y's creates in one round: how many were answered 200, and how long each answer took. */
export interface BulkPhaseResult {
  action: BulkPhaseAction;
  runs: number;
  rate: number;
  /** Seconds from the bulk request to the action's finishedAt. */
  seconds: number;
  /** done ÷ (finishedAt − startedAt), as the API reports the action. */
  changedPerSecond: number;
  /** The action's events ÷ the span of their times (first to last batch). */
  eventsPerSecond: number;
  matched: number;
  done: number;
  skipped: Record<string, number>;
  /** The action's events (run.cancelled, run.migrated) of X's runs, and the runs they name. */
  changedEvents: number;
  changedRuns: number;
  baseline: CreateRound;
  during: CreateRound;
}

interface BulkView {
  id: string;
  status: string;
  matched: number;
  done: number;
  skipped: Record<string, number>;
  startedAt: string;
  finishedAt?: string;
}

// Every stored column but the id, which each copy gets anew.
const COLUMNS = INSERT_COLUMNS.filter((c) => c !== 'id');

/** Gives X `count` active runs labelled bench:bulk; returns the seconds it took. */
async function seedLabelled(db: Db, tenant: Tenant, count: number): Promise<number> {
  const began = Date.now();
  const now = new Date();
  const prototype = applyPending(
    newRun(newId(), tenant.orgId, tenant.template, INPUT_FIELDS, USER_ASSIGNMENTS, now, SYSTEM, {
      [LABEL.key]: LABEL.value,
    }),
    now,
  );
  await insertRuns(db, [prototype]);
  // UUIDv7-shaped ids: a random prefix, then a counter (unique, in index order).
  const idPrefix = newId().slice(0, 24);
  for (let done = 1; done < count; done += SEED_CHUNK) {
    const size = Math.min(SEED_CHUNK, count - done);
    await db.raw(
      `INSERT INTO workflow_runs (id, ${COLUMNS.join(', ')})
       SELECT CONCAT(?, LPAD(HEX(s.seq), 12, '0')), ${COLUMNS.map((c) => `r.${c}`).join(', ')}
       FROM workflow_runs r JOIN seq_${done}_to_${done + size - 1} s
       WHERE r.id = ?
       ORDER BY s.seq`,
      [idPrefix, prototype.id],
    );
  }
  // A run_labels row per copy, as a create with labels writes it (the prototype has its own).
  await db.raw(
    'INSERT IGNORE INTO run_labels (organization_id, label_key, label_value, run_seq, run_id) ' +
      'SELECT organization_id, ?, ?, seq, id FROM workflow_runs WHERE organization_id = ?',
    [LABEL.key, LABEL.value, tenant.orgId],
  );
  const [rows] = (await db.raw(
    'SELECT COUNT(*) AS n FROM run_labels WHERE organization_id = ? AND label_key = ?',
    [tenant.orgId, LABEL.key],
  )) as [Array<{ n: number | string }>];
  if (Number(rows[0]?.n) !== count) {
    throw new Error(`bulk: seeded ${rows[0]?.n} labelled runs, not ${count}`);
  }
  return (Date.now() - began) / 1000;
}

async function call<T>(
  apiUrl: string,
  tenant: Tenant,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${apiUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: tenant.key,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** The event each run the action changes gets. */
const EVENT: Record<BulkPhaseAction, string> = {
  cancel: 'run.cancelled',
  migrate: 'run.migrated',
};

/** The bulk action's request: its path and body. */
function actionRequest(action: BulkPhaseAction, x: Tenant): { path: string; body: unknown } {
  return action === 'cancel'
    ? { path: '/bulk-cancel-workflow-runs', body: { filter: FILTER, reason: 'bench' } }
    : {
        path: '/bulk-migrate-workflow-runs',
        body: {
          filter: { ...FILTER, template_id: x.template.id },
          from_version: 1,
          to_version: 2,
        },
      };
}

/**
 * X's template's version 2, for a migration: its pages as version 1's, its first page (the
 * step the seeded runs are at) due in a day, so that the move counts every run's due time again.
 */
async function saveSecondVersion(db: Db, x: Tenant): Promise<void> {
  const store = new TemplateStore(db);
  const head = await store.head(x.orgId, x.template.id);
  if (head && head.latestVersion >= 2) return;
  const [first, ...rest] = x.template.pages;
  const saved = await store.saveVersion(
    x.orgId,
    x.template.id,
    1,
    { name: x.template.name, pages: [{ ...first!, dueInHours: 24 }, ...rest] },
    SYSTEM,
  );
  if (!saved.ok) throw new Error(`migrate: version 2 not saved (${JSON.stringify(saved)})`);
}

export async function measureBulk(deps: {
  action: BulkPhaseAction;
  settings: BenchSettings;
  db: Db;
  /** X: the organization whose runs are cancelled. */
  x: Tenant;
  /** Y: the organization creating runs meanwhile. */
  y: Tenant;
  apiUrl: string;
  log: (line: string) => void;
}): Promise<BulkPhaseResult> {
  const { action, settings, db, x, y, apiUrl, log } = deps;
  const n = action === 'cancel' ? settings.bulkRuns : settings.migrateRuns;
  const event = EVENT[action];
  const rate = settings.bulkCreateRate;
  const reset = async () => {
    await clearRuns(db);
    await db('run_labels').where({ organization_id: x.orgId }).delete();
    await clearQueue(PREFIXES.api);
  };

  await reset();
  if (action === 'migrate') await saveSecondVersion(db, x);
  const seeded = await seedLabelled(db, x, n);
  log(`  seeded ${n} active runs labelled ${FILTER.label[0]} in ${round(seeded, 1)} s`);

  const worker: BenchProcess = startScript('bulk-worker', 'workers/main.js', {
    env: serviceEnv(PREFIXES.api),
  });
  await waitForWorker(worker, 'workers/main.js');
  try {
    // Baseline: Y alone (a second of warm-up first: connections, the worker's first turns).
    await pacedCreates(apiUrl, y, rate, () => false, 1);
    const baseline = await pacedCreates(apiUrl, y, rate, () => false, settings.bulkBaselineSeconds);
    log(
      `  no bulk action: ${baseline.created} creates at ${rate}/s, p50 ${baseline.latency.p50} ms p99 ${baseline.latency.p99} ms, ${baseline.errors} errors`,
    );

    // The bulk action, Y creating until it has completed.
    const request = actionRequest(action, x);
    const started = await call<BulkView>(apiUrl, x, request.path, request.body);
    if (started.status !== 202) {
      throw new Error(`bulk: ${request.path} was answered ${started.status}`);
    }
    let finished: BulkView | undefined;
    const deadline = Date.now() + 600_000;
    const during = pacedCreates(apiUrl, y, rate, () => finished !== undefined, 600);
    during.catch(() => undefined); // awaited below, once the action has completed
    while (!finished) {
      await sleep(POLL_MS);
      if (Date.now() > deadline) throw new Error('bulk: the action still running after 600 s');
      if (!worker.running) throw new Error(`bulk: the worker exited:\n${worker.tail()}`);
      const read = await call<BulkView>(
        apiUrl,
        x,
        `/get-bulk-action?id=${encodeURIComponent(started.body.id)}`,
      );
      if (read.status !== 200) throw new Error(`bulk: get-bulk-action answered ${read.status}`);
      if (read.body.status === 'completed') finished = read.body;
    }
    const duringRound = await during;
    const seconds = (Date.parse(finished.finishedAt ?? '') - Date.parse(finished.startedAt)) / 1000;

    const [rows] = (await db.raw(
      'SELECT COUNT(*) AS n, COUNT(DISTINCT run_id) AS runs, MIN(at) AS first, MAX(at) AS last ' +
        'FROM run_events WHERE organization_id = ? AND type = ?',
      [x.orgId, event],
    )) as [Array<{ n: number | string; runs: number | string; first: Date; last: Date }>];
    const events = rows[0]!;
    const eventSpan = Math.max(0.001, (events.last.getTime() - events.first.getTime()) / 1000);
    const result: BulkPhaseResult = {
      action,
      runs: n,
      rate,
      seconds: round(seconds, 1),
      changedPerSecond: round(finished.done / Math.max(0.001, seconds), 0),
      eventsPerSecond: round(Number(events.n) / eventSpan, 0),
      matched: finished.matched,
      done: finished.done,
      skipped: finished.skipped,
      changedEvents: Number(events.n),
      changedRuns: Number(events.runs),
      baseline,
      during: duringRound,
    };
    log(
      `  bulk ${action}: ${result.done} of ${result.matched} matched runs in ${result.seconds} s (${result.changedPerSecond}/s; ${result.eventsPerSecond}/s by its events); ${result.changedEvents} ${event} events for ${result.changedRuns} runs`,
    );
    log(
      `  during it: ${duringRound.created} creates at ${rate}/s, p50 ${duringRound.latency.p50} ms p99 ${duringRound.latency.p99} ms, ${duringRound.errors} errors`,
    );
    return result;
  } finally {
    await worker.stop();
    await reset();
  }
}

/** Every way the result can be off: 0 when matched = done = N with one event per run. */
export function bulkMismatches(r: BulkPhaseResult): number {
  return (
    Math.abs(r.matched - r.runs) +
    Math.abs(r.done - r.runs) +
    Object.values(r.skipped).reduce((a, b) => a + b, 0) +
    Math.abs(r.changedEvents - r.runs) +
    Math.abs(r.changedRuns - r.runs)
  );
}
