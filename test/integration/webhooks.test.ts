// Webhooks end to end: real API and worker processes, a real HTTP receiver, signatures checked
// by the standardwebhooks package. Subscribing, every event type delivered once per subscribed
// endpoint, order per run while an earlier event is retried, a receiver down then back, 410,
// secret rotation, the delivery log and redelivery, isolation between organizations.
import { expect } from 'chai';
import type { TemplateDefinition } from '../../src/templates/definition/definition-types.js';
import { RUN_EVENT_TYPES } from '../../src/runs/run-events.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { sleep, waitFor } from '../support/wait.js';
import {
  bodyOf,
  verifySignature,
  WEBHOOK_TEST_ENV,
  WebhookReceiver,
} from '../support/webhook-receiver.js';

/** 0.0005 h = 1.8 s: a due date a test can wait for. */
const DUE_IN_HOURS = 0.0005;

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret?: string;
  disabledReason?: string;
  disabledAt?: string;
  failingSince?: string;
  previousSecretExpiresAt?: string;
}

interface Delivery {
  id: string;
  runId: string;
  webhookId: string;
  eventType: string;
  eventSeq: number;
  status: string;
  round: number;
  attempts: Array<{
    statusCode?: number;
    latencyMs: number;
    responseBody?: string;
    error?: string;
  }>;
}

describe('webhooks @cluster', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let receiver: WebhookReceiver;
  let tenant: Tenant;
  let client: Client;

  const startWorkerProcess = async () => (worker = await startWorker(WEBHOOK_TEST_ENV));

  before(async () => {
    receiver = await WebhookReceiver.start();
    [api] = await Promise.all([startApi(WEBHOOK_TEST_ENV), startWorkerProcess()]);
    // No due dates: a run's events are created and started until a test moves it on.
    tenant = await createTenant(testDb(), {
      name: 'Webhooked',
      pages: [
        { name: 'Quick', inputFields: [] },
        { name: 'Second', inputFields: [] },
      ],
    });
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  async function subscribe(path: string, extra: Record<string, unknown> = {}, as = client) {
    const res = await as.call<Endpoint>('/create-webhook-endpoint', {
      url: receiver.url(path),
      ...extra,
    });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  async function newRunOf(as: Client, t: Tenant): Promise<string> {
    const res = await as.createRun({ workflow_template_id: t.template.id, input_fields: {} });
    expect(res.status).to.equal(200);
    return String(res.body.id);
  }

  const newRun = (as = client, t = tenant) => newRunOf(as, t);

  async function runStatus(id: string): Promise<string> {
    const row = await testDb()('workflow_runs').where({ id }).first('status');
    return String(row?.status);
  }

  /** The run's event types, in history order. */
  async function historyTypes(id: string): Promise<string[]> {
    const rows = await testDb()('run_events').where({ run_id: id }).orderBy('seq');
    return rows.map((r: { type: string }) => r.type);
  }

  it('subscribes: a Standard Webhooks secret shown once, every type by default, unknown types refused', async () => {
    const endpoint = await subscribe('/subscribe', { description: 'billing' });
    expect(endpoint.secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(endpoint.secret!.slice(6), 'base64')).to.have.length(32);
    expect(endpoint.events).to.deep.equal([...RUN_EVENT_TYPES]);
    expect(endpoint.enabled).to.equal(true);

    const list = await client.call<Endpoint[]>('/get-webhook-endpoints');
    expect(list.status).to.equal(200);
    const listed = list.body.find((e) => e.id === endpoint.id)!;
    expect(listed).to.include({ url: endpoint.url, enabled: true });
    expect(listed).not.to.have.property('secret');
    expect(list.text).not.to.include(endpoint.secret!.slice(6));

    for (const bad of [
      { url: receiver.url('/x'), events: ['run.exploded'] },
      { url: receiver.url('/x'), events: [] },
      { url: 'not a url' },
      { url: receiver.url('/x'), secret: 'whsec_mine' },
      {},
    ]) {
      const res = await client.call('/create-webhook-endpoint', bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
    }
    const deleted = await client.call('/delete-webhook-endpoint', { id: endpoint.id });
    expect(deleted.status).to.equal(200);
    expect((await client.call('/delete-webhook-endpoint', { id: endpoint.id })).status).to.equal(
      404,
    );
  });

  it('delivers every event type once to each endpoint subscribed to it, signed', async () => {
    // A template whose first step falls due at once, so the run is overdue on its way, and
    // whose last page a rule hides when the first step says so (step.skipped).
    const dueDefinition: TemplateDefinition = {
      name: 'Due soon',
      pages: [
        {
          name: 'Quick',
          dueInHours: DUE_IN_HOURS,
          inputFields: [{ inputId: 'short', fieldName: 'Short', type: 'checkbox' }],
        },
        { name: 'Second', inputFields: [] },
        { name: 'Extra', inputFields: [] },
      ],
      rules: [
        {
          name: 'short run',
          when: { all: [{ field: 'short', op: 'equals', value: 'true' }] },
          then: [{ action: 'hide_page', page: 'Extra' }],
        },
      ],
    };
    const due = await createTenant(testDb(), dueDefinition);
    const dueClient = new Client(api.url, due.key);
    const all = await subscribe('/all', {}, dueClient);
    const done = await subscribe('/done', { events: ['run.completed'] }, dueClient);
    const newRun = () => newRunOf(dueClient, due);
    const client = dueClient;

    // A run through every step (overdue on the way), a cancelled one, a failed and retried one.
    const full = await newRun();
    await waitFor('run started', async () => (await runStatus(full)) === 'active');
    await waitFor(
      'step overdue',
      async () => (await historyTypes(full)).includes('step.overdue'),
      10000,
    );
    expect(
      (
        await client.completeStep({
          workflow_run_id: full,
          step_name: 'Quick',
          input_fields: { short: 'true' },
        })
      ).status,
    ).to.equal(202);
    await waitFor('second step', async () => (await historyTypes(full)).length === 4);
    expect(
      (await client.completeStep({ workflow_run_id: full, step_name: 'Second' })).status,
    ).to.equal(202);
    await waitFor('run completed', async () => (await runStatus(full)) === 'completed');

    // Moved onto a second version (the same pages) before it is cancelled: run.migrated.
    const cancelled = await newRun();
    const saved = await client.call('/update-workflow-template', {
      id: due.template.id,
      expected_version: 1,
      ...dueDefinition,
    });
    expect(saved.status, saved.text).to.equal(200);
    await waitFor('run to move', async () => {
      // Refused while the worker starts it or the clock marks it: asked again.
      const moved = await client.call('/migrate-workflow-run', {
        workflow_run_id: cancelled,
        to_version: 2,
      });
      return moved.status === 200;
    });
    expect(
      (await client.cancelRun({ workflow_run_id: cancelled, reason: 'no longer needed' })).status,
    ).to.equal(200);

    await worker!.stop();
    const failed = await newRun();
    const row = await testDb()('workflow_runs').where({ id: failed }).first('run_json');
    const broken = JSON.parse(String(row.run_json));
    broken.pending.seq = 9; // cannot be applied: a worker marks the run failed
    await testDb()('workflow_runs')
      .where({ id: failed })
      .update({ run_json: JSON.stringify(broken) });
    await startWorkerProcess();
    await waitFor('run failed', async () => (await runStatus(failed)) === 'failed', 20000);
    broken.pending.seq = 1;
    await testDb()('workflow_runs')
      .where({ id: failed })
      .update({ run_json: JSON.stringify(broken) });
    expect((await client.retryRun({ workflow_run_id: failed })).status).to.equal(202);
    await waitFor('retried run started', async () => (await runStatus(failed)) === 'active');
    // Its first step falls due too: wait for that, so the history below is complete.
    await waitFor(
      'retried run overdue',
      async () => (await historyTypes(failed)).includes('step.overdue'),
      10000,
    );

    // People: rejected back, approved, claimed, escalated (overdue at once: escalation 0 h).
    const peopleTemplate = (
      await client.call<{ id: string }>('/create-workflow-template', {
        name: 'People',
        pages: [
          { name: 'Ask', inputFields: [] },
          {
            name: 'Approve',
            kind: 'approval',
            onReject: { action: 'reopen', page: 'Ask' },
            inputFields: [],
          },
          {
            name: 'Pay',
            dueInHours: DUE_IN_HOURS,
            candidateGroups: ['finance'],
            escalations: [{ overdueByHours: 0, assignTo: 'boss' }],
            inputFields: [],
          },
        ],
      })
    ).body.id;
    const people = (
      await client.createRun({ workflow_template_id: peopleTemplate, input_fields: {} })
    ).body.id as string;
    const at = async (step: string) =>
      waitFor(`people at ${step}`, async () => {
        const run = (await client.getRun(people)).body;
        return run.currentStepName === step && run.status === 'active';
      });
    await at('Ask');
    await client.completeStep({ workflow_run_id: people, step_name: 'Ask' });
    await at('Approve');
    await client.completeStep({ workflow_run_id: people, decision: 'rejected', comment: 'again' });
    await at('Ask');
    await client.completeStep({ workflow_run_id: people, step_name: 'Ask' });
    await at('Approve');
    await client.completeStep({ workflow_run_id: people, decision: 'approved' });
    await at('Pay');
    await client.call('/claim-workflow-step', {
      workflow_run_id: people,
      step_name: 'Pay',
      user_id: 'fay',
    });
    await waitFor(
      'people escalated',
      async () => (await historyTypes(people)).includes('step.escalated'),
      10000,
    );
    await client.completeStep({ workflow_run_id: people, step_name: 'Pay' });
    await waitFor('people completed', async () => (await runStatus(people)) === 'completed');

    const runs = [full, cancelled, failed, people];
    const expected = new Map<string, string[]>();
    for (const id of runs) expected.set(id, await historyTypes(id));
    const total = [...expected.values()].reduce((n, types) => n + types.length, 0);
    await waitFor('every event at /all', () => receiver.accepted('/all').length >= total, 20000);

    const got = receiver.at('/all');
    expect(got, 'each event sent once (the receiver never failed)').to.have.length(total);
    const types = new Set<string>();
    for (const request of got) {
      const body = verifySignature(all.secret!, request);
      types.add(body.type);
      expect(body.data.organizationId).to.equal(due.orgId);
      expect(request.headers['webhook-id']).to.match(/^evt_\d+$/);
    }
    // run.deleted: a deletion's delivery is integration/retention's.
    expect([...types].sort()).to.deep.equal(
      RUN_EVENT_TYPES.filter((t) => t !== 'run.deleted').sort(),
    );
    for (const id of runs) {
      const ofRun = got.map(bodyOf).filter((b) => b.data.runId === id);
      expect(
        ofRun.map((b) => b.type),
        id,
      ).to.deep.equal(expected.get(id));
      expect(ofRun.map((b) => b.data.seq)).to.deep.equal(ofRun.map((_, i) => i + 1));
    }

    // The summary a delivery carries is the run's as it was right after the change: the last
    // one of each run is the run as the list shows it now.
    const listed = (await client.listRuns()).body;
    for (const id of runs) {
      const last = got
        .map(bodyOf)
        .filter((b) => b.data.runId === id)
        .at(-1)!;
      expect(last.data.run, id).to.deep.equal(listed.find((r) => r.id === id));
    }

    // Two runs completed: the full one and the people one.
    await waitFor('the completions at /done', () => receiver.at('/done').length >= 2);
    const onlyDone = receiver.at('/done');
    expect(onlyDone).to.have.length(2);
    expect(verifySignature(done.secret!, onlyDone[0]!)).to.include({ type: 'run.completed' });
    expect(
      () => verifySignature(all.secret!, onlyDone[0]!),
      'another endpoint’s secret',
    ).to.throw();
    for (const e of [all, done]) await client.call('/delete-webhook-endpoint', { id: e.id });
  });

  it('keeps a run’s events in order while an earlier one is retried; other runs do not wait', async () => {
    const slow = await subscribe('/ordered');
    let held: string | undefined;
    let refusing = true;
    // The run.created of the first run to arrive is refused until the test says so.
    receiver.decide = (request) => {
      if (request.path !== '/ordered') return undefined;
      const body = bodyOf(request);
      held ??= body.data.runId;
      if (body.data.runId === held && body.type === 'run.created' && refusing) {
        return { kind: 'fail', status: 503 };
      }
      return undefined;
    };
    const ofHeld = () => receiver.at('/ordered').filter((r) => bodyOf(r).data.runId === held);
    try {
      const runs = [await newRun(), await newRun()];
      await waitFor('a first attempt', () => held !== undefined);
      const other = runs.find((r) => r !== held)!;
      await waitFor('the other run delivered', () =>
        receiver
          .accepted('/ordered')
          .some((r) => bodyOf(r).data.runId === other && bodyOf(r).type === 'run.started'),
      );
      // Later events of the held run are committed and dispatched while its first is refused.
      await waitFor('the held run started', async () => (await runStatus(held!)) === 'active');
      expect((await client.completeStep({ workflow_run_id: held })).status).to.equal(202);
      await waitFor('its step.completed dispatched', async () =>
        Boolean(
          await testDb()('webhook_deliveries')
            .where({ run_id: held, endpoint_id: slow.id, event_type: 'step.completed' })
            .first(),
        ),
      );
      await sleep(600); // time for a later event to go out, were it let
      expect(
        ofHeld().map((r) => bodyOf(r).type),
        'nothing of the held run goes ahead of its first event',
      ).to.satisfy(
        (types: string[]) => types.length >= 1 && types.every((t) => t === 'run.created'),
      );
      const refusals = ofHeld().length;

      refusing = false;
      await waitFor(
        'the held run delivered',
        () =>
          receiver.accepted('/ordered').filter((r) => bodyOf(r).data.runId === held).length === 3,
        15000,
      );
      expect(ofHeld().map((r) => bodyOf(r).type)).to.deep.equal([
        ...Array<string>(refusals + 1).fill('run.created'),
        'run.started',
        'step.completed',
      ]);
      expect(
        new Set(
          ofHeld()
            .slice(0, refusals + 1)
            .map((r) => r.headers['webhook-id']),
        ).size,
      ).to.equal(1);
      const log = await client.call<Delivery[]>(
        `/get-webhook-deliveries?endpoint_id=${slow.id}&run_id=${held}`,
      );
      const created = log.body.find((d) => d.eventType === 'run.created')!;
      expect(created.status).to.equal('delivered');
      expect(created.attempts.map((a) => a.statusCode)).to.deep.equal([
        ...Array<number>(refusals).fill(503),
        200,
      ]);
    } finally {
      receiver.decide = undefined;
      await client.call('/delete-webhook-endpoint', { id: slow.id });
    }
  });

  it('delivers everything once the receiver is back from errors and timeouts, in order per run', async () => {
    const flaky = await subscribe('/flaky');
    receiver.set('/flaky', { kind: 'fail', status: 500 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await newRun());
    await waitFor('failed attempts', () => receiver.at('/flaky').length >= 10);
    receiver.set('/flaky', { kind: 'hang' });
    const before = receiver.at('/flaky').length;
    await waitFor('timed-out attempts', () => receiver.at('/flaky').length >= before + 3, 15000);
    receiver.set('/flaky', { kind: 'ok' });
    await waitFor(
      'every event delivered',
      () => receiver.accepted('/flaky').length === ids.length * 2,
      30000,
    );
    for (const id of ids) {
      const ofRun = receiver
        .accepted('/flaky')
        .map(bodyOf)
        .filter((b) => b.data.runId === id);
      expect(ofRun.map((b) => b.type)).to.deep.equal(['run.created', 'run.started']);
    }
    const log = await client.call<Delivery[]>(
      `/get-webhook-deliveries?endpoint_id=${flaky.id}&status=delivered`,
    );
    expect(log.body).to.have.length(ids.length * 2);
    const errors = log.body.flatMap((d) => d.attempts.map((a) => a.error ?? ''));
    expect(errors.some((e) => /no answer within 800 ms/.test(e))).to.equal(true);
    expect(errors.some((e) => /answered 500/.test(e))).to.equal(true);
    const endpoints = await client.call<Endpoint[]>('/get-webhook-endpoints');
    expect(endpoints.body.find((e) => e.id === flaky.id)).not.to.have.property('failingSince');
    await client.call('/delete-webhook-endpoint', { id: flaky.id });
  });

  it('disables an endpoint whose receiver answers 410 Gone, and sends it nothing more', async () => {
    const gone = await subscribe('/gone');
    receiver.set('/gone', { kind: 'fail', status: 410 });
    await newRun();
    await waitFor('endpoint disabled', async () => {
      const list = await client.call<Endpoint[]>('/get-webhook-endpoints');
      return list.body.find((e) => e.id === gone.id)?.enabled === false;
    });
    const listed = (await client.call<Endpoint[]>('/get-webhook-endpoints')).body.find(
      (e) => e.id === gone.id,
    )!;
    expect(listed.disabledReason).to.match(/410/);
    const sent = receiver.at('/gone').length;
    expect(sent).to.equal(1);
    await newRun();
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.at('/gone')).to.have.length(sent);
    const log = await client.call<Delivery[]>(`/get-webhook-deliveries?endpoint_id=${gone.id}`);
    expect(log.body.every((d) => d.status === 'failed')).to.equal(true);
    const redeliver = await client.call('/redeliver-webhook', { delivery_id: log.body[0]!.id });
    expect(redeliver.status).to.equal(409);
  });

  it('signs with the old and the new secret for a day after a rotation', async () => {
    const endpoint = await subscribe('/rotate');
    const rotated = await client.call<Endpoint>('/rotate-webhook-secret', { id: endpoint.id });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret)
      .to.match(/^whsec_/)
      .and.not.equal(endpoint.secret);
    const overlap = Date.parse(rotated.body.previousSecretExpiresAt!) - Date.now();
    expect(overlap).to.be.within(23.9 * 3600_000, 24 * 3600_000);
    await newRun();
    await waitFor('deliveries after the rotation', () => receiver.accepted('/rotate').length >= 2);
    for (const request of receiver.accepted('/rotate')) {
      expect(String(request.headers['webhook-signature']).split(' ')).to.have.length(2);
      verifySignature(endpoint.secret!, request);
      verifySignature(rotated.body.secret!, request);
    }
    expect((await client.call('/rotate-webhook-secret', { id: 'f'.repeat(36) })).status).to.equal(
      404,
    );
    await client.call('/delete-webhook-endpoint', { id: endpoint.id });
  });

  it('keeps a delivery log with each attempt, pages it, and redelivers on request', async () => {
    const endpoint = await subscribe('/log');
    receiver.set('/log', { kind: 'ok', status: 202, body: 'x'.repeat(5000) });
    const id = await newRun();
    await waitFor('two deliveries', () => receiver.accepted('/log').length === 2);

    const first = await client.call<Delivery[]>(
      `/get-webhook-deliveries?endpoint_id=${endpoint.id}&limit=1`,
    );
    expect(first.status).to.equal(200);
    expect(first.body).to.have.length(1);
    const next = first.headers.get('link')?.match(/<([^>]+)>/)?.[1];
    expect(next)
      .to.match(/cursor=/)
      .and.match(/endpoint_id=/);
    const second = await client.call<Delivery[]>(
      next!.replace(/^.*(\/get-webhook-deliveries)/, '$1'),
    );
    expect(second.body).to.have.length(1);
    const [started, created] = [first.body[0]!, second.body[0]!];
    expect([created.eventType, started.eventType]).to.deep.equal(['run.created', 'run.started']);
    expect(created).to.include({ runId: id, status: 'delivered', round: 1 });
    const attempt = created.attempts[0]!;
    expect(attempt.statusCode).to.equal(202);
    expect(attempt.latencyMs).to.be.a('number');
    expect(attempt.responseBody).to.equal('x'.repeat(1024));

    const again = await client.call<Delivery>('/redeliver-webhook', { delivery_id: created.id });
    expect(again.status).to.equal(202);
    expect(again.body).to.include({ status: 'pending', round: 2 });
    await waitFor('redelivered', () => receiver.at('/log').length === 3);
    expect(receiver.at('/log')[2]!.headers['webhook-id']).to.equal(created.webhookId);
    const logged = await waitFor('the second round logged', async () => {
      const log = await client.call<Delivery[]>(
        `/get-webhook-deliveries?run_id=${id}&status=delivered`,
      );
      const d = log.body.find((x) => x.id === created.id);
      return d?.attempts.length === 2 && d;
    });
    expect(logged).to.include({ status: 'delivered', round: 2 });
    expect((await client.call('/redeliver-webhook', { delivery_id: 'nope' })).status).to.equal(404);
    for (const bad of ['status=lost', 'endpoint_id=', 'cursor=%%']) {
      expect((await client.call(`/get-webhook-deliveries?${bad}`)).status, bad).to.equal(400);
    }
    await client.call('/delete-webhook-endpoint', { id: endpoint.id });
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const endpoint = await subscribe('/moved');
    receiver.set('/moved', { kind: 'redirect', location: receiver.url('/target') });
    await newRun();
    await waitFor('attempts', () => receiver.at('/moved').length >= 2);
    expect(receiver.at('/target')).to.have.length(0);
    const log = await client.call<Delivery[]>(`/get-webhook-deliveries?endpoint_id=${endpoint.id}`);
    expect(log.body.flatMap((d) => d.attempts.map((a) => a.statusCode))).to.include(302);
    await client.call('/delete-webhook-endpoint', { id: endpoint.id });
  });

  it('keeps organizations apart: endpoints, deliveries and events', async () => {
    const other = await createTenant(testDb());
    const otherClient = new Client(api.url, other.key);
    const mine = await subscribe('/mine');
    const theirs = await subscribe('/theirs', {}, otherClient);
    const myRun = await newRun();
    const theirRun = await newRun(otherClient, other);
    await waitFor(
      'both delivered',
      () => receiver.accepted('/mine').length >= 2 && receiver.accepted('/theirs').length >= 2,
    );
    expect(receiver.at('/mine').map((r) => bodyOf(r).data.runId)).to.satisfy((ids: string[]) =>
      ids.every((i) => i === myRun),
    );
    expect(receiver.at('/theirs').map((r) => bodyOf(r).data.runId)).to.satisfy((ids: string[]) =>
      ids.every((i) => i === theirRun),
    );

    expect(
      (await otherClient.call<Endpoint[]>('/get-webhook-endpoints')).body.map((e) => e.id),
    ).to.deep.equal([theirs.id]);
    expect((await otherClient.call('/delete-webhook-endpoint', { id: mine.id })).status).to.equal(
      404,
    );
    expect((await otherClient.call('/rotate-webhook-secret', { id: mine.id })).status).to.equal(
      404,
    );
    const foreignLog = await otherClient.call<Delivery[]>(
      `/get-webhook-deliveries?endpoint_id=${mine.id}`,
    );
    expect(foreignLog.body).to.deep.equal([]);
    const myLog = await client.call<Delivery[]>('/get-webhook-deliveries');
    expect(myLog.body.some((d) => d.runId === theirRun)).to.equal(false);
    const mineDelivery = myLog.body.find((d) => d.runId === myRun)!;
    expect(
      (await otherClient.call('/redeliver-webhook', { delivery_id: mineDelivery.id })).status,
    ).to.equal(404);
    for (const e of [mine]) await client.call('/delete-webhook-endpoint', { id: e.id });
    await otherClient.call('/delete-webhook-endpoint', { id: theirs.id });
  });

  it('refuses more endpoints than an organization may have', async () => {
    const crowded = await createTenant(testDb());
    const c = new Client(api.url, crowded.key);
    const made = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        c.call('/create-webhook-endpoint', { url: receiver.url(`/n${i}`) }),
      ),
    );
    expect(made.filter((r) => r.status === 200)).to.have.length(20);
    expect(made.filter((r) => r.status === 409)).to.have.length(5);
  });
});

describe('webhooks: an endpoint that keeps failing @cluster', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.start();
    // Disabled after 1.5 s of nothing but failures, instead of 5 days.
    const env = { ...WEBHOOK_TEST_ENV, WEBHOOK_DISABLE_AFTER_MS: '1500' };
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  it('is disabled once every attempt has failed for WEBHOOK_DISABLE_AFTER_MS, saying why', async () => {
    const tenant = await createTenant(testDb());
    const client = new Client(api.url, tenant.key);
    const endpoint = (
      await client.call<Endpoint>('/create-webhook-endpoint', { url: receiver.url('/down') })
    ).body;
    receiver.set('/down', { kind: 'fail', status: 500 });
    await client.createRun({ workflow_template_id: tenant.template.id, input_fields: {} });
    const failing = await waitFor('failing since', async () => {
      const e = (await client.call<Endpoint[]>('/get-webhook-endpoints')).body[0]!;
      return e.failingSince !== undefined && e;
    });
    expect(failing.enabled).to.equal(true);
    const disabled = await waitFor(
      'endpoint disabled',
      async () => {
        const e = (await client.call<Endpoint[]>('/get-webhook-endpoints')).body[0]!;
        return !e.enabled && e;
      },
      15000,
    );
    expect(disabled.disabledReason).to.match(/^every attempt failed since /);
    expect(Date.parse(disabled.disabledAt!) - Date.parse(failing.failingSince!)).to.be.at.least(
      1500,
    );
    await worker.waitForLine(/"msg":"webhook endpoint disabled"/, 5000);
    const log = await client.call<Delivery[]>(`/get-webhook-deliveries?endpoint_id=${endpoint.id}`);
    expect(log.body.every((d) => d.status === 'failed')).to.equal(true);
  });
});

describe('webhooks: events the API commits go out at once @cluster', function () {
  this.timeout(60000);

  // A pass a minute (the longest WEBHOOK_DISPATCH_INTERVAL_MS allowed): only a wake-up can
  // dispatch an event within the test.
  const env = { ...WEBHOOK_TEST_ENV, WEBHOOK_DISPATCH_INTERVAL_MS: '60000' };
  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.start();
    api = await startApi(env);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  it('delivers a cancel made through the API without waiting for the next dispatch pass', async () => {
    const tenant = await createTenant(testDb(), {
      name: 'Cancelled at once',
      pages: [{ name: 'Only', inputFields: [] }],
    });
    const client = new Client(api.url, tenant.key);
    const made = await client.call<Endpoint>('/create-webhook-endpoint', {
      url: receiver.url('/cancels'),
      events: ['run.cancelled'],
    });
    expect(made.status, made.text).to.equal(200);
    // Started after the endpoint exists, so the worker's first pass (at its start) knows of it.
    worker = await startWorker(env);
    const created = await client.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    expect(created.status).to.equal(200);
    const id = String(created.body.id);
    // The worker's start of the run is its own commit, which it dispatches at once itself: wait
    // for that pass to be over, so that the cancel's event is left for a pass of its own.
    await waitFor('run started and its events dispatched', async () => {
      const row = await testDb()('workflow_runs').where({ id }).first('status');
      const owed = await testDb()('run_events')
        .where({ run_id: id, dispatched: 0 })
        .count({ n: '*' });
      return row?.status === 'active' && Number(owed[0]?.n) === 0;
    });

    // The cancel is the API's commit: only its signal through Redis wakes the dispatcher.
    const cancelled = await client.cancelRun({ workflow_run_id: id, reason: 'changed plans' });
    expect(cancelled.status, cancelled.text).to.equal(200);
    const [request] = await waitFor(
      'run.cancelled delivered',
      async () => {
        const got = receiver.at('/cancels');
        return got.length > 0 && got;
      },
      15000,
    );
    const body = verifySignature(made.body.secret!, request!);
    expect(body.type).to.equal('run.cancelled');
    expect(body.data.runId).to.equal(id);
  });
});
