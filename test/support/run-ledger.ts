// What clients were told, and the check that MySQL agrees with it. A Ledger records every run
// a client got a 200 for and every completion it got a 202 for; runProblems() then compares
// each stored run with the state those accepted requests imply: every change applied exactly
// once (applied_seq = requested_seq = 1 + completions), steps in order with consistent
// timestamps, last activity at the latest step time, the inputs merged.
import type { Db } from '../../src/db.js';
import type { RunDocument } from '../../src/runs/run-record.js';
import type { RunRow } from '../../src/runs/run-columns.js';
import type { Template } from '../../src/templates/template.js';
import { createBody, type Tenant } from './fixtures.js';
import type { Client } from './http.js';
import { sleep } from './wait.js';

export interface ToldRun {
  id: string;
  orgId: string;
  templateId: string;
  /** The template's pages (a stored document carries the template by id only). */
  pages: Template['pages'];
  inputs: Record<string, string>;
  /** input_fields of each completion answered 202, in order. */
  completions: Array<Record<string, string>>;
}

export class Ledger {
  readonly runs = new Map<string, ToldRun>();
  /** Answers no client should have had (a 500, a 400 for a valid request, ...). */
  readonly unexpected: string[] = [];

  created(tenant: Tenant, body: { input_fields: Record<string, string> }, id: string): ToldRun {
    const run: ToldRun = {
      id,
      orgId: tenant.orgId,
      templateId: tenant.template.id,
      pages: tenant.template.pages,
      inputs: body.input_fields,
      completions: [],
    };
    this.runs.set(id, run);
    return run;
  }

  get completions(): number {
    return [...this.runs.values()].reduce((n, r) => n + r.completions.length, 0);
  }
}

/** Values for every input of a step's page, distinct per run and step. */
export function stepInputs(template: Template, step: number, tag: string): Record<string, string> {
  const page = template.pages[step];
  if (!page) throw new Error(`template has no step ${step}`);
  return Object.fromEntries(page.inputFields.map((f) => [f.inputId, `${f.inputId}-${tag}`]));
}

/** Creates a run and answers 200; records it. Returns undefined (recorded as unexpected) else. */
export async function createRun(
  client: Client,
  tenant: Tenant,
  ledger: Ledger,
  tag: string,
): Promise<ToldRun | undefined> {
  const body = createBody(tenant, { input_fields: { item: `item-${tag}`, amount: tag } });
  const res = await client.createRun(body);
  if (res.status !== 200 || typeof res.body?.id !== 'string') {
    ledger.unexpected.push(`create answered ${res.status}: ${res.text.slice(0, 200)}`);
    return undefined;
  }
  return ledger.created(tenant, body, res.body.id);
}

/**
 * Asks to complete the run's current step until it is accepted (202). A 409 means the run has
 * not started yet or the previous completion is still being applied, so the client tries again,
 * as a real one would, until giveUpAt; then it gives up, which the final check reports.
 */
export async function completeNextStep(
  client: Client,
  tenant: Tenant,
  run: ToldRun,
  ledger: Ledger,
  giveUpAt: number,
): Promise<boolean> {
  const step = run.completions.length;
  const inputs = stepInputs(tenant.template, step, `${run.id.slice(-6)}-${step}`);
  while (Date.now() < giveUpAt) {
    const res = await client.completeStep({ workflow_run_id: run.id, input_fields: inputs });
    if (res.status === 202) {
      run.completions.push(inputs);
      return true;
    }
    if (res.status !== 409) {
      ledger.unexpected.push(`complete answered ${res.status}: ${res.text.slice(0, 200)}`);
      return false;
    }
    await sleep(50);
  }
  return false;
}

/** One client's life with one run: create it, then complete `steps` steps. */
export async function driveRun(
  client: Client,
  tenant: Tenant,
  ledger: Ledger,
  tag: string,
  steps: number,
  giveUpAfterMs = 30000,
): Promise<void> {
  const run = await createRun(client, tenant, ledger, tag);
  if (!run) return;
  const giveUpAt = Date.now() + giveUpAfterMs;
  for (let i = 0; i < steps; i++) {
    if (!(await completeNextStep(client, tenant, run, ledger, giveUpAt))) return;
  }
}

/** Runs the tasks with at most `concurrency` at a time (a pool of clients). */
export async function inPool<T>(
  items: T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await task(items[index]!, index);
      }
    }),
  );
}

/** A run as MySQL holds it, read directly (not through the store under test). */
export type StoredRun = RunRow;

const ms = (iso: string | null) => (iso === null ? NaN : Date.parse(iso));

/** What is wrong with one stored run, given what its clients were told; [] when nothing. */
export function checkRun(row: StoredRun | undefined, told: ToldRun): string[] {
  if (!row) return [`run ${told.id} was acknowledged but is not stored`];
  const problems: string[] = [];
  const say = (what: string) => problems.push(`run ${told.id}: ${what}`);
  if (row.organization_id !== told.orgId) say(`organization ${row.organization_id}`);
  if (row.template_id !== told.templateId) say(`template ${row.template_id}`);
  const owed = 1 + told.completions.length;
  if (row.requested_seq !== owed) say(`requested_seq ${row.requested_seq}, expected ${owed}`);
  if (row.applied_seq !== row.requested_seq)
    say(`applied_seq ${row.applied_seq} != requested_seq ${row.requested_seq}`);
  if (row.pending_since !== null) say('still has pending_since');
  const doc = JSON.parse(row.run_json) as RunDocument;
  if (doc.pending !== null) say(`still has a pending ${doc.pending.type}`);
  if (doc.error !== null) say(`error ${doc.error.message}`);

  const done = told.completions.length;
  const pages = told.pages.length;
  const finished = done >= pages;
  const status = finished ? 'completed' : 'active';
  if (row.status !== status) say(`status ${row.status}, expected ${status}`);
  const current = finished ? null : done;
  if (doc.current_step !== current || row.current_step_index !== current)
    say(`current step ${doc.current_step}/${row.current_step_index}, expected ${current}`);
  if (row.current_step_name !== (current === null ? null : doc.steps[current]!.name))
    say(`current_step_name ${row.current_step_name}`);

  // Steps in order: completed ones, then the active one, then waiting ones. Each step starts
  // when the one before it completes; a step's times never go backwards.
  let previousEnd = row.created_at.getTime();
  let latest = previousEnd;
  doc.steps.forEach((step, i) => {
    const expected = i < done ? 'completed' : i === done ? 'active' : 'waiting';
    if (step.status !== expected) say(`step ${i} is ${step.status}, expected ${expected}`);
    if (expected === 'waiting') {
      if (step.started_at !== null || step.completed_at !== null)
        say(`waiting step ${i} has times`);
      return;
    }
    const started = ms(step.started_at);
    if (!(started >= previousEnd))
      say(`step ${i} started ${step.started_at} before ${previousEnd}`);
    if (i > 0 && started !== ms(doc.steps[i - 1]!.completed_at))
      say(`step ${i} did not start when step ${i - 1} completed`);
    const due = told.pages[i]?.dueInHours;
    if (typeof due === 'number' && ms(step.due_date) !== started + due * 3600_000)
      say(`step ${i} due ${step.due_date}`);
    latest = Math.max(latest, started);
    if (expected === 'completed') {
      const completed = ms(step.completed_at);
      if (!(completed >= started)) say(`step ${i} completed_at ${step.completed_at}`);
      previousEnd = completed;
      latest = Math.max(latest, completed);
    } else if (step.completed_at !== null) {
      say(`active step ${i} has completed_at`);
    }
  });
  if (row.last_activity.getTime() !== latest)
    say(`last_activity ${row.last_activity.toISOString()}, latest step time ${latest}`);

  const inputs = Object.assign({}, told.inputs, ...told.completions) as Record<string, string>;
  if (JSON.stringify(sortKeys(doc.input_fields)) !== JSON.stringify(sortKeys(inputs)))
    say(`input_fields ${JSON.stringify(doc.input_fields)}`);
  return problems;
}

function sortKeys(o: Record<string, string>) {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
}

export async function storedRuns(db: Db, ids: string[]): Promise<Map<string, StoredRun>> {
  const rows: StoredRun[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    rows.push(...(await db<StoredRun>('workflow_runs').whereIn('id', ids.slice(i, i + 500))));
  }
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Every problem between MySQL and the ledger. With exact, a stored run of the ledger's
 * organizations that no client was told about is a problem too.
 */
export async function ledgerProblems(
  db: Db,
  ledger: Ledger,
  options: { exact?: boolean } = {},
): Promise<string[]> {
  const told = [...ledger.runs.values()];
  const stored = await storedRuns(
    db,
    told.map((r) => r.id),
  );
  const problems = told.flatMap((r) => checkRun(stored.get(r.id), r));
  if (options.exact) {
    const orgs = [...new Set(told.map((r) => r.orgId))];
    const all: Array<{ id: string }> = orgs.length
      ? await db('workflow_runs').select('id').whereIn('organization_id', orgs)
      : [];
    for (const { id } of all) {
      if (!ledger.runs.has(id)) problems.push(`run ${id} is stored but no client was told of it`);
    }
  }
  return problems;
}

/** Waits until MySQL agrees with the ledger; fails listing what still disagrees. */
export async function expectLedgerApplied(
  db: Db,
  ledger: Ledger,
  options: { exact?: boolean; timeoutMs?: number } = {},
): Promise<void> {
  if (ledger.unexpected.length > 0) {
    throw new Error(`unexpected answers:\n${ledger.unexpected.slice(0, 10).join('\n')}`);
  }
  const deadline = Date.now() + (options.timeoutMs ?? 20000);
  for (;;) {
    const problems = await ledgerProblems(db, ledger, options);
    if (problems.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `${problems.length} problems between MySQL and what clients were told:\n` +
          problems.slice(0, 15).join('\n'),
      );
    }
    await sleep(200);
  }
}
