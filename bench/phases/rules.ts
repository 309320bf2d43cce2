// The `rules` phase: what a template's typed fields and rules cost. Three templates of one
// organization, the same 10 pages of 200 fields (rules-templates.ts): A with typed fields and 50
// rules, B with the same typed fields and no rules, C with the fields untyped (every template
// before types). Two measures, each the median of rounds taken in turns (ABC, CBA, ABC, …) so
// that the drift of a shared 2-core machine falls on all three alike:
// - the API's CPU per create (its process alone, as the create phase measures it), every create
//   sending a valid value for each of the 200 fields, so it pays every value's check;
// - the worker's CPU per step applied: runs stored owing the completion of a step (each step A
//   shows, the same steps for B and C), then one worker, up already, drains them; applying one
//   enters the next page, which for A is deciding its rules: pages passed over, due times
//   counted in business days from a date field in the organization's time zone, steps
//   assigned from a field.
// The targets (the issue's): A ÷ B <= 1.25 for both, and rules read nothing from MariaDB beyond
// the cached template version: the SELECTs the API sends per create, and the worker per step,
// whose shapes B's never have (each process counts its own statements: query-counter.ts). C is
// a reference: what typing costs.
//
// The phase starts its own API and worker (the counter is loaded into them). What was measured
// is checked in MariaDB: every create stored with its 200 values; the runs of a separate,
// unmeasured set of creates of each template all started by the worker; every drain's runs as
// the state machine makes them in this process (status, step, assignee, due time, the pages
// passed over and each kind of event), so A's runs pass over pages 3, 5 and 8 and none of B's
// or C's do; nothing failed. What does not hold is reported, not thrown: the figures stand
// beside it.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SYSTEM } from '../../src/audit/actor.js';
import type { Db } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import type { RunRecord } from '../../src/runs/run-record.js';
import { applyPending, newRun, requestStepCompletion } from '../../src/runs/run-state.js';
import {
  needsTimeZone,
  parseTemplateDefinition,
} from '../../src/templates/definition/template-definition.js';
import { TemplateStore } from '../../src/templates/template-store.js';
import type { Template } from '../../src/templates/template.js';
import { countPending, openTurns } from '../backlog.js';
import { CpuMeter, cpuList, processTicks, storagePids, type TickReader } from '../cpu.js';
import { clearQueue, clearRuns, type Tenant, clearHistory } from '../fixtures.js';
import { insertRuns } from '../insert-runs.js';
import type { LoadOptions, LoadResult } from '../load.js';
import {
  RequestChild,
  WORKER_NODE_ARGS,
  freePort,
  sleep,
  startScript,
  waitForHttp,
  waitForWorker,
  type BenchProcess,
} from '../processes.js';
import type { QueryCounts } from '../query-counter.js';
import {
  FIELDS_PER_PAGE,
  RULES_PAGES,
  RULES_TEMPLATE_KEYS,
  RULES_TEMPLATE_LABELS,
  RULES_TIME_ZONE,
  SKIPPED_PAGES,
  VALUES,
  VISIBLE_PAGES,
  pageValues,
  rulesCreateBody,
  rulesDefinition,
  type RulesTemplateKey,
} from '../rules-templates.js';
import { copyRun } from '../seed-runs.js';
import { BENCH_REDIS_URL, LOG_DIR, type BenchSettings } from '../settings.js';
import { median, ratio, round } from '../stats.js';

export type PerTemplate<T> = Record<RulesTemplateKey, T>;

/** The issue's bound on A ÷ B, for the API's CPU per create and the worker's per step. */
export const RULES_RATIO_LIMIT = 1.25;
/**
 * The most SELECTs per create (or per step applied) of any one statement A's rounds sent and
 * B's and C's never did. A read that rules add, however rare, shows far above it (one per batch
 * of 250 steps is 0.004 a step); a process's own timers (a reconciler pass every 5 s) that
 * happened to fall in A's rounds only stay below it (some 0.0002 a step).
 */
export const RULES_EXTRA_SELECTS_LIMIT = 0.001;

export interface RulesSizes {
  connections: number;
  /** Seconds of unmeasured creates of each template before the measured rounds. */
  warmupSeconds: number;
  createSeconds: number;
  /** Rounds of creates; each loads A, B and C once. */
  createRounds: number;
  /** Seconds of the unmeasured creates of each template whose runs are then all started. */
  checkSeconds: number;
  /** Step completions owed in each drain (rounded up to a multiple of A's steps). */
  drainRuns: number;
  /** Drains of each template. */
  drainRounds: number;
  /** Completions of an unmeasured drain of each template before the measured ones (0: none). */
  warmupRuns: number;
}

/** The phase's sizes in a bench run of these settings. */
export function rulesSizes(settings: BenchSettings): RulesSizes {
  return {
    connections: settings.connections,
    warmupSeconds: settings.serviceWarmupSeconds,
    createSeconds: settings.createSeconds,
    createRounds: settings.rulesCreateRounds,
    checkSeconds: 1,
    drainRuns: settings.rulesDrainRuns,
    drainRounds: settings.rulesDrainRounds,
    warmupRuns: Math.round(settings.rulesDrainRuns / 4),
  };
}

export interface RulesCreateRound {
  template: RulesTemplateKey;
  round: number;
  load: LoadResult;
  /** CPU µs per create: the API, MariaDB, Redis, the load generator. */
  cpuUsPerCreate: Record<string, number>;
  /** The SELECTs the API sent per create. */
  selectsPerCreate: number;
  /** The statements the API sent during the round, by shape. */
  shapes: Record<string, number>;
  /** Runs the round stored. */
  stored: number;
}

export interface RulesDrain {
  template: RulesTemplateKey;
  round: number;
  /** Step completions applied. */
  steps: number;
  /** From the turn given until none was owed. */
  seconds: number;
  stepsPerSecond: number;
  /** CPU µs per step applied: the worker, MariaDB, Redis (the worker's start-up excluded). */
  cpuUsPerStep: Record<string, number>;
  /** The SELECTs the worker sent per step applied. */
  selectsPerStep: number;
  /** The statements the worker sent during the drain, by shape. */
  shapes: Record<string, number>;
  /** Pages the drain passed over (its step.skipped events). */
  skipped: number;
  /** Runs whose new step has an assignee, and a due time. */
  assigned: number;
  due: number;
}

export interface RulesPhaseResult {
  pages: number;
  fields: number;
  rules: number;
  sizes: RulesSizes;
  creates: RulesCreateRound[];
  drains: RulesDrain[];
  /** Medians over the rounds, by template. */
  median: {
    apiUsPerCreate: PerTemplate<number>;
    createsPerSecond: PerTemplate<number>;
    createP99Ms: PerTemplate<number>;
    selectsPerCreate: PerTemplate<number>;
    workerUsPerStep: PerTemplate<number>;
    stepsPerSecond: PerTemplate<number>;
    selectsPerStep: PerTemplate<number>;
  };
  /** A ÷ B of the medians: the issue's targets. */
  ratio: { apiPerCreate: number; workerPerStep: number };
  /**
   * The SELECTs A's rounds sent of statements that no round of B or C sent: each statement's
   * rate per create of A (the API) and per step A applied (the worker), and the largest rate
   * of each (the target: RULES_EXTRA_SELECTS_LIMIT).
   */
  extraSelects: {
    perCreate: number;
    perStep: number;
    api: Record<string, number>;
    worker: Record<string, number>;
  };
  checks: {
    /** Runs the measured create rounds stored. */
    created: PerTemplate<number>;
    /** Runs of the check's creates, each then started by the worker. */
    started: PerTemplate<number>;
    /** Completions the measured drains applied, and the pages they passed over. */
    applied: PerTemplate<number>;
    skipped: PerTemplate<number>;
    /** What was not as designed; empty when every check held. */
    problems: string[];
  };
}

export interface RulesPhaseDeps {
  db: Db;
  /** The organization given templates A, B and C; its key makes the creates. */
  tenant: Tenant;
  /** The environment of the API and the worker the phase starts (database, Redis, limits). */
  env: Record<string, string>;
  /** The queue prefix of the API (the turns its creates give) and of the worker. */
  apiPrefix: string;
  workerPrefix: string;
  /** Node flags for the API (BENCH_API_NODE_ARGS, e.g. --cpu-prof). */
  apiNodeArgs?: string[];
  sizes: RulesSizes;
  log: (line: string) => void;
}

const perTemplate = <T>(value: (key: RulesTemplateKey) => T): PerTemplate<T> => ({
  A: value('A'),
  B: value('B'),
  C: value('C'),
});

/** Round r's order: ABC, then CBA, and so on. */
const orderOf = (r: number): readonly RulesTemplateKey[] =>
  r % 2 === 0 ? RULES_TEMPLATE_KEYS : [...RULES_TEMPLATE_KEYS].reverse();

/** The query counter loaded into the API and the worker (node --import). */
const COUNTER = new URL('../query-counter.js', import.meta.url).href;

/** A process started with the counter, and the file it writes its counts to. */
interface Counted {
  proc: BenchProcess;
  file: string;
}

function startCounted(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[],
): Counted {
  const file = join(LOG_DIR, `${name}-queries.json`);
  rmSync(file, { force: true });
  const proc = startScript(name, script, {
    env: { ...env, BENCH_QUERY_COUNTS: file },
    nodeArgs: ['--import', COUNTER, ...nodeArgs],
  });
  return { proc, file };
}

/** What the process has sent so far (it writes its counts when signalled). */
async function queryCounts({ proc, file }: Counted): Promise<QueryCounts> {
  rmSync(file, { force: true });
  process.kill(proc.pid, 'SIGUSR2');
  const deadline = Date.now() + 10_000;
  while (!existsSync(file)) {
    if (!proc.running) throw new Error(`rules: ${proc.name} exited:\n${proc.tail()}`);
    if (Date.now() > deadline) throw new Error(`rules: ${proc.name} wrote no query counts`);
    await sleep(5);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as QueryCounts;
}

/** The statements sent between two readings, by shape. */
function sentBetween(before: QueryCounts, after: QueryCounts): QueryCounts {
  const shapes: Record<string, number> = {};
  for (const [shape, n] of Object.entries(after.shapes)) {
    const sent = n - (before.shapes[shape] ?? 0);
    if (sent > 0) shapes[shape] = sent;
  }
  return {
    statements: after.statements - before.statements,
    selects: after.selects - before.selects,
    shapes,
  };
}

const isSelect = (shape: string) => /^select\b/i.test(shape);

/** A's SELECTs by shape, of the shapes no round of B or C sent. */
function extraShapes(
  a: ReadonlyArray<Record<string, number>>,
  others: ReadonlyArray<Record<string, number>>,
): Record<string, number> {
  const known = new Set(others.flatMap((shapes) => Object.keys(shapes)));
  const extra: Record<string, number> = {};
  for (const shapes of a) {
    for (const [shape, n] of Object.entries(shapes)) {
      if (isSelect(shape) && !known.has(shape)) extra[shape] = (extra[shape] ?? 0) + n;
    }
  }
  return extra;
}

/** The three templates, each checked as the API checks a definition; the organization's zone. */
async function makeTemplates(db: Db, tenant: Tenant): Promise<PerTemplate<Template>> {
  const store = new TemplateStore(db);
  const made = new Map<RulesTemplateKey, Template>();
  for (const key of RULES_TEMPLATE_KEYS) {
    // A definition the API would refuse would measure nothing: the API's own check first.
    const definition = parseTemplateDefinition(rulesDefinition(key));
    made.set(key, await store.insert(tenant.orgId, definition));
  }
  await db('organizations').where({ id: tenant.orgId }).update({ time_zone: RULES_TIME_ZONE });
  return perTemplate((key) => made.get(key)!);
}

/** Runs of a template owing a step's completion, and what applying each must make. */
interface Owed {
  /** A run at each of A's steps (VISIBLE_PAGES), owing that step's completion. */
  prototypes: RunRecord[];
  /** Each with its completion applied in this process, by the service's state machine. */
  expected: RunRecord[];
}

/**
 * A run of the template at each of A's steps, owing its completion, made as the API and the
 * worker make it (created with every value, started, each step completed with its page's
 * values) and just now, so that no reconciler takes it before its turn is given.
 */
function owedCompletions(template: Template, organizationId: string): Owed {
  const now = new Date();
  const timeZone = needsTimeZone(template) ? RULES_TIME_ZONE : undefined;
  const prototypes = VISIBLE_PAGES.map((position) => {
    const created = newRun(
      newId(),
      organizationId,
      template,
      { ...VALUES },
      {},
      now,
      SYSTEM,
      undefined,
      timeZone,
    );
    let run = applyPending(created, now);
    while (run.document.current_step !== position) {
      const step = run.document.current_step;
      if (run.status !== 'active' || step === null || step > position) {
        throw new Error(`rules: a run of ${template.name} does not reach page ${position}`);
      }
      run = applyPending(requestStepCompletion(run, pageValues(step), now, SYSTEM), now);
    }
    // Stored without its history: the worker reads none, and a drain's events are its own.
    return { ...requestStepCompletion(run, pageValues(position), now, SYSTEM), events: [] };
  });
  return { prototypes, expected: prototypes.map((run) => applyPending(run, now)) };
}

/** That a run completed through every step passes over the pages the design says. */
function designProblems(key: RulesTemplateKey, owed: Owed): string[] {
  const last = owed.expected[owed.expected.length - 1];
  const skipped = (last?.document.steps ?? [])
    .map((step, page) => (step.status === 'skipped' ? page : -1))
    .filter((page) => page >= 0);
  const want = key === 'A' ? SKIPPED_PAGES : [];
  return last?.status === 'completed' && skipped.join() === want.join()
    ? []
    : [
        `${key}: a run completed in this process is ${last?.status}, pages skipped [${skipped.join(', ')}], not [${want.join(', ')}]`,
      ];
}

/** Adds n to a count in a map. */
const add = (map: Map<string, number>, key: string, n: number) =>
  map.set(key, (map.get(key) ?? 0) + n);

/** Where two counts by key differ, as problems (a few at most). */
function countsDiffer(
  label: string,
  what: string,
  got: Map<string, number>,
  want: Map<string, number>,
): string[] {
  const problems: string[] = [];
  for (const key of new Set([...got.keys(), ...want.keys()])) {
    const g = got.get(key) ?? 0;
    const w = want.get(key) ?? 0;
    if (g !== w) problems.push(`${label}: ${g} ${what} ${key}, expected ${w}`);
  }
  return problems.slice(0, 5);
}

interface StepRow {
  status: string;
  current_step_index: number | null;
  current_step_assignee: string | null;
  current_step_due_date: Date | null;
  owed: number;
}

/**
 * What the drain left in MariaDB against what the state machine made of each prototype in this
 * process, `copies` times: runs by status, step, assignee and due time (exact for A, whose due
 * times come from date fields; set or not for B and C, whose come from when the step started);
 * events by type; each page's steps passed over.
 */
async function checkDrain(
  db: Db,
  key: RulesTemplateKey,
  organizationId: string,
  owed: Owed,
  copies: number,
): Promise<{ problems: string[]; skipped: number; assigned: number; due: number }> {
  const label = `drain of ${key}`;
  const exact = key === 'A';
  const outcome = (
    status: string,
    index: number | null,
    assignee: string | null,
    due: Date | null,
    stillOwed = false,
  ) =>
    `${status}${stillOwed ? ' (still owed)' : ''} at step ${index ?? '-'}, assigned ${assignee ?? '-'}, due ${
      due === null ? '-' : exact ? due.toISOString() : 'set'
    }`;

  const wantRuns = new Map<string, number>();
  const wantEvents = new Map<string, number>();
  const wantSkippedPages = new Map<string, number>();
  for (const run of owed.expected) {
    add(
      wantRuns,
      outcome(run.status, run.currentStepIndex, run.currentStepAssignee, run.currentStepDueDate),
      copies,
    );
    for (const event of run.events) add(wantEvents, event.type, copies);
    run.document.steps.forEach((step, page) => {
      if (step.status === 'skipped') add(wantSkippedPages, `page ${page}`, copies);
    });
  }

  const [rows] = (await db.raw(
    'SELECT status, current_step_index, current_step_assignee, current_step_due_date, ' +
      '(pending_since IS NOT NULL) AS owed FROM workflow_runs WHERE organization_id = ?',
    [organizationId],
  )) as [StepRow[]];
  const gotRuns = new Map<string, number>();
  for (const row of rows) {
    add(
      gotRuns,
      outcome(
        row.status,
        row.current_step_index,
        row.current_step_assignee,
        row.current_step_due_date,
        Number(row.owed) === 1,
      ),
      1,
    );
  }
  const [events] = (await db.raw(
    'SELECT type, COUNT(*) AS n FROM run_events WHERE organization_id = ? GROUP BY type',
    [organizationId],
  )) as [Array<{ type: string; n: number | string }>];
  const gotEvents = new Map(events.map((e) => [e.type, Number(e.n)]));
  const pages = Array.from({ length: RULES_PAGES }, (_, page) => page);
  const [[skippedRow]] = (await db.raw(
    `SELECT ${pages
      .map((page) => `SUM(JSON_VALUE(run_json, '$.steps[${page}].status') = 'skipped') AS p${page}`)
      .join(', ')} FROM workflow_runs WHERE organization_id = ?`,
    [organizationId],
  )) as [[Record<string, number | string | null>]];
  const gotSkippedPages = new Map<string, number>();
  for (const page of pages) {
    const n = Number(skippedRow?.[`p${page}`] ?? 0);
    if (n > 0) gotSkippedPages.set(`page ${page}`, n);
  }

  return {
    problems: [
      ...countsDiffer(label, 'runs', gotRuns, wantRuns),
      ...countsDiffer(label, 'events of type', gotEvents, wantEvents),
      ...countsDiffer(label, 'runs passed over', gotSkippedPages, wantSkippedPages),
    ],
    skipped: gotEvents.get('step.skipped') ?? 0,
    assigned: rows.filter((row) => row.current_step_assignee !== null).length,
    due: rows.filter((row) => row.current_step_due_date !== null).length,
  };
}

/** Polls until the organization owes nothing. */
async function drained(
  db: Db,
  organizationId: string,
  worker: BenchProcess,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = await countPending(db, organizationId);
    if (pending === 0) return;
    if (!worker.running) throw new Error(`rules: the worker exited:\n${worker.tail()}`);
    if (Date.now() > deadline) {
      throw new Error(`rules: ${pending} runs still owed after ${timeoutMs / 1000} s`);
    }
    await sleep(25);
  }
}

type Turns = Awaited<ReturnType<typeof openTurns>>;

export async function measureRules(deps: RulesPhaseDeps): Promise<RulesPhaseResult> {
  const { db, tenant, sizes, log } = deps;
  const organizationId = tenant.orgId;
  const templates = await makeTemplates(db, tenant);
  const bodies = perTemplate((key) => rulesCreateBody(templates[key].id));
  const problems: string[] = [];
  const storage = new Map<string, number | TickReader>(storagePids(BENCH_REDIS_URL));
  const reset = async () => {
    await clearRuns(db);
    await clearHistory(db);
    await clearQueue(deps.apiPrefix);
  };
  const errorsOf = (r: LoadResult) => r.errors + r.timeouts + r.non2xx;

  /** The API alone (no worker), each round from empty tables. */
  const measureCreates = async (
    api: Counted,
    load: (key: RulesTemplateKey, seconds: number) => Promise<LoadResult>,
    loadPid: number,
  ): Promise<RulesCreateRound[]> => {
    const creates: RulesCreateRound[] = [];
    for (const key of RULES_TEMPLATE_KEYS) {
      await reset();
      await load(key, sizes.warmupSeconds);
    }
    for (let r = 1; r <= sizes.createRounds; r++) {
      for (const key of orderOf(r - 1)) {
        await reset();
        const countsBefore = await queryCounts(api);
        const meter = new CpuMeter(
          new Map<string, number | TickReader>([
            ['api', api.proc.pid],
            ...storage,
            ['load', processTicks(loadPid, true)],
          ]),
        );
        const result = await load(key, sizes.createSeconds);
        const cpuUsPerCreate = meter.usPer(result.ok);
        // A request still in flight when the load stopped may commit a moment later.
        await sleep(200);
        const sent = sentBetween(countsBefore, await queryCounts(api));
        const stored = await checkStored(db, templates[key].id, result, sizes.connections);
        problems.push(...stored.problems.map((p) => `create round ${r} of ${key}: ${p}`));
        const measured: RulesCreateRound = {
          template: key,
          round: r,
          load: result,
          cpuUsPerCreate,
          selectsPerCreate: round(sent.selects / Math.max(1, stored.stored), 4),
          shapes: sent.shapes,
          stored: stored.stored,
        };
        creates.push(measured);
        log(
          `  round ${r} ${key} (${RULES_TEMPLATE_LABELS[key]}) ${result.requestsPerSecond.toFixed(0).padStart(5)} creates/s` +
            `  p50 ${result.p50} ms  p99 ${result.p99} ms  errors ${errorsOf(result)}` +
            `  (CPU µs/create: ${cpuList(cpuUsPerCreate)}; API SELECTs/create ${measured.selectsPerCreate}; ${stored.stored} stored)`,
        );
      }
    }
    return creates;
  };

  /**
   * That the runs the API creates start: a second, unmeasured set of creates of each template,
   * then one turn, then every run read.
   */
  const checkCreatesStart = async (
    worker: BenchProcess,
    turns: Turns,
    load: (key: RulesTemplateKey, seconds: number) => Promise<LoadResult>,
  ) => {
    await reset();
    const created = perTemplate(() => 0);
    for (const key of RULES_TEMPLATE_KEYS) {
      const result = await load(key, sizes.checkSeconds);
      created[key] = result.ok;
      if (errorsOf(result) > 0) {
        problems.push(`started check: ${errorsOf(result)} creates of ${key} failed`);
      }
    }
    await sleep(200);
    await turns.notify(organizationId);
    await drained(db, organizationId, worker, 120_000);
    const check = await checkStarted(db, templates, organizationId, created);
    problems.push(...check.problems);
    log(
      `  started check: ${RULES_TEMPLATE_KEYS.map((k) => `${k} ${check.started[k]} runs created and started`).join(', ')}`,
    );
    return check.started;
  };

  /** Owed completions stored, then one turn given to the worker (up already), until none is owed. */
  const drain = async (
    worker: Counted,
    turns: Turns,
    key: RulesTemplateKey,
    roundNo: number,
    runs: number,
  ): Promise<RulesDrain> => {
    const copies = Math.max(1, Math.ceil(runs / VISIBLE_PAGES.length));
    const owed = owedCompletions(templates[key], organizationId);
    await clearRuns(db);
    await clearHistory(db);
    await insertRuns(db, owed.prototypes);
    for (const run of owed.prototypes) await copyRun(db, run.id, copies - 1, {}, false);
    const steps = copies * owed.prototypes.length;

    const countsBefore = await queryCounts(worker);
    const meter = new CpuMeter(
      new Map<string, number | TickReader>([['worker', worker.proc.pid], ...storage]),
    );
    const began = Date.now();
    await turns.notify(organizationId);
    await drained(db, organizationId, worker.proc, 300_000);
    const seconds = Math.max(0.001, (Date.now() - began) / 1000);
    const cpuUsPerStep = meter.usPer(steps);
    const sent = sentBetween(countsBefore, await queryCounts(worker));
    const checked = await checkDrain(db, key, organizationId, owed, copies);
    problems.push(...designProblems(key, owed), ...checked.problems);
    const result: RulesDrain = {
      template: key,
      round: roundNo,
      steps,
      seconds: round(seconds, 2),
      stepsPerSecond: round(steps / seconds, 0),
      cpuUsPerStep,
      selectsPerStep: round(sent.selects / steps, 4),
      shapes: sent.shapes,
      skipped: checked.skipped,
      assigned: checked.assigned,
      due: checked.due,
    };
    log(
      `  ${roundNo === 0 ? 'warm-up' : `drain ${roundNo}`} ${key} ${String(result.stepsPerSecond).padStart(6)} steps/s` +
        `  (${steps} completions in ${result.seconds} s; CPU µs/step: ${cpuList(cpuUsPerStep)};` +
        ` worker SELECTs/step ${result.selectsPerStep}; ${checked.skipped} pages passed over, ${checked.assigned} steps assigned, ${checked.due} due)`,
    );
    return result;
  };

  let creates: RulesCreateRound[];
  let started: PerTemplate<number>;
  const drains: RulesDrain[] = [];
  const generator = new RequestChild('rules-load', 'bench/load.js');
  let api: Counted | undefined;
  let worker: Counted | undefined;
  let turns: Turns | undefined;
  try {
    const port = await freePort();
    api = startCounted(
      'rules-api',
      'src/server.js',
      { ...deps.env, QUEUE_PREFIX: deps.apiPrefix, PORT: String(port) },
      deps.apiNodeArgs ?? [],
    );
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, api.proc);
    const load = (key: RulesTemplateKey, seconds: number) =>
      generator.request<LoadResult>(
        {
          url: `${url}/create-workflow-run`,
          body: bodies[key],
          headers: { authorization: tenant.key },
          connections: sizes.connections,
          seconds,
        } satisfies LoadOptions,
        (seconds + 30) * 1000,
      );
    creates = await measureCreates(api, load, generator.pid);

    // One worker for the rest: its start-up is in no drain's figures.
    await clearQueue(deps.workerPrefix);
    worker = startCounted(
      'rules-worker',
      'workers/main.js',
      { ...deps.env, QUEUE_PREFIX: deps.workerPrefix },
      WORKER_NODE_ARGS,
    );
    await waitForWorker(worker.proc, 'workers/main.js');
    turns = await openTurns(deps.workerPrefix);
    started = await checkCreatesStart(worker.proc, turns, load);
    if (sizes.warmupRuns > 0) {
      for (const key of RULES_TEMPLATE_KEYS) await drain(worker, turns, key, 0, sizes.warmupRuns);
    }
    for (let r = 1; r <= sizes.drainRounds; r++) {
      for (const key of orderOf(r - 1)) {
        drains.push(await drain(worker, turns, key, r, sizes.drainRuns));
      }
    }
    for (const proc of [api.proc, worker.proc]) {
      const errors = await proc.countInLog('"level":"error"');
      if (errors > 0) problems.push(`${proc.name} logged ${errors} error line(s): see its log`);
    }
  } finally {
    await turns?.close();
    await Promise.all([worker?.proc.stop(), api?.proc.stop()]);
    await generator.close();
  }
  await clearQueue(deps.workerPrefix);
  await reset();

  const creating = (key: RulesTemplateKey) => creates.filter((c) => c.template === key);
  const draining = (key: RulesTemplateKey) => drains.filter((d) => d.template === key);
  const medianOf = <T>(items: T[], pick: (item: T) => number) => round(median(items.map(pick)), 4);
  const m: RulesPhaseResult['median'] = {
    apiUsPerCreate: perTemplate((k) => medianOf(creating(k), (c) => c.cpuUsPerCreate.api ?? NaN)),
    createsPerSecond: perTemplate((k) => medianOf(creating(k), (c) => c.load.requestsPerSecond)),
    createP99Ms: perTemplate((k) => medianOf(creating(k), (c) => c.load.p99)),
    selectsPerCreate: perTemplate((k) => medianOf(creating(k), (c) => c.selectsPerCreate)),
    workerUsPerStep: perTemplate((k) => medianOf(draining(k), (d) => d.cpuUsPerStep.worker ?? NaN)),
    stepsPerSecond: perTemplate((k) => medianOf(draining(k), (d) => d.stepsPerSecond)),
    selectsPerStep: perTemplate((k) => medianOf(draining(k), (d) => d.selectsPerStep)),
  };
  const checks = {
    created: perTemplate((k) => creating(k).reduce((n, c) => n + c.stored, 0)),
    started,
    applied: perTemplate((k) => draining(k).reduce((n, d) => n + d.steps, 0)),
    skipped: perTemplate((k) => draining(k).reduce((n, d) => n + d.skipped, 0)),
    // A problem met in every drain (the design's) is said once.
    problems: [...new Set(problems)],
  };
  const shapesOf = (items: ReadonlyArray<{ shapes: Record<string, number> }>) =>
    items.map((item) => item.shapes);
  const apiExtra = extraShapes(shapesOf(creating('A')), [
    ...shapesOf(creating('B')),
    ...shapesOf(creating('C')),
  ]);
  const workerExtra = extraShapes(shapesOf(draining('A')), [
    ...shapesOf(draining('B')),
    ...shapesOf(draining('C')),
  ]);
  const rates = (shapes: Record<string, number>, items: number) =>
    Object.fromEntries(
      Object.entries(shapes).map(([shape, n]) => [shape, round(n / Math.max(1, items), 4)]),
    );
  const apiRates = rates(apiExtra, checks.created.A);
  const workerRates = rates(workerExtra, checks.applied.A);
  const largest = (perShape: Record<string, number>) => Math.max(0, ...Object.values(perShape));
  const result: RulesPhaseResult = {
    pages: RULES_PAGES,
    fields: RULES_PAGES * FIELDS_PER_PAGE,
    rules: templates.A.rules?.length ?? 0,
    sizes,
    creates,
    drains,
    median: m,
    ratio: {
      apiPerCreate: ratio(m.apiUsPerCreate.A, m.apiUsPerCreate.B),
      workerPerStep: ratio(m.workerUsPerStep.A, m.workerUsPerStep.B),
    },
    extraSelects: {
      perCreate: largest(apiRates),
      perStep: largest(workerRates),
      api: apiRates,
      worker: workerRates,
    },
    checks,
  };
  log(
    `  medians: API CPU µs/create A ${m.apiUsPerCreate.A}, B ${m.apiUsPerCreate.B}, C ${m.apiUsPerCreate.C} (A ÷ B ${result.ratio.apiPerCreate});` +
      ` worker CPU µs/step A ${m.workerUsPerStep.A}, B ${m.workerUsPerStep.B}, C ${m.workerUsPerStep.C} (A ÷ B ${result.ratio.workerPerStep})`,
  );
  for (const [who, perShape, per] of [
    ['API', apiRates, 'create'],
    ['worker', workerRates, 'step applied'],
  ] as const) {
    for (const [shape, rate] of Object.entries(perShape)) {
      log(`  the ${who} sent for A, never for B or C: ${rate} per ${per} × ${shape}`);
    }
  }
  for (const problem of checks.problems) log(`  not as designed: ${problem}`);
  return result;
}

/** That a round's creates were stored, pending, each with a value for every field. */
async function checkStored(
  db: Db,
  templateId: string,
  load: LoadResult,
  connections: number,
): Promise<{ stored: number; problems: string[] }> {
  const [[row]] = (await db.raw(
    "SELECT COUNT(*) AS n, SUM(status = 'pending') AS pending, " +
      "SUM(JSON_LENGTH(run_json, '$.input_fields') = ?) AS filled " +
      'FROM workflow_runs WHERE template_id = ?',
    [RULES_PAGES * FIELDS_PER_PAGE, templateId],
  )) as [[{ n: number | string; pending: number | string | null; filled: number | string | null }]];
  const stored = Number(row.n);
  const problems: string[] = [];
  if (load.errors + load.timeouts + load.non2xx > 0) {
    problems.push(
      `${load.errors + load.timeouts + load.non2xx} creates failed (${load.non2xx} not 2xx)`,
    );
  }
  // Every create answered was stored; one cut off by the end of the load may have been too.
  if (stored < load.ok || stored > load.ok + connections) {
    problems.push(`${load.ok} creates answered, ${stored} runs stored`);
  }
  if (Number(row.pending ?? 0) !== stored || Number(row.filled ?? 0) !== stored) {
    problems.push(
      `of ${stored} runs stored, ${Number(row.pending ?? 0)} pending, ${Number(row.filled ?? 0)} with every value`,
    );
  }
  return { stored, problems };
}

/**
 * That every run of the check's creates was started by the worker: each template's runs all
 * active at the first page, with every value, a due time (the page's 72 hours), and for A the
 * organization's time zone kept.
 */
async function checkStarted(
  db: Db,
  templates: PerTemplate<Template>,
  organizationId: string,
  created: PerTemplate<number>,
): Promise<{ started: PerTemplate<number>; problems: string[] }> {
  const [rows] = (await db.raw(
    'SELECT template_id, status, current_step_index, COUNT(*) AS n, ' +
      "SUM(JSON_LENGTH(run_json, '$.input_fields') = ?) AS filled, " +
      'SUM(current_step_due_date IS NOT NULL) AS due, ' +
      "SUM(JSON_VALUE(run_json, '$.time_zone') = ?) AS zoned " +
      'FROM workflow_runs WHERE organization_id = ? ' +
      'GROUP BY template_id, status, current_step_index',
    [RULES_PAGES * FIELDS_PER_PAGE, RULES_TIME_ZONE, organizationId],
  )) as [
    Array<{
      template_id: string;
      status: string;
      current_step_index: number | null;
      n: number | string;
      filled: number | string | null;
      due: number | string | null;
      zoned: number | string | null;
    }>,
  ];
  const problems: string[] = [];
  const started = perTemplate((key) => {
    const groups = rows.filter((row) => row.template_id === templates[key].id);
    const n = groups.reduce((sum, row) => sum + Number(row.n), 0);
    const first = groups[0];
    const zoned = key === 'A' ? n : 0;
    if (
      groups.length !== 1 ||
      first?.status !== 'active' ||
      first.current_step_index !== 0 ||
      n < created[key] ||
      n === 0 ||
      Number(first.filled ?? 0) !== n ||
      Number(first.due ?? 0) !== n ||
      Number(first.zoned ?? 0) !== zoned
    ) {
      problems.push(
        `started check of ${key}: ${created[key]} creates answered; stored: ${
          groups
            .map(
              (row) =>
                `${row.n} ${row.status} at step ${row.current_step_index ?? '-'} (${Number(row.filled ?? 0)} with every value, ${Number(row.due ?? 0)} due, ${Number(row.zoned ?? 0)} with the zone)`,
            )
            .join('; ') || 'none'
        }`,
      );
      return 0;
    }
    return n;
  });
  return { started, problems };
}
