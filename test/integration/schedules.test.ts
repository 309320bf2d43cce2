// Schedules against real API and worker processes, MariaDB and a Redis of the test's own: a
// schedule's refusals (each naming its field), its next times, a firing (one run, the schedule
// as its actor, scheduleId and scheduledFor, the list filtered by schedule_id), exactly once with
// three workers, a worker SIGKILLed at the firing moment with Redis flushed, catch-up after
// downtime inside and outside the window, each overlap rule with trigger now, pause and resume,
// backfill with its limit, and isolation between organizations. The cadence's rules across
// daylight-saving changes are unit/schedules' (a clock the test gives).
import { expect } from 'chai';
import type { TemplateDefinition } from '../../src/templates/definition/definition-types.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { sleep, waitFor } from '../support/wait.js';

type Json = Record<string, unknown>;
interface Schedule {
  id: string;
  state: string;
  nextTimes: string[];
  note?: string;
  lastFire?: Fire;
  code?: string;
  field?: string;
  message?: string;
}
interface Fire {
  scheduledFor: string;
  kind: string;
  outcome: string;
  reason?: string;
  missed?: number;
  until?: string;
  runId?: string;
}

const TEMPLATE: TemplateDefinition = {
  name: 'Daily check',
  pages: [{ name: 'Check', inputFields: [{ inputId: 'site', fieldName: 'Site' }] }],
};

describe('schedules @cluster', function () {
  this.timeout(120_000);
  let redis: PrivateRedis;
  let api: ApiProcess;
  let workers: ServiceProcess[] = [];
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;
  let otherClient: Client;
  let env: Record<string, string>;

  before(async () => {
    redis = await startPrivateRedis();
    env = { ...redis.env, RECONCILE_INTERVAL_MS: '500', RECONCILE_AFTER_MS: '2000' };
    [api, ...workers] = await Promise.all([startApi(env), startWorker(env)]);
    tenant = await createTenant(testDb(), TEMPLATE);
    other = await createTenant(testDb(), TEMPLATE);
    client = new Client(api.url, tenant.key);
    otherClient = new Client(api.url, other.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), ...workers.map((w) => w.stop())]);
    await redis?.stop();
  });

  const post = <T = Schedule>(path: string, body: Json, c = client) => c.call<T>(path, body);
  const create = (body: Json, c = client, t = tenant) =>
    post('/create-workflow-schedule', { workflow_template_id: t.template.id, ...body }, c);
  const history = async (id: string) =>
    (await client.call<Fire[]>(`/get-workflow-schedule-history?id=${id}&limit=1000`)).body;
  /** Every run a schedule created, read from the runs themselves (not from its records). */
  async function runsOf(scheduleId: string): Promise<Array<{ id: string; for: string }>> {
    const rows = (await testDb()('workflow_runs')
      .whereRaw("JSON_VALUE(run_json, '$.schedule.id') = ?", [scheduleId])
      .select(
        'id',
        testDb().raw("JSON_VALUE(run_json, '$.schedule.scheduled_for') AS f"),
      )) as Array<{
      id: string;
      f: string;
    }>;
    return rows.map((r) => ({ id: r.id, for: r.f })).sort((a, b) => a.for.localeCompare(b.for));
  }
  const soon = (ms: number) => new Date(Date.now() + ms).toISOString();

  it('refuses a schedule that cannot hold, naming the field', async () => {
    const cases: Array<[Json, string, string]> = [
      [{ cron: '61 * * * *' }, 'invalid_cron', '/cron'],
      [{ cron: '0 0 * * * *' }, 'invalid_cron', '/cron'],
      [{ cron: '0 9 * * *', time_zone: 'Mars/Base' }, 'invalid_time_zone', '/time_zone'],
      [{ cron: '0 9 * * *', interval_seconds: 60 }, 'invalid_schedule', '/interval_seconds'],
      [{}, 'invalid_schedule', '/cron'],
      [
        { interval_seconds: 60, start_at: soon(60_000), end_at: soon(1000) },
        'invalid_schedule',
        '/end_at',
      ],
      [{ interval_seconds: 30 }, 'invalid_body', '/interval_seconds'],
      [
        { cron: '0 9 * * *', input_fields: { nope: 'x' } },
        'unknown_input_field',
        '/input_fields/nope',
      ],
    ];
    for (const [body, code, field] of cases) {
      const reply = await create(body);
      expect(reply.status, JSON.stringify(body)).to.equal(400);
      expect(reply.body, JSON.stringify(body)).to.include({ code, field });
    }
    const foreign = await create({ cron: '0 9 * * *' }, client, other);
    expect(foreign.status).to.equal(400);
    expect(foreign.body).to.include({ code: 'unknown_template', field: '/workflow_template_id' });
  });

  it('fires one run at its time, made by the schedule, and lists it by schedule_id', async () => {
    const at = soon(2500);
    const made = await create({
      interval_seconds: 3600,
      start_at: at,
      time_zone: 'Europe/Berlin',
      input_fields: { site: 'Berlin' },
      labels: { source: 'schedule' },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    expect(made.body.nextTimes).to.have.length(5);
    expect(made.body.nextTimes[0]).to.equal(at);
    const fired = await waitFor('the run', async () => {
      const runs = await runsOf(made.body.id);
      return runs.length > 0 ? runs : undefined;
    });
    expect(fired.map((r) => r.for)).to.deep.equal([at]);
    const run = (await client.getRun(fired[0]!.id)).body as Json & {
      history: Array<{ type: string; actor: Json }>;
    };
    expect(run).to.include({ scheduleId: made.body.id, scheduledFor: at });
    expect(run.inputFields).to.deep.equal({ site: 'Berlin' });
    expect(run.labels).to.deep.equal({ source: 'schedule' });
    expect(run.history[0]).to.deep.include({
      type: 'run.created',
      actor: { type: 'schedule', id: made.body.id },
    });
    await waitFor(
      'the run started',
      async () => (await client.getRun(fired[0]!.id)).body.status === 'active',
    );
    const listed = await client.listRuns(`?schedule_id=${made.body.id}`);
    expect(listed.body.map((r) => r.id)).to.deep.equal([fired[0]!.id]);
    expect((await otherClient.listRuns(`?schedule_id=${made.body.id}`)).body).to.deep.equal([]);
    const records = await history(made.body.id);
    expect(records).to.have.length(1);
    expect(records[0]).to.deep.include({
      scheduledFor: at,
      kind: 'cadence',
      outcome: 'fired',
      runId: fired[0]!.id,
    });
    const read = (await client.call<Schedule>(`/get-workflow-schedule?id=${made.body.id}`)).body;
    expect(read.lastFire).to.deep.include({ outcome: 'fired', runId: fired[0]!.id });
    expect(Date.parse(read.nextTimes[0]!)).to.equal(Date.parse(at) + 3600_000);
    // Another organization sees none of it.
    expect((await otherClient.call(`/get-workflow-schedule?id=${made.body.id}`)).status).to.equal(
      404,
    );
    expect(
      (await post('/trigger-workflow-schedule', { id: made.body.id }, otherClient)).status,
    ).to.equal(404);
    const theirs = (await otherClient.call<Schedule[]>('/get-workflow-schedules')).body;
    expect(theirs.map((s) => s.id)).not.to.include(made.body.id);
  });

  it('fires each time once with three workers, a worker SIGKILLed at the moment and Redis flushed', async () => {
    workers.push(await startWorker(env), await startWorker(env));
    const at = soon(4000);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const made = await create({ interval_seconds: 60, start_at: at, overlap: 'allow_all' });
      expect(made.status, JSON.stringify(made.body)).to.equal(200);
      ids.push(made.body.id);
    }
    // At the firing moment: one worker killed, and everything Redis held (the timers) gone.
    await sleep(Math.max(0, Date.parse(at) - Date.now() - 20));
    await workers.shift()!.stop('SIGKILL');
    await redis.flushAll();
    for (const id of ids) {
      const runs = await waitFor(
        `the run of ${id}`,
        async () => {
          const made = await runsOf(id);
          return made.length > 0 ? made : undefined;
        },
        30_000,
      );
      expect(
        runs.map((r) => r.for),
        id,
      ).to.deep.equal([at]);
    }
    // A second time, a minute later, would be made by now only if one was fired twice early.
    await sleep(1500);
    for (const id of ids) expect(await runsOf(id), id).to.have.length(1);
    const fires = (await testDb()('schedule_fires')
      .whereIn('schedule_id', ids)
      .select('schedule_id', 'outcome')) as Array<{ schedule_id: string; outcome: string }>;
    expect(fires).to.have.length(ids.length);
    expect(new Set(fires.map((f) => f.outcome))).to.deep.equal(new Set(['fired']));
    while (workers.length > 1) await workers.pop()!.stop();
  });

  it('after downtime, fires the missed times inside the catch-up window in order and skips the older ones', async () => {
    const made = await create({
      interval_seconds: 60,
      start_at: new Date(Date.now() - 3600_000).toISOString(),
      overlap: 'allow_all',
      catchup_window_seconds: 600,
    });
    expect(made.status).to.equal(200);
    // As if no worker had run for 30 minutes: the schedule's next time was half an hour ago.
    const next = new Date(Date.parse(made.body.nextTimes[0]!) - 30 * 60_000);
    await testDb()('workflow_schedules')
      .where({ id: made.body.id })
      .update({ next_fire_at: next, wake_at: next });
    const records = await waitFor('caught up', async () => {
      const h = await history(made.body.id);
      return h.some((r) => r.reason === 'catchup_window') && h.length >= 10 ? h : undefined;
    });
    const skip = records.find((r) => r.reason === 'catchup_window')!;
    expect(skip.scheduledFor).to.equal(next.toISOString());
    expect(skip.missed).to.be.within(19, 21);
    const fired = records.filter((r) => r.outcome === 'fired');
    expect(fired.length).to.be.within(9, 11);
    const runs = await runsOf(made.body.id);
    expect(runs.map((r) => r.for)).to.deep.equal(fired.map((r) => r.scheduledFor).sort());
    // Each missed time inside the window: at most ten minutes old, one run each.
    for (const r of runs) expect(Date.now() - Date.parse(r.for)).to.be.below(11 * 60_000);
  });

  it('skips, holds one, or allows every run while the previous one is open', async () => {
    const trigger = (id: string, overlap?: string) =>
      post<Fire>('/trigger-workflow-schedule', { id, ...(overlap ? { overlap } : {}) });
    const far = { cron: '0 3 1 1 *' };

    const skipping = (await create({ ...far, overlap: 'skip' })).body.id;
    const first = await trigger(skipping);
    expect(first.status).to.equal(200);
    expect(first.body).to.include({ kind: 'trigger', outcome: 'fired' });
    const second = (await trigger(skipping)).body;
    expect(second).to.include({ outcome: 'skipped', reason: 'overlap' });
    expect((await trigger(skipping, 'allow_all')).body.outcome).to.equal('fired');

    const buffering = (await create({ ...far, overlap: 'buffer_one' })).body.id;
    const running = (await trigger(buffering)).body;
    expect((await trigger(buffering)).body.outcome).to.equal('buffered');
    expect((await trigger(buffering)).body).to.include({ outcome: 'skipped', reason: 'overlap' });
    expect(await runsOf(buffering)).to.have.length(1);
    // The previous run ends: the held time fires, once.
    expect((await client.cancelRun({ workflow_run_id: running.runId })).status).to.equal(200);
    const held = await waitFor(
      'the held time fired',
      async () => {
        const runs = await runsOf(buffering);
        return runs.length === 2 ? runs : undefined;
      },
      15_000,
    );
    const records = await history(buffering);
    const heldRecord = records.find((r) => r.scheduledFor === held[1]!.for)!;
    expect(heldRecord).to.include({ outcome: 'fired', kind: 'trigger' });
    await sleep(2500);
    expect(await runsOf(buffering)).to.have.length(2);

    const allowing = (await create({ ...far, overlap: 'allow_all' })).body.id;
    await trigger(allowing);
    await trigger(allowing);
    expect(await runsOf(allowing)).to.have.length(2);
  });

  it('pauses with a note (nothing fires), resumes skipping what it passed, and records it all', async () => {
    const made = (
      await create({
        interval_seconds: 60,
        start_at: new Date(Date.now() - 3600_000).toISOString(),
      })
    ).body;
    const paused = await post('/pause-workflow-schedule', { id: made.id, note: 'holiday' });
    expect(paused.status).to.equal(200);
    expect(paused.body).to.include({ state: 'paused', note: 'holiday' });
    expect(paused.body.nextTimes).to.deep.equal([]);
    expect((await testDb()('workflow_schedules').where({ id: made.id }).first()).wake_at).to.equal(
      null,
    );
    // Paused through five of its times.
    const next = new Date(Date.parse(made.nextTimes[0]!) - 5 * 60_000);
    await testDb()('workflow_schedules').where({ id: made.id }).update({ next_fire_at: next });
    const resumed = await post('/resume-workflow-schedule', { id: made.id, note: 'back' });
    expect(resumed.body).to.include({ state: 'active', note: 'back' });
    expect(Date.parse(resumed.body.nextTimes[0]!)).to.be.above(Date.now());
    const records = await history(made.id);
    expect(records).to.have.length(1);
    expect(records[0]).to.deep.include({ outcome: 'skipped', reason: 'paused', missed: 5 });
    expect(await runsOf(made.id)).to.deep.equal([]);
    const audit = (
      await client.call<Array<{ type: string; targetId: string; data: Json }>>(
        `/get-audit-log?limit=100`,
      )
    ).body.filter((e) => e.targetId === made.id);
    expect(audit.map((e) => e.type)).to.deep.equal([
      'schedule.resumed',
      'schedule.paused',
      'schedule.created',
    ]);
    expect(audit[0]!.data).to.deep.equal({ note: 'back', skippedWhilePaused: 5 });
    expect((await post('/delete-workflow-schedule', { id: made.id })).body).to.deep.equal({
      id: made.id,
      deleted: true,
    });
    expect((await client.call(`/get-workflow-schedule?id=${made.id}`)).status).to.equal(404);
  });

  it('backfills the past times of a range once each, in order, within its limit', async () => {
    const made = (
      await create({
        interval_seconds: 60,
        start_at: new Date(Date.now() - 3 * 24 * 3600_000).toISOString(),
        overlap: 'allow_all',
      })
    ).body;
    const from = new Date(Date.now() - 30 * 60_000).toISOString();
    const to = new Date(Date.now() - 20 * 60_000).toISOString();
    const filled = await post<Json>('/backfill-workflow-schedule', { id: made.id, from, to });
    expect(filled.status, JSON.stringify(filled.body)).to.equal(200);
    expect(filled.body).to.deep.include({ times: 10, fired: 10, alreadyRecorded: 0 });
    const runs = await runsOf(made.id);
    expect(runs).to.have.length(10);
    expect(runs.map((r) => r.for)).to.deep.equal([...runs.map((r) => r.for)].sort());
    const again = await post<Json>('/backfill-workflow-schedule', { id: made.id, from, to });
    expect(again.body).to.deep.include({ times: 10, fired: 0, alreadyRecorded: 10 });
    expect(await runsOf(made.id)).to.have.length(10);
    const tooMany = await post<Schedule>('/backfill-workflow-schedule', {
      id: made.id,
      from: new Date(Date.now() - 2 * 24 * 3600_000).toISOString(),
      to: new Date().toISOString(),
    });
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body).to.include({ code: 'backfill_too_large', field: '/to' });
  });
});
