// Insights (GET /get-run-insights) against real API and worker processes, MariaDB and Redis:
// - a history whose times the test sets (events written as the service writes them, folded by
//   the worker like any others), in an organization in Europe/Berlin across the end of summer
//   time: counts per day and per hour (the day of the change has 25), durations, lateness, open
//   runs by step, all equal to what the test computes from the same history; quantiles within
//   the documented 1% of the exact ones, the maximum exact;
// - runs made through the API: the figures equal those computed from their stored history, per
//   label and per assignee too; a deletion leaves the open runs; a bulk cancel counts each run
//   cancelled once;
// - two workers on a backlog, both SIGKILLed while they fold and Redis flushed: once caught up,
//   the figures are the exact ones (nothing folded twice or skipped);
// - an event whose transaction commits after a later id's is counted; retention keeps the
//   figures and forgets the fold's state of the runs it deleted;
// - refusals naming the parameter, isolation between organizations, the scope.
import { expect } from 'chai';
import type { InsightDuration, RunInsights } from '../../src/insights/insight-schemas.js';
import { DateTime } from 'luxon';
import type { TemplateDefinition } from '../../src/templates/definition/definition-types.js';
import { rebuildDailyRollups } from '../../src/insights/insight-store.js';
import { RunDeletionStore } from '../../src/retention/deletion-store.js';
import { createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

type Duration = InsightDuration;
type Insights = RunInsights;
interface Refusal {
  code: string;
  message: string;
  field?: string;
}

const TEMPLATE: TemplateDefinition = {
  name: 'Expense',
  pages: [
    { name: 'Submit', inputFields: [{ inputId: 'amount', fieldName: 'Amount' }] },
    { name: 'Check', dueInHours: 1, inputFields: [] },
    { name: 'Pay', inputFields: [] },
  ],
};

/** A stored event, as the test reads the history back or writes one. */
interface StoredEvent {
  run_id: string;
  seq: number;
  type: string;
  at: Date;
  data: Record<string, unknown>;
}

/** The figures computed from a history, the slow exact way: what the answer must equal. */
function exactFigures(
  events: readonly StoredEvent[],
  zone: string,
  unit: 'hour' | 'day',
  from: Date,
  to: Date,
  assignee?: string,
) {
  const bucketOf = (at: Date) =>
    DateTime.fromJSDate(at, { zone }).startOf(unit).toUTC().toISO({ suppressMilliseconds: false });
  const inRange = (at: Date) => at >= from && at < to;
  const buckets = new Map<string, { counts: Record<string, number>; ttc: number[] }>();
  const bucket = (at: Date) => {
    const key = bucketOf(at)!;
    let b = buckets.get(key);
    if (!b) {
      b = { counts: { created: 0, completed: 0, failed: 0, cancelled: 0 }, ttc: [] };
      buckets.set(key, b);
    }
    return b;
  };
  const ttc: number[] = [];
  const steps = new Map<string, { done: number; late: number; active: number[] }>();
  const open = new Map<string, { runs: number; overdue: number }>();
  let pending = 0;
  const byRun = new Map<string, StoredEvent[]>();
  for (const e of events) byRun.set(e.run_id, [...(byRun.get(e.run_id) ?? []), e]);
  for (const history of byRun.values()) {
    history.sort((a, b) => a.seq - b.seq);
    const created = history[0]!.at;
    let step: string | undefined;
    let startedAt = 0;
    let due: number | undefined;
    let holder: string | undefined;
    let overdue = false;
    let ended = false;
    let started = false;
    for (const e of history) {
      const d = e.data;
      const enter = (name: unknown, dueDate: unknown, who: unknown) => {
        step = typeof name === 'string' ? name : undefined;
        startedAt = e.at.getTime();
        due = typeof dueDate === 'string' ? Date.parse(dueDate) : undefined;
        holder = typeof who === 'string' ? who : undefined;
        overdue = false;
      };
      if (e.type === 'run.created' && inRange(e.at)) bucket(e.at).counts.created! += 1;
      if (e.type === 'run.started') {
        started = true;
        enter(d.step, d.dueDate, d.assignee);
      }
      if (e.type === 'step.completed') {
        if (inRange(e.at) && (assignee === undefined || holder === assignee)) {
          const s = steps.get(String(d.step)) ?? { done: 0, late: 0, active: [] };
          s.done += 1;
          if (due !== undefined && e.at.getTime() > due) s.late += 1;
          s.active.push(e.at.getTime() - startedAt);
          steps.set(String(d.step), s);
        }
        if (typeof d.nextStep === 'string') enter(d.nextStep, d.nextDueDate, d.nextAssignee);
        else step = undefined;
      }
      if (e.type === 'step.overdue') overdue = true;
      if (e.type === 'run.completed' || e.type === 'run.failed' || e.type === 'run.cancelled') {
        ended = true;
        const kind = e.type.slice(4);
        if (inRange(e.at)) {
          bucket(e.at).counts[kind]! += 1;
          if (kind === 'completed') {
            const ms = e.at.getTime() - created.getTime();
            ttc.push(ms);
            bucket(e.at).ttc.push(ms);
          }
        }
      }
    }
    if (ended) continue;
    if (!started) {
      pending += 1;
    } else if (step !== undefined && (assignee === undefined || holder === assignee)) {
      const o = open.get(step) ?? { runs: 0, overdue: 0 };
      o.runs += 1;
      if (overdue) o.overdue += 1;
      open.set(step, o);
    }
  }
  return { buckets, ttc, steps, open, pending };
}

/** The exact quantile DDSketch approximates: the value of rank ⌊q·(n−1)⌋. */
function exactQuantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))]!;
}

/** A duration summary against the exact values: count and max exact, quantiles within 1%. */
function expectDuration(actual: Duration, values: readonly number[], what: string) {
  expect(actual.count, `${what}: count`).to.equal(values.length);
  if (values.length === 0) {
    expect(actual.p50Ms, what).to.equal(null);
    return;
  }
  expect(actual.maxMs, `${what}: max`).to.equal(Math.max(...values));
  for (const [q, got] of [
    [0.5, actual.p50Ms],
    [0.9, actual.p90Ms],
  ] as const) {
    const exact = exactQuantile(values, q);
    expect(got, `${what}: p${q * 100}`).to.be.a('number');
    expect(Math.abs(got! - exact), `${what}: p${q * 100} ${got} vs exact ${exact}`).to.be.at.most(
      exact * 0.01 + 1e-9,
    );
  }
}

/** The answer against the exact figures. */
function expectFigures(
  answer: Insights,
  exact: ReturnType<typeof exactFigures>,
  templateId: string,
) {
  for (const b of answer.buckets) {
    const want = exact.buckets.get(b.start) ?? {
      counts: { created: 0, completed: 0, failed: 0, cancelled: 0 },
      ttc: [],
    };
    expect(
      { created: b.created, completed: b.completed, failed: b.failed, cancelled: b.cancelled },
      `bucket ${b.start}`,
    ).to.deep.equal(want.counts);
    expectDuration(b.timeToComplete, want.ttc, `time to complete in ${b.start}`);
  }
  const counted = [...exact.buckets.values()].reduce((n, b) => n + b.counts.created!, 0);
  expect(
    answer.buckets.reduce((n, b) => n + b.created, 0),
    'every creation in a bucket',
  ).to.equal(counted);
  expectDuration(answer.timeToComplete, exact.ttc, 'time to complete');
  const steps = new Map(answer.steps.map((s) => [s.step, s]));
  for (const [name, want] of exact.steps) {
    const got = steps.get(name);
    expect(got, `step ${name}`).to.not.equal(undefined);
    expect(got!.templateId).to.equal(templateId);
    expect({ done: got!.completed, late: got!.late }, `step ${name}`).to.deep.equal({
      done: want.done,
      late: want.late,
    });
    expectDuration(got!.activeTime, want.active, `active time of ${name}`);
  }
  expect(answer.steps.filter((s) => s.completed > 0).length, 'steps with completions').to.equal(
    exact.steps.size,
  );
  const open = Object.fromEntries(
    answer.open.steps.map((s) => [s.step, { runs: s.runs, overdue: s.overdue }]),
  );
  expect(open, 'open runs by step').to.deep.equal(Object.fromEntries(exact.open));
  expect(answer.open.pending, 'pending runs').to.equal(exact.pending);
}

describe('Insights', function () {
  this.timeout(180_000);
  let api: ApiProcess;
  let worker: ServiceProcess;
  let redis: PrivateRedis;
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;

  before(async () => {
    redis = await startPrivateRedis();
    [api, worker] = await Promise.all([startApi(redis.env), startWorker(redis.env)]);
    tenant = await createTenant(testDb(), TEMPLATE);
    other = await createTenant(testDb(), TEMPLATE);
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await redis?.stop();
  });

  const insights = async (c: Client, query: string) => {
    const reply = await c.call<Insights>(`/get-run-insights?${query}`);
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return reply.body;
  };
  /** The answer once the fold has caught up with every event committed so far. */
  const caughtUp = (c: Client, query: string) =>
    waitFor(
      'the fold to catch up',
      async () => {
        const answer = await insights(c, query);
        return answer.lagMs === 0 ? answer : undefined;
      },
      60_000,
      200,
    );
  const historyOf = async (orgId: string): Promise<StoredEvent[]> => {
    const rows = (await testDb()('run_events')
      .where('organization_id', orgId)
      .select('run_id', 'seq', 'type', 'at', 'data')) as Array<
      Omit<StoredEvent, 'data'> & { data: string }
    >;
    return rows.map((r) => ({ ...r, seq: Number(r.seq), data: JSON.parse(r.data) }));
  };

  it('counts per day and per hour of the organization’s clock across a daylight-saving change, from a history whose times the test sets', async () => {
    const db = testDb();
    const berlin = await createTenant(db, TEMPLATE);
    await db('organizations').where('id', berlin.orgId).update({ time_zone: 'Europe/Berlin' });
    // Summer time ends at 03:00 local on 2026-10-25 (clocks go back to 02:00): that day has 25
    // hours. Runs from the 24th to the 26th, created every 37 minutes, taking varied times.
    const start = Date.parse('2026-10-23T22:00:00Z'); // 2026-10-24 00:00 local
    const rows: Array<Record<string, unknown>> = [];
    const id = berlin.template.id;
    for (let i = 0; i < 110; i++) {
      const runId = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const created = start + i * 37 * 60_000;
      const at = (ms: number) => new Date(created + ms);
      const events: Array<[string, number, Record<string, unknown>]> = [
        ['run.created', 0, { templateId: id, templateVersion: 1, workflowName: 'Expense' }],
        ['run.started', 1000, { step: 'Submit', assignee: 'ann' }],
      ];
      const submitMs = 1000 + ((i * 7919) % 5400) * 1000; // up to 90 minutes
      const checkDue = new Date(created + submitMs + 3_600_000).toISOString();
      if (i % 10 === 9) {
        events.push(['run.cancelled', 2000, { reason: 'no' }]);
      } else if (i % 10 === 8) {
        events.push(['run.failed', 2000, { error: 'x', step: 'Submit' }]);
      } else if (i % 11 !== 10) {
        events.push([
          'step.completed',
          submitMs,
          {
            step: 'Submit',
            inputFields: {},
            nextStep: 'Check',
            nextAssignee: 'bo',
            nextDueDate: checkDue,
          },
        ]);
        const checkMs = submitMs + ((i * 104729) % 7200) * 1000; // up to 2 h: late past 1 h
        if (i % 7 === 3) {
          // Left open at Check, overdue when the check took longer than its hour.
          if (checkMs - submitMs > 3_600_000)
            events.push([
              'step.overdue',
              submitMs + 3_600_000,
              { step: 'Check', dueDate: checkDue },
            ]);
        } else {
          events.push([
            'step.completed',
            checkMs,
            { step: 'Check', inputFields: {}, nextStep: 'Pay', nextAssignee: 'cy' },
          ]);
          events.push(['step.completed', checkMs + 60_000, { step: 'Pay', inputFields: {} }]);
          events.push(['run.completed', checkMs + 60_000, {}]);
        }
      }
      events.forEach(([type, ms, data], seq) =>
        rows.push({
          run_id: runId,
          organization_id: berlin.orgId,
          seq: seq + 1,
          type,
          at: at(ms),
          data: JSON.stringify(data),
        }),
      );
    }
    // Written in two commits, out of time order, as concurrent writers commit.
    await db('run_events').insert(rows.slice(200));
    await db('run_events').insert(rows.slice(0, 200));
    const history = await historyOf(berlin.orgId);
    const c = new Client(api.url, berlin.key);
    const from = new Date('2026-10-23T22:00:00Z');
    const to = new Date('2026-10-27T23:00:00Z');
    const days = await caughtUp(
      c,
      `template_id=${id}&bucket=day&from=${from.toISOString()}&to=${to.toISOString()}`,
    );
    expect(days.timeZone).to.equal('Europe/Berlin');
    expect(days.buckets.map((b) => [b.start, b.end])).to.deep.equal([
      ['2026-10-23T22:00:00.000Z', '2026-10-24T22:00:00.000Z'],
      ['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z'], // 25 hours
      ['2026-10-25T23:00:00.000Z', '2026-10-26T23:00:00.000Z'],
      ['2026-10-26T23:00:00.000Z', '2026-10-27T23:00:00.000Z'],
    ]);
    expectFigures(days, exactFigures(history, 'Europe/Berlin', 'day', from, to), id);
    expect(days.steps.find((s) => s.step === 'Check')!.late).to.be.greaterThan(0);
    expect(days.open.overdue).to.be.greaterThan(0);

    const dayOfChange = await insights(
      c,
      `template_id=${id}&bucket=hour&from=2026-10-24T22:00:00Z&to=2026-10-25T23:00:00Z`,
    );
    expect(dayOfChange.buckets).to.have.length(25);
    expectFigures(
      dayOfChange,
      exactFigures(
        history,
        'Europe/Berlin',
        'hour',
        new Date('2026-10-24T22:00:00Z'),
        new Date('2026-10-25T23:00:00Z'),
      ),
      id,
    );
    // The organization's view holds the same (its only template).
    const all = await insights(c, `bucket=day&from=${from.toISOString()}&to=${to.toISOString()}`);
    expect(all.buckets).to.deep.equal(days.buckets);
    // Another organization sees none of it.
    const theirs = await insights(
      new Client(api.url, other.key),
      `bucket=day&from=${from.toISOString()}&to=${to.toISOString()}`,
    );
    expect(theirs.buckets.every((b) => b.created === 0)).to.equal(true);
    expect(theirs.steps).to.deep.equal([]);

    // The daily rollups made anew from the hourly ones (as the migration that added them fills
    // them) are the ones the fold kept.
    const daily = async () =>
      Promise.all(
        ['insight_run_days', 'insight_step_days'].map((table) =>
          db(table)
            .where('organization_id', berlin.orgId)
            .orderBy(['template_id', 'slice', 'slot']),
        ),
      );
    const kept = await daily();
    expect(kept[0]!.length).to.be.at.least(3);
    await rebuildDailyRollups(db);
    expect(await daily()).to.deep.equal(kept);

    // After a change of the organization's zone, days are the new zone's: summed from the
    // hours, since the daily rollups are of Berlin's days.
    const moved = await c.call('/update-organization-settings', { time_zone: 'America/New_York' });
    expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
    const [nyFrom, nyTo] = [new Date('2026-10-24T04:00:00Z'), new Date('2026-10-28T04:00:00Z')];
    const nyDays = await insights(
      c,
      `template_id=${id}&bucket=day&from=${nyFrom.toISOString()}&to=${nyTo.toISOString()}`,
    );
    expect(nyDays.timeZone).to.equal('America/New_York');
    expect(nyDays.buckets[0]!.start).to.equal(nyFrom.toISOString());
    expectFigures(nyDays, exactFigures(history, 'America/New_York', 'day', nyFrom, nyTo), id);
  });

  it('figures of runs made through the API equal those computed from their history, per label and per assignee; a deletion leaves the open runs', async () => {
    const id = tenant.template.id;
    const runs: string[] = [];
    for (let i = 0; i < 24; i++) {
      const created = await client.createRun({
        workflow_template_id: id,
        input_fields: { amount: String(i) },
        user_assignments: { Submit: i % 2 ? 'ann' : 'bo', Check: 'cy' },
        labels: { team: i % 3 ? 'red' : 'blue' },
      });
      expect(created.status).to.equal(200);
      runs.push(created.body.id as string);
    }
    await waitFor('every run started', async () => {
      const active = await client.listRuns(`?template_id=${id}&status=active&limit=100`);
      return active.body.length === runs.length;
    });
    /** Completes the step of the runs given, then waits until each has moved past it. */
    const complete = async (step: string, which: (i: number) => boolean) => {
      const chosen = runs.filter((_, i) => which(i));
      for (const runId of chosen) {
        const done = await client.completeStep({ workflow_run_id: runId, step_name: step });
        expect(done.status, JSON.stringify(done.body)).to.be.oneOf([200, 202]);
      }
      await waitFor(`${step} applied`, async () => {
        for (const runId of chosen) {
          const run = await client.getRun(runId);
          if (run.body.currentStepName === step && run.body.status === 'active') return false;
        }
        return true;
      });
    };
    for (const [i, runId] of runs.entries()) {
      if (i % 4 !== 3) continue;
      const cancelled = await client.cancelRun({ workflow_run_id: runId, reason: 'not needed' });
      expect(cancelled.status).to.be.oneOf([200, 202]);
    }
    await complete('Submit', (i) => i % 4 !== 3);
    await complete('Check', (i) => i % 4 === 0 || i % 4 === 1);
    await complete('Pay', (i) => i % 4 === 0);
    const from = new Date(Date.now() - 3_600_000);
    const to = new Date(Date.now() + 3_600_000);
    const range = `from=${from.toISOString()}&to=${to.toISOString()}&bucket=hour`;
    const answer = await caughtUp(client, `template_id=${id}&${range}`);
    const history = await historyOf(tenant.orgId);
    expectFigures(answer, exactFigures(history, 'UTC', 'hour', from, to), id);
    expect(answer.open.steps.map((s) => s.step).sort()).to.deep.equal(['Check', 'Pay']);
    // The run list's step filter finds the runs an open step counts.
    const atCheck = await client.listRuns(`?template_id=${id}&status=active&step=Check&limit=100`);
    expect(atCheck.body.map((r) => r.id).sort()).to.deep.equal(
      runs.filter((_, i) => i % 4 === 2).sort(),
    );
    expect(answer.open.steps.find((s) => s.step === 'Check')!.runs).to.equal(atCheck.body.length);
    const stepAlone = await client.call<Refusal>('/get-workflow-runs?step=Check');
    expect([stepAlone.status, stepAlone.body.field]).to.deep.equal([400, '/step']);

    // One label's runs: the figures of the runs with it.
    const blue = new Set(runs.filter((_, i) => i % 3 === 0));
    const byLabel = await insights(client, `template_id=${id}&${range}&label=team:blue`);
    expectFigures(
      byLabel,
      exactFigures(
        history.filter((e) => blue.has(e.run_id)),
        'UTC',
        'hour',
        from,
        to,
      ),
      id,
    );
    // One assignee's steps: those ann held (Submit of the odd runs).
    const byAnn = await insights(client, `template_id=${id}&${range}&assignee=ann`);
    expect(byAnn.steps.map((s) => [s.step, s.completed])).to.deep.equal([
      ['Submit', runs.filter((_, i) => i % 2 === 1 && i % 4 !== 3).length],
    ]);
    expectFigures(
      { ...byAnn, buckets: answer.buckets, timeToComplete: answer.timeToComplete },
      exactFigures(history, 'UTC', 'hour', from, to, 'ann'),
      id,
    );
    // A version: every run is at 1; version 1 alone is the same.
    const v1 = await insights(client, `template_id=${id}&template_version=1&${range}`);
    expect(v1.buckets).to.deep.equal(answer.buckets);

    // A run deleted while open leaves the open runs; what it did before stays counted.
    const openRun = runs[2]!;
    const deleted = await client.call('/delete-workflow-run', { workflow_run_id: openRun });
    expect(deleted.status).to.equal(200);
    const after = await caughtUp(client, `template_id=${id}&${range}`);
    expect(after.open.runs).to.equal(answer.open.runs - 1);
    expect(after.buckets.reduce((n, b) => n + b.created, 0)).to.equal(runs.length);
  });

  it('keeps the figures exact through a bulk cancel: each run counted cancelled once, none left open', async () => {
    const bulkTenant = await createTenant(testDb(), TEMPLATE);
    const c = new Client(api.url, bulkTenant.key);
    const id = bulkTenant.template.id;
    for (let i = 0; i < 12; i++) {
      const created = await c.createRun({
        workflow_template_id: id,
        input_fields: { amount: String(i) },
        labels: { batch: i < 8 ? 'withdrawn' : 'kept' },
      });
      expect(created.status).to.equal(200);
    }
    await waitFor('every run started', async () => {
      const active = await c.listRuns(`?template_id=${id}&status=active&limit=100`);
      return active.body.length === 12;
    });
    const bulk = await c.call<{ id: string }>('/bulk-cancel-workflow-runs', {
      filter: { label: ['batch:withdrawn'] },
      reason: 'batch withdrawn',
    });
    expect(bulk.status, JSON.stringify(bulk.body)).to.be.oneOf([200, 202]);
    await waitFor('the bulk cancel done', async () => {
      const action = await c.call<{ status: string; done: number }>(
        `/get-bulk-action?id=${encodeURIComponent(bulk.body.id)}`,
      );
      return action.body.status === 'completed' && action.body.done === 8;
    });
    const from = new Date(Date.now() - 3_600_000);
    const to = new Date(Date.now() + 3_600_000);
    const answer = await caughtUp(
      c,
      `template_id=${id}&from=${from.toISOString()}&to=${to.toISOString()}&bucket=hour`,
    );
    expectFigures(
      answer,
      exactFigures(await historyOf(bulkTenant.orgId), 'UTC', 'hour', from, to),
      id,
    );
    expect(answer.buckets.reduce((n, b) => n + b.cancelled, 0)).to.equal(8);
    expect(answer.open.runs).to.equal(4);
  });

  it('once caught up after the worker is SIGKILLed while it folds and Redis is flushed, the figures are the exact ones', async () => {
    const db = testDb();
    const t = await createTenant(db, TEMPLATE);
    const c = new Client(api.url, t.key);
    // A backlog of events the worker folds in several batches: written while no worker runs.
    await worker.stop();
    const rows: Array<Record<string, unknown>> = [];
    const base = Date.now() - 30 * 60_000;
    for (let i = 0; i < 6000; i++) {
      const runId = `10000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const created = base + i * 300;
      const events: Array<[string, number, Record<string, unknown>]> = [
        [
          'run.created',
          0,
          { templateId: t.template.id, templateVersion: 1, workflowName: 'Expense' },
        ],
        ['run.started', 5, { step: 'Submit' }],
      ];
      if (i % 2 === 0) {
        events.push([
          'step.completed',
          50 + i,
          { step: 'Submit', inputFields: {}, nextStep: 'Check' },
        ]);
        events.push([
          'step.completed',
          80 + 2 * i,
          { step: 'Check', inputFields: {}, nextStep: 'Pay' },
        ]);
        events.push(['step.completed', 90 + 3 * i, { step: 'Pay', inputFields: {} }]);
        events.push(['run.completed', 90 + 3 * i, {}]);
      }
      events.forEach(([type, ms, data], seq) =>
        rows.push({
          run_id: runId,
          organization_id: t.orgId,
          seq: seq + 1,
          type,
          at: new Date(created + ms),
          data: JSON.stringify(data),
        }),
      );
    }
    for (let i = 0; i < rows.length; i += 1000)
      await db('run_events').insert(rows.slice(i, i + 1000));
    const cursorBefore = Number((await db('insight_cursor').first('event_id'))!.event_id);
    // Two workers on the backlog at once: one folds at a time (the cursor's row), the other
    // skips its turn; then the one folding is SIGKILLed, whichever it is.
    const [first, second] = await Promise.all([startWorker(redis.env), startWorker(redis.env)]);
    worker = first;
    await waitFor(
      'the fold to be under way',
      async () => {
        const cursor = Number((await db('insight_cursor').first('event_id'))!.event_id);
        return cursor > cursorBefore;
      },
      30_000,
      5,
    );
    await Promise.all([first.stop('SIGKILL'), second.stop('SIGKILL')]);
    await redis.flushAll();
    const [third, fourth] = await Promise.all([startWorker(redis.env), startWorker(redis.env)]);
    worker = third;
    const from = new Date(base - 3_600_000);
    const to = new Date(Date.now() + 3_600_000);
    const answer = await caughtUp(
      c,
      `template_id=${t.template.id}&bucket=hour&from=${from.toISOString()}&to=${to.toISOString()}`,
    );
    expectFigures(
      answer,
      exactFigures(await historyOf(t.orgId), 'UTC', 'hour', from, to),
      t.template.id,
    );
    expect(answer.timeToComplete.count).to.equal(3000);
    await fourth.stop();
  });

  it('keeps the figures of runs that retention deleted, and forgets what it kept of them', async () => {
    const db = testDb();
    // An approval a rejection fails: the fold keeps a failed run (a retry may resume it).
    const t = await createTenant(db, {
      name: 'Approval',
      pages: [{ name: 'Decide', kind: 'approval', inputFields: [] }],
    });
    const c = new Client(api.url, t.key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await c.createRun({
        workflow_template_id: t.template.id,
        input_fields: {},
        labels: { customer: `c${i}` },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(200);
      ids.push(created.body.id as string);
    }
    await waitFor('every run started', async () => {
      const active = await c.listRuns(`?template_id=${t.template.id}&status=active`);
      return active.body.length === 3;
    });
    for (const id of ids.slice(0, 2)) {
      const rejected = await c.completeStep({
        workflow_run_id: id,
        step_name: 'Decide',
        decision: 'rejected',
        completed_by: 'mia',
      });
      expect(rejected.status, JSON.stringify(rejected.body)).to.be.oneOf([200, 202]);
    }
    const range = `template_id=${t.template.id}&bucket=day`;
    const before = await waitFor('the failures folded', async () => {
      const answer = await caughtUp(c, range);
      return answer.buckets.reduce((n, b) => n + b.failed, 0) === 2 ? answer : undefined;
    });
    expect(await db('insight_runs').whereIn('run_id', ids).count({ n: '*' })).to.deep.equal([
      { n: 3 },
    ]);
    await db('workflow_runs')
      .whereIn('id', ids.slice(0, 2))
      .update({ last_activity: new Date(Date.now() - 40 * 86_400_000) });
    const deleted = await new RunDeletionStore(db, 5000).deleteExpired(
      t.orgId,
      new Date(Date.now() - 30 * 86_400_000),
      100,
    );
    expect(deleted).to.equal(2);
    const after = await caughtUp(c, range);
    expect(after.buckets).to.deep.equal(before.buckets);
    expect(after.open).to.deep.equal(before.open);
    expect(after.open.runs).to.equal(1);
    // Nothing of the deleted runs (their labels among it) is left in the fold's own state.
    const kept = await db('insight_runs').whereIn('run_id', ids).pluck('run_id');
    expect(kept).to.deep.equal([ids[2]]);
  });

  it('counts an event whose transaction commits after one with a later id (the cursor never passes an id in flight)', async () => {
    const db = testDb();
    const t = await createTenant(db, TEMPLATE);
    const c = new Client(api.url, t.key);
    const created = (n: number) => ({
      run_id: `20000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      organization_id: t.orgId,
      seq: 1,
      type: 'run.created',
      at: new Date(),
      data: JSON.stringify({ templateId: t.template.id, templateVersion: 1, workflowName: 'x' }),
    });
    const range = `template_id=${t.template.id}&bucket=day`;
    // The first insert takes its id and stays uncommitted while a later id commits and the
    // fold runs past it.
    const slow = await db.transaction();
    try {
      await slow('run_events').insert(created(1));
      await db('run_events').insert(created(2));
      // Long enough for several passes of the fold (every second, and at once on a signal).
      await new Promise((r) => setTimeout(r, 2500));
      await slow.commit();
    } catch (err) {
      await slow.rollback();
      throw err;
    }
    const answer = await caughtUp(c, range);
    expect(answer.buckets.reduce((n, b) => n + b.created, 0)).to.equal(2);
  });

  it('refuses a bad range, bucket or filter naming the parameter, another organization’s template, and a key without runs:read', async () => {
    const id = tenant.template.id;
    const cases: Array<[string, number, string, string]> = [
      ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 400, 'invalid_query', '/from'],
      [
        'bucket=hour&from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z',
        400,
        'invalid_query',
        '/bucket',
      ],
      ['bucket=month', 400, 'invalid_query', '/bucket'],
      ['from=yesterday', 400, 'invalid_query', '/from'],
      ['template_version=1', 400, 'invalid_query', '/template_version'],
      ['label=team:red&assignee=ann', 400, 'invalid_query', '/assignee'],
      ['label=nocolon', 400, 'invalid_query', '/label'],
      [`template_id=${other.template.id}`, 400, 'unknown_template', '/template_id'],
      [
        `template_id=${id}&template_version=9`,
        400,
        'unknown_template_version',
        '/template_version',
      ],
    ];
    for (const [query, status, code, field] of cases) {
      const reply = await client.call<Refusal>(`/get-run-insights?${query}`);
      expect([reply.status, reply.body.code, reply.body.field], query).to.deep.equal([
        status,
        code,
        field,
      ]);
      expect(reply.body.message, query).to.be.a('string').and.not.equal('');
    }
    const writer = await createKey(testDb(), tenant.orgId, { scopes: ['runs:write'] });
    const refused = await new Client(api.url, writer.key).call<Refusal>('/get-run-insights');
    expect(refused.status).to.equal(403);
  });
});
