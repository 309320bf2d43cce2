// Moving runs onto another version of their template, against real API and worker processes:
// forward and back with a page renamed through page_map, the run.migrated event on the history,
// a webhook and the live stream; a dry run that changes nothing; every refusal; a move racing a
// completion and a worker's start (exactly one wins, the other is told); the step's clock
// counted again and acted on by the timers; a bulk move of a few thousand runs, dry run first,
// with its worker SIGKILLed midway (each run moved once, the counts exact); isolation.
import { expect } from 'chai';
import type { TemplateDefinition } from '../../src/templates/definition/definition-types.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { SseClient } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { bodyOf, WEBHOOK_TEST_ENV, WebhookReceiver } from '../support/webhook-receiver.js';

type Json = Record<string, unknown>;
interface Event {
  seq: number;
  type: string;
  data: Json;
  actor?: Json;
}
interface Detail {
  templateVersion: number;
  workflowName: string;
  status: string;
  currentStepName?: string;
  currentStepDueDate?: string;
  inputFields: Record<string, string>;
  steps: Array<Json & { name: string; status: string; startedAt?: string; dueDate?: string }>;
  history: Event[];
}
interface Migration {
  dryRun: boolean;
  migration: Json & { step?: string; dueDate?: string; droppedFields?: Json };
  run: Json & { run_json: Json };
}
interface Refusal {
  code: string;
  message: string;
  field?: string;
}
interface BulkView {
  id: string;
  action: string;
  status: string;
  matched: number;
  done: number;
  skipped: Record<string, number>;
  dryRun?: boolean;
  migration?: Json;
}

const V1: TemplateDefinition = {
  name: 'Onboarding',
  pages: [
    {
      name: 'Details',
      inputFields: [
        { inputId: 'name', fieldName: 'Name' },
        { inputId: 'legacy', fieldName: 'Legacy code' },
        { inputId: 'days', fieldName: 'Days' },
      ],
    },
    { name: 'Review', dueInHours: 24 * 7, inputFields: [{ inputId: 'ok', fieldName: 'OK' }] },
    { name: 'Done', inputFields: [] },
  ],
};

/** Version 2: a page added, Review renamed and due in seconds, legacy gone, days a number. */
const DUE_SECONDS = 3;
const V2 = {
  name: 'Onboarding (fixed)',
  pages: [
    {
      name: 'Details',
      inputFields: [
        { inputId: 'name', fieldName: 'Name' },
        { inputId: 'days', fieldName: 'Days', type: 'number', integer: true },
        { inputId: 'office', fieldName: 'Office', default: 'Berlin' },
      ],
    },
    { name: 'Equipment', inputFields: [] },
    {
      name: 'Manager review',
      dueInHours: DUE_SECONDS / 3600,
      inputFields: [{ inputId: 'ok', fieldName: 'OK' }],
    },
    { name: 'Done', inputFields: [] },
  ],
};

const RENAMED = { Review: 'Manager review' };

describe('moving runs to another template version', function () {
  this.timeout(120_000);
  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let receiver: WebhookReceiver;
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;
  let otherClient: Client;
  const env = { ...WEBHOOK_TEST_ENV, BULK_BATCH_SIZE: '25' };

  before(async () => {
    receiver = await WebhookReceiver.start();
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
    tenant = await createTenant(testDb(), V1);
    other = await createTenant(testDb(), V1);
    client = new Client(api.url, tenant.key);
    otherClient = new Client(api.url, other.key);
    const saved = await client.call<Json>('/update-workflow-template', {
      id: tenant.template.id,
      expected_version: 1,
      ...V2,
    });
    expect(saved.status, saved.text).to.equal(200);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  const detail = async (id: string, c = client) => (await c.getRun(id)).body as unknown as Detail;
  const migrate = (body: Json, headers: Record<string, string> = {}, c = client) =>
    c.call<Migration & Refusal>('/migrate-workflow-run', body, headers);

  async function settled(id: string, check: (d: Detail) => boolean, what: string, ms = 20000) {
    return waitFor(
      what,
      async () => {
        const d = await detail(id);
        return check(d) ? d : undefined;
      },
      ms,
    );
  }

  /** A run of version 1 at Review, its Details done. */
  async function atReview(
    values: Record<string, string> = { name: 'Ada', legacy: 'X1', days: '3' },
  ) {
    const created = await client.createRun({
      workflow_template_id: tenant.template.id,
      workflow_template_version: 1,
      input_fields: values,
      user_assignments: { Review: 'rita' },
    });
    expect(created.status, created.text).to.equal(200);
    const id = created.body.id as string;
    await settled(id, (d) => d.currentStepName === 'Details', 'started');
    const done = await client.completeStep({ workflow_run_id: id, step_name: 'Details' });
    expect(done.status, done.text).to.equal(202);
    await settled(id, (d) => d.currentStepName === 'Review', 'at Review');
    return id;
  }

  async function migratedEvents(ids: string[]): Promise<Map<string, number>> {
    const rows = (await testDb()('run_events')
      .whereIn('run_id', ids)
      .andWhere({ type: 'run.migrated' })
      .groupBy('run_id')
      .select('run_id')
      .count({ n: '*' })) as Array<{ run_id: string; n: number | string }>;
    return new Map(rows.map((r) => [r.run_id, Number(r.n)]));
  }

  it('moves a run forward and back: its steps, values and history, on a webhook and the stream', async () => {
    const hook = await client.call<{ id: string }>('/create-webhook-endpoint', {
      url: receiver.url('/moves'),
      events: ['run.migrated'],
    });
    expect(hook.status, hook.text).to.equal(200);
    const stream = await SseClient.open(
      `${api.url}/stream-run-events?type=run.migrated`,
      tenant.key,
    );
    try {
      const id = await atReview();
      const before = await detail(id);
      const forward = await migrate({ workflow_run_id: id, to_version: 2, page_map: RENAMED });
      expect(forward.status, forward.text).to.equal(200);
      expect(forward.body.dryRun).to.equal(false);
      const review = before.steps[1]!;
      const due = new Date(Date.parse(review.startedAt!) + DUE_SECONDS * 1000).toISOString();
      expect(forward.body.migration).to.deep.equal({
        fromVersion: 1,
        toVersion: 2,
        workflowName: 'Onboarding (fixed)',
        pageMap: { Details: 'Details', Review: 'Manager review', Done: 'Done' },
        step: 'Manager review',
        assignee: 'rita',
        dueDate: due,
        droppedFields: { legacy: 'X1' },
        defaultedFields: ['office'],
        skippedSteps: ['Equipment'],
      });
      const after = await detail(id);
      expect(forward.body.run).to.deep.include({ id, status: 'active' });
      expect((forward.body.run.run_json.template as Json).version).to.equal(2);
      expect(after.templateVersion).to.equal(2);
      expect(after.workflowName).to.equal('Onboarding (fixed)');
      expect(after.currentStepName).to.equal('Manager review');
      expect(after.steps.map((s) => [s.name, s.status])).to.deep.equal([
        ['Details', 'completed'],
        ['Equipment', 'skipped'],
        ['Manager review', 'active'],
        ['Done', 'waiting'],
      ]);
      // The step done keeps its times; values carried, dropped and defaulted.
      expect(after.steps[0]!.completedAt).to.equal(before.steps[0]!.completedAt);
      expect(after.inputFields).to.deep.equal({ name: 'Ada', days: '3', office: 'Berlin' });
      const event = after.history.at(-1)!;
      expect(event.type).to.equal('run.migrated');
      expect(event.data).to.deep.equal(forward.body.migration);
      expect(event.actor).to.deep.include({ type: 'api_key', id: tenant.keyId });
      expect(after.history.map((e) => e.seq)).to.deep.equal(
        before.history.map((e) => e.seq).concat(event.seq),
      );

      // The worker goes on in version 2: completing the renamed step reaches Done.
      const next = await client.completeStep({ workflow_run_id: id, step_name: 'Manager review' });
      expect(next.status, next.text).to.equal(202);
      await settled(id, (d) => d.currentStepName === 'Done', 'at Done');
      const back = await migrate({
        workflow_run_id: id,
        to_version: 1,
        page_map: { 'Manager review': 'Review' },
      });
      expect(back.status, back.text).to.equal(200);
      expect(back.body.migration).to.deep.include({
        fromVersion: 2,
        toVersion: 1,
        step: 'Done',
        unmappedPages: ['Equipment'],
        droppedFields: { office: 'Berlin' },
      });
      const old = await detail(id);
      expect(old.templateVersion).to.equal(1);
      expect(old.workflowName).to.equal('Onboarding');
      expect(old.steps.map((s) => [s.name, s.status])).to.deep.equal([
        ['Details', 'completed'],
        ['Review', 'completed'],
        ['Done', 'active'],
      ]);

      // Both moves reach the webhook and the stream, with the run's summary after each.
      const delivered = await waitFor('both moves delivered', () => {
        const bodies = receiver.accepted('/moves').map(bodyOf);
        return bodies.length >= 2 ? bodies : undefined;
      });
      expect(delivered.map((b) => [b.type, b.data.runId, b.data.run.workflowName])).to.deep.equal([
        ['run.migrated', id, 'Onboarding (fixed)'],
        ['run.migrated', id, 'Onboarding'],
      ]);
      expect(delivered[0]!.data.run.currentStepName).to.equal('Manager review');
      expect(delivered[0]!.data.toVersion).to.equal(2);
      await stream.until('both moves streamed', () => stream.events.length >= 2);
      expect(stream.events.map((m) => m.event)).to.deep.equal(['run.migrated', 'run.migrated']);
    } finally {
      stream.close();
    }
  });

  it('answers a dry run with what would happen, and changes nothing; a key replayed moves once', async () => {
    const id = await atReview();
    const row = () =>
      testDb()('workflow_runs')
        .where({ id })
        .first('template_version', 'event_seq', 'run_json', 'current_step_wake_at');
    const before = await row();
    const dry = await migrate({
      workflow_run_id: id,
      to_version: 2,
      page_map: RENAMED,
      dry_run: true,
    });
    expect(dry.status, dry.text).to.equal(200);
    expect(dry.body.dryRun).to.equal(true);
    expect(dry.body.migration).to.deep.include({ step: 'Manager review', toVersion: 2 });
    expect((dry.body.run.run_json.template as Json).version).to.equal(2);
    expect(await row()).to.deep.equal(before);
    expect((await migratedEvents([id])).get(id)).to.equal(undefined);

    const headers = { 'idempotency-key': `move-${id}` };
    const body = { workflow_run_id: id, to_version: 2, page_map: RENAMED };
    const first = await migrate(body, headers);
    const again = await migrate(body, headers);
    expect(first.status, first.text).to.equal(200);
    expect(again.status).to.equal(200);
    expect(again.text).to.equal(first.text);
    expect((await migratedEvents([id])).get(id)).to.equal(1);
  });

  it('refuses what cannot move, naming the page or field, and changes nothing', async () => {
    const id = await atReview();
    const refused = async (body: Json, status: number, code: string, field?: string) => {
      const reply = await migrate({ workflow_run_id: id, ...body });
      expect(reply.status, reply.text).to.equal(status);
      expect(reply.body.code).to.equal(code);
      if (field) expect(reply.body.field).to.equal(field);
      return reply.body;
    };
    const unmapped = await refused(
      { to_version: 2 },
      409,
      'migration_step_unmapped',
      '/page_map/Review',
    );
    expect(unmapped.message).to.contain("'Review'");
    await refused(
      { to_version: 2, page_map: { Nope: 'Done' } },
      400,
      'invalid_page_map',
      '/page_map/Nope',
    );
    await refused(
      { to_version: 2, page_map: { Review: 'Done' } },
      400,
      'invalid_page_map',
      '/page_map/Done',
    );
    await refused(
      { to_version: 9, page_map: RENAMED },
      400,
      'unknown_template_version',
      '/to_version',
    );
    await refused({ to_version: 1 }, 409, 'migration_same_version');
    await refused({ to_version: 2, page_map: { Review: 7 } }, 400, 'invalid_body');
    // Another organization's run is not found.
    const foreign = await migrate({ workflow_run_id: id, to_version: 2 }, {}, otherClient);
    expect(foreign.status).to.equal(404);
    expect((await migratedEvents([id])).size).to.equal(0);

    // A value version 2's field refuses: refused, or dropped when asked.
    const bad = await atReview({ name: 'Bo', days: 'three' });
    const incompatible = await migrate({ workflow_run_id: bad, to_version: 2, page_map: RENAMED });
    expect(incompatible.status, incompatible.text).to.equal(409);
    expect(incompatible.body).to.include({
      code: 'migration_incompatible_value',
      field: '/input_fields/days',
    });
    const dropped = await migrate({
      workflow_run_id: bad,
      to_version: 2,
      page_map: RENAMED,
      drop_incompatible: true,
    });
    expect(dropped.status, dropped.text).to.equal(200);
    expect(dropped.body.migration).to.deep.include({
      droppedFields: { days: 'three' },
      incompatibleFields: ['days'],
    });
    expect((await detail(bad)).inputFields).to.not.have.property('days');

    // An ended run does not move.
    const ended = await atReview();
    expect((await client.cancelRun({ workflow_run_id: ended })).status).to.equal(200);
    const late = await migrate({ workflow_run_id: ended, to_version: 2, page_map: RENAMED });
    expect(late.status).to.equal(409);
    expect(late.body.code).to.equal('run_not_migratable');

    // A completion waiting for a worker is not carried over: refused until it is applied.
    const waiting = await atReview();
    await worker!.stop();
    worker = undefined;
    expect(
      (await client.completeStep({ workflow_run_id: waiting, step_name: 'Review' })).status,
    ).to.equal(202);
    const pending = await migrate({ workflow_run_id: waiting, to_version: 2, page_map: RENAMED });
    expect(pending.status).to.equal(409);
    expect(pending.body.code).to.equal('completion_pending');
    worker = await startWorker(env);
    await settled(waiting, (d) => d.currentStepName === 'Done', 'completion applied');
    expect(
      (await migrate({ workflow_run_id: waiting, to_version: 2, page_map: RENAMED })).status,
    ).to.equal(200);
  });

  it('lets exactly one of a move and a completion racing it win, and tells the other', async () => {
    await worker!.stop();
    worker = undefined;
    worker = await startWorker(env);
    const ids = await Promise.all(Array.from({ length: 16 }, () => atReview()));
    // Completions then wait: the race is between the two requests alone.
    await worker.stop();
    worker = undefined;
    // Each pair is sent together, in either order, and a few with the other a moment later.
    const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const outcomes = await Promise.all(
      ids.map(async (id, i) => {
        const lag = [0, 0, 5, 15][i % 4]!;
        const moving = async () => {
          if (i % 2 === 1) await after(lag);
          return migrate({ workflow_run_id: id, to_version: 2, page_map: RENAMED });
        };
        const completing = async () => {
          if (i % 2 === 0) await after(lag);
          return client.completeStep({ workflow_run_id: id, step_name: 'Review' });
        };
        const [move, completion] = await Promise.all([moving(), completing()]);
        return { id, move, completion };
      }),
    );
    // Both orders happened: the race was a race.
    expect(outcomes.some((o) => o.move.status === 200)).to.equal(true);
    expect(outcomes.some((o) => o.completion.status === 202)).to.equal(true);
    worker = await startWorker(env);
    for (const { id, move, completion } of outcomes) {
      const moved = move.status === 200;
      const completed = completion.status === 202;
      expect(moved !== completed, `${id}: ${move.text} / ${completion.text}`).to.equal(true);
      if (moved) {
        expect(completion.status).to.equal(409);
        expect(['step_not_current', 'run_changed_concurrently']).to.include(completion.body.code);
        const d = await detail(id);
        expect(d.templateVersion).to.equal(2);
        expect(d.currentStepName).to.equal('Manager review');
      } else {
        expect(move.status).to.equal(409);
        expect(['completion_pending', 'run_changed_concurrently']).to.include(move.body.code);
        const d = await settled(id, (x) => x.currentStepName === 'Done', 'completion applied');
        expect(d.templateVersion).to.equal(1);
        expect(d.history.map((e) => e.type)).not.to.include('run.migrated');
      }
    }

    // A move racing the worker's start of new runs: moved before the start (which then starts
    // the run on version 2), or refused because the start came first; never both, never lost.
    const fresh = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const created = await client.createRun({
          workflow_template_id: tenant.template.id,
          workflow_template_version: 1,
          input_fields: {},
        });
        const id = created.body.id as string;
        return {
          id,
          move: await migrate({ workflow_run_id: id, to_version: 2, page_map: RENAMED }),
        };
      }),
    );
    for (const { id, move } of fresh) {
      expect([200, 409], move.text).to.include(move.status);
      const d = await settled(id, (x) => x.status === 'active', 'started');
      const types = d.history.map((e) => e.type);
      expect(
        types.filter((t) => t === 'run.started'),
        id,
      ).to.have.length(1);
      if (move.status === 200) {
        expect(d.templateVersion).to.equal(2);
        expect(types.filter((t) => t === 'run.migrated')).to.have.length(1);
      } else {
        expect(move.body.code).to.equal('run_changed_concurrently');
        expect(d.templateVersion).to.equal(1);
        expect(types).not.to.include('run.migrated');
      }
      expect(d.history.map((e) => e.seq)).to.deep.equal(d.history.map((_, i) => i + 1));
    }
  });

  it("counts the step's due time again from its start, and the timers act on it", async () => {
    const id = await atReview();
    const moved = await migrate({ workflow_run_id: id, to_version: 2, page_map: RENAMED });
    expect(moved.status, moved.text).to.equal(200);
    const dueDate = moved.body.migration.dueDate!;
    const started = (await detail(id)).steps[2]!.startedAt!;
    expect(Date.parse(dueDate) - Date.parse(started)).to.equal(DUE_SECONDS * 1000);
    // Version 1 gave it a week; version 2's due time comes within seconds, and the timer acts.
    const overdue = await settled(
      id,
      (d) => d.history.some((e) => e.type === 'step.overdue'),
      'step overdue at the new due time',
      DUE_SECONDS * 1000 + 15_000,
    );
    const event = overdue.history.find((e) => e.type === 'step.overdue')!;
    expect(event.data).to.deep.equal({ step: 'Manager review', dueDate });
  });

  it('moves a few thousand runs in bulk, dry run first, exactly once each though its worker is SIGKILLed', async function () {
    this.timeout(300_000);
    const bulkTenant = await createTenant(testDb(), V1);
    const bulkClient = new Client(api.url, bulkTenant.key);
    const v2 = await bulkClient.call<Json>('/update-workflow-template', {
      id: bulkTenant.template.id,
      expected_version: 1,
      ...V2,
    });
    expect(v2.status, v2.text).to.equal(200);
    await worker!.stop();
    worker = undefined;
    // Created at version 1 while no worker runs: pending, their starts carried over by the move.
    const total = 2000;
    const cancelled = 100;
    const ids: string[] = [];
    for (let i = 0; i < total; i += 50) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, () =>
          bulkClient.createRun({
            workflow_template_id: bulkTenant.template.id,
            workflow_template_version: 1,
            input_fields: { name: 'x' },
          }),
        ),
      );
      for (const r of replies) {
        expect(r.status, r.text).to.equal(200);
        ids.push(r.body.id as string);
      }
    }
    for (const id of ids.slice(0, cancelled)) {
      expect((await bulkClient.cancelRun({ workflow_run_id: id })).status).to.equal(200);
    }
    // Another organization's runs of its own template are not touched.
    const foreignReply = await otherClient.createRun({
      workflow_template_id: other.template.id,
      input_fields: {},
    });
    expect(foreignReply.status, foreignReply.text).to.equal(200);
    const foreign = foreignReply.body.id as string;

    const start = (body: Json) =>
      bulkClient.call<BulkView & Refusal>('/bulk-migrate-workflow-runs', body);
    const progress = (id: string) =>
      bulkClient.call<BulkView>(`/get-bulk-action?id=${encodeURIComponent(id)}`);
    const completed = (id: string) =>
      waitFor(
        'bulk migration to complete',
        async () => {
          const view = (await progress(id)).body;
          return view.status === 'completed' ? view : undefined;
        },
        180_000,
        50,
      );
    const plan = {
      filter: { template_id: bulkTenant.template.id },
      from_version: 1,
      to_version: 2,
      page_map: RENAMED,
    };
    // Refusals first: no filter of a template, a bad plan, another organization's template.
    const noTemplate = await start({ ...plan, filter: { status: 'pending' } });
    expect(noTemplate.status).to.equal(400);
    expect(noTemplate.body).to.include({ code: 'filter_required', field: '/filter/template_id' });
    const badMap = await start({ ...plan, page_map: { Review: 'Nowhere' } });
    expect(badMap.body).to.include({ code: 'invalid_page_map', field: '/page_map/Review' });
    const theirs = await start({ ...plan, filter: { template_id: other.template.id } });
    expect(theirs.status).to.equal(400);
    expect(theirs.body.code).to.equal('unknown_template');

    worker = await startWorker(env);
    const dry = await start({ ...plan, dry_run: true });
    expect(dry.status, dry.text).to.equal(202);
    expect(dry.body).to.deep.include({ action: 'migrate', dryRun: true });
    const dryView = await completed(dry.body.id);
    expect(dryView).to.deep.include({ matched: total, done: total - cancelled });
    expect(dryView.skipped).to.deep.equal({ run_not_migratable: cancelled });
    expect((await migratedEvents(ids)).size).to.equal(0);

    const real = await start(plan);
    expect(real.status, real.text).to.equal(202);
    expect(real.body.migration).to.deep.equal({ fromVersion: 1, toVersion: 2, pageMap: RENAMED });
    await waitFor(
      'some batches done',
      async () => ((await progress(real.body.id)).body.done >= 200 ? true : undefined),
      60_000,
      10,
    );
    await worker.stop('SIGKILL');
    worker = undefined;
    const atKill = (await progress(real.body.id)).body;
    expect(atKill.status, 'killed before the end').to.equal('running');
    expect(atKill.done).to.be.below(total - cancelled);
    worker = await startWorker(env);
    const view = await completed(real.body.id);
    expect(view).to.deep.include({ matched: total, done: total - cancelled });
    expect(view.skipped).to.deep.equal({ run_not_migratable: cancelled });
    const moves = await migratedEvents(ids);
    expect(moves.size).to.equal(total - cancelled);
    for (const id of ids.slice(cancelled)) expect(moves.get(id), id).to.equal(1);
    const versions = (await testDb()('workflow_runs')
      .whereIn('id', ids)
      .groupBy('template_version', 'status')
      .select('template_version', 'status')
      .count({ n: '*' })) as Array<{ template_version: number; status: string; n: number }>;
    const byVersion = new Map(
      versions.map((r) => [`${r.template_version}:${r.status}`, Number(r.n)]),
    );
    expect(byVersion.get('1:cancelled')).to.equal(cancelled);
    expect([...byVersion].filter(([k]) => k.startsWith('1:') && k !== '1:cancelled')).to.deep.equal(
      [],
    );
    // Every moved run started on version 2 (its start carried over, or made before the move).
    await waitFor('every moved run started', async () => {
      const [row] = (await testDb()('workflow_runs')
        .whereIn('id', ids.slice(cancelled))
        .andWhere({ status: 'pending' })
        .count({ n: '*' })) as Array<{ n: number }>;
      return Number(row!.n) === 0 ? true : undefined;
    });
    expect((await migratedEvents([foreign])).size).to.equal(0);
    expect((await detail(foreign, otherClient)).templateVersion).to.equal(1);
    // The run list filters by version, as the bulk action did.
    const listed = await bulkClient.listRuns(
      `?template_id=${bulkTenant.template.id}&template_version=1&limit=1000`,
    );
    expect(listed.body).to.have.length(cancelled);
  });
});
