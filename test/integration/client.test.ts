// The typed client (clients/typescript) against the real service: every operation, each answer
// checked against the API document as it arrives; a POST whose answer is lost on the way back,
// retried with its Idempotency-Key; pages walked while runs are being created; a live stream
// followed across a restart of its API process; and the webhook helper on real deliveries.
import { expect } from 'chai';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import {
  OPERATIONS,
  verifyWebhook,
  WebhookVerificationError,
  WorkflowRunClient,
  WorkflowRunError,
  type RunEvent,
} from 'workflow-run-client';
import { assertDescribed } from '../support/api-document.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from '../support/webhook-receiver.js';

const PAGES = [
  {
    name: 'Details',
    inputFields: [{ inputId: 'full_name', fieldName: 'Full name', required: true }],
  },
  { name: 'Sign-off', inputFields: [{ inputId: 'ok', fieldName: 'OK' }] },
];

/** A fetch that checks every JSON answer against the API document and notes what was called. */
function checkedFetch(api: ApiProcess, called: Set<string>, problems: string[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? 'GET';
    const path = url.pathname.slice(api.basePath.length);
    called.add(`${method} ${path}`);
    if ((res.headers.get('content-type') ?? '').includes('application/json')) {
      const body: unknown = await res.clone().json();
      await assertDescribed(api.url, method, path, res.status, body).catch((error: unknown) =>
        problems.push(String(error)),
      );
    }
    return res;
  };
}

/** Starts reading a stream and resolves once the service has placed it (its opening message). */
async function follow(
  client: WorkflowRunClient,
  query: { run_id?: string; type?: string },
  signal: AbortSignal,
): Promise<{ events: RunEvent[]; done: Promise<void> }> {
  const events: RunEvent[] = [];
  let placed!: () => void;
  const ready = new Promise<void>((resolve) => (placed = resolve));
  const done = (async () => {
    const stream = client.streamRunEvents(query, {
      signal,
      onConnectionChange: (connected) => connected && placed(),
    });
    for await (const event of stream) events.push(event);
  })();
  await ready;
  return { events, done };
}

describe('the typed client, against the service', function () {
  this.timeout(90000);
  let api: ApiProcess;
  let worker: ServiceProcess;
  let receiver: WebhookReceiver;
  let tenant: Tenant;

  before(async () => {
    receiver = await WebhookReceiver.start();
    [api, worker] = await Promise.all([
      startApi({ BASE_PATH: '/api/v1', ...WEBHOOK_TEST_ENV }),
      startWorker(WEBHOOK_TEST_ENV),
    ]);
    tenant = await createTenant(testDb());
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop(), receiver?.close()]);
  });

  it('calls every operation of the document, and each answer is as the document says', async () => {
    const called = new Set<string>();
    const problems: string[] = [];
    const wrs = new WorkflowRunClient({
      baseUrl: api.url,
      apiKey: tenant.key,
      fetch: checkedFetch(api, called, problems),
    });
    const stop = new AbortController();
    const stream = await follow(wrs, {}, stop.signal);

    expect((await wrs.getCurrentApiKey()).id).to.equal(tenant.keyId);
    await wrs.getOrganizationSettings();
    await wrs.updateOrganizationSettings({ time_zone: 'Europe/Berlin' });

    const template = await wrs.createWorkflowTemplate({ name: 'Client tour', pages: PAGES });
    expect((await wrs.getWorkflowTemplate({ id: template.id })).version).to.equal(1);
    await wrs.updateWorkflowTemplate({ id: template.id, expected_version: 1, pages: PAGES });
    expect(await wrs.getWorkflowTemplateVersions({ id: template.id })).to.have.length(2);
    expect((await wrs.getWorkflowTemplates()).map((t) => t.id)).to.include(template.id);
    expect((await wrs.archiveWorkflowTemplate({ id: template.id })).archived).to.equal(true);
    expect((await wrs.restoreWorkflowTemplate({ id: template.id })).archived).to.equal(false);

    // A schedule of it: made, read, listed, changed, paused, resumed, triggered, backfilled.
    const schedule = await wrs.createWorkflowSchedule({
      workflow_template_id: template.id,
      cron: '0 9 * * 1-5',
      time_zone: 'Europe/Berlin',
      input_fields: { full_name: 'Scheduled' },
    });
    expect(schedule.nextTimes).to.have.length(5);
    expect((await wrs.getWorkflowSchedule({ id: schedule.id })).cron).to.equal('0 9 * * 1-5');
    expect((await wrs.getWorkflowSchedules()).map((s) => s.id)).to.include(schedule.id);
    await wrs.updateWorkflowSchedule({ id: schedule.id, overlap: 'allow_all' });
    expect((await wrs.pauseWorkflowSchedule({ id: schedule.id, note: 'hold' })).state).to.equal(
      'paused',
    );
    await wrs.resumeWorkflowSchedule({ id: schedule.id });
    expect((await wrs.triggerWorkflowSchedule({ id: schedule.id })).outcome).to.equal('fired');
    const week = new Date(Date.now() - 7 * 24 * 3600_000).toISOString();
    await wrs.backfillWorkflowSchedule({ id: schedule.id, from: week, to: week });
    expect(await wrs.getWorkflowScheduleHistory({ id: schedule.id })).to.have.length(1);
    expect((await wrs.deleteWorkflowSchedule({ id: schedule.id })).deleted).to.equal(true);

    const endpoint = await wrs.createWebhookEndpoint({
      url: receiver.url(),
      events: ['run.completed'],
    });
    expect(endpoint.secret).to.match(/^whsec_/);
    expect((await wrs.getWebhookEndpoints()).map((e) => e.id)).to.include(endpoint.id);

    const run = await wrs.createWorkflowRun({
      workflow_template_id: template.id,
      input_fields: { full_name: 'Ada' },
      labels: { suite: 'client-tour' },
    });
    expect(run.status).to.equal('pending');
    await waitFor('the run started', () =>
      stream.events.some((e) => e.type === 'run.started' && e.data.runId === run.id),
    );
    expect((await wrs.getWorkflowRun({ id: run.id })).currentStepName).to.equal('Details');
    const listed = await wrs.getWorkflowRuns({ label: ['suite:client-tour'] });
    expect(listed.map((r) => r.id)).to.deep.equal([run.id]);
    expect((await wrs.countWorkflowRuns({ label: ['suite:client-tour'] })).total).to.equal(1);
    // People: the step in the inbox, claimed, let go, given to someone.
    const inbox = await wrs.getTasks({ label: ['suite:client-tour'] });
    expect(inbox.map((t) => [t.runId, t.step])).to.deep.equal([[run.id, 'Details']]);
    const step = { workflow_run_id: run.id, step_name: 'Details' };
    await wrs.claimWorkflowStep({ ...step, user_id: 'ada' });
    await wrs.unclaimWorkflowStep({ ...step, user_id: 'ada' });
    await wrs.assignWorkflowStep({ ...step, user_id: 'grace' });
    expect((await wrs.getTasks({ assignee: 'grace' })).map((t) => t.runId)).to.deep.equal([run.id]);
    // Insights: the run, of its label, counted as created and open at its step, with grace's.
    const insights = await waitFor('the run in the insights', async () => {
      const figures = await wrs.getRunInsights({
        template_id: template.id,
        label: 'suite:client-tour',
        bucket: 'hour',
      });
      return figures.lagMs === 0 ? figures : undefined;
    });
    expect(insights.buckets.reduce((n, b) => n + b.created, 0)).to.equal(1);
    expect(insights.open.steps.map((s) => [s.step, s.runs])).to.deep.equal([['Details', 1]]);
    // Moved onto version 1 of its template (it was made at 2, the latest), dry run first.
    const dry = await wrs.migrateWorkflowRun({
      workflow_run_id: run.id,
      to_version: 1,
      dry_run: true,
    });
    expect(dry.migration).to.include({ fromVersion: 2, toVersion: 1, step: 'Details' });
    expect(
      (await wrs.migrateWorkflowRun({ workflow_run_id: run.id, to_version: 1 })).dryRun,
    ).to.equal(false);
    const moves = await wrs.bulkMigrateWorkflowRuns({
      filter: { template_id: template.id },
      from_version: 2,
      to_version: 1,
      dry_run: true,
    });
    expect(moves.migration).to.deep.equal({ fromVersion: 2, toVersion: 1 });
    for (const step of ['Details', 'Sign-off']) {
      await wrs.completeWorkflowStep({ workflow_run_id: run.id, step_name: step });
      await waitFor(`${step} done`, async () => {
        const detail = await wrs.getWorkflowRun({ id: run.id });
        return detail.steps.find((s) => s.name === step)?.status === 'completed';
      });
    }
    await waitFor('run.completed on the stream', () =>
      stream.events.some((e) => e.type === 'run.completed' && e.data.runId === run.id),
    );

    const other = await wrs.createWorkflowRun({
      workflow_template_id: template.id,
      input_fields: { full_name: 'Grace' },
    });
    expect((await wrs.cancelWorkflowRun({ workflow_run_id: other.id })).status).to.equal(
      'cancelled',
    );
    const refused = await wrs.retryWorkflowRun({ workflow_run_id: other.id }).catch((e) => e);
    expect(refused).to.be.instanceOf(WorkflowRunError);
    expect((refused as WorkflowRunError).code).to.equal('run_not_retryable');
    expect((await wrs.deleteWorkflowRun({ workflow_run_id: other.id })).deleted).to.equal(true);

    const bulk = await wrs.bulkCancelWorkflowRuns({ filter: { label: ['suite:none'] } });
    expect((await wrs.getBulkAction({ id: bulk.id })).id).to.equal(bulk.id);
    await wrs.bulkRetryWorkflowRuns({ filter: { label: ['suite:none'] } });

    const [delivery] = await waitFor('the run.completed delivery', async () => {
      const page = await wrs.getWebhookDeliveries({ endpoint_id: endpoint.id });
      return page.length > 0 && page;
    });
    await wrs.redeliverWebhook({ delivery_id: delivery!.id });
    await wrs.rotateWebhookSecret({ id: endpoint.id });
    await wrs.deleteWebhookEndpoint({ id: endpoint.id });

    const key = await wrs.createApiKey({ name: 'reader', scopes: ['runs:read'] });
    expect((await wrs.getApiKeys()).map((k) => k.id)).to.include(key.id);
    const rolled = await wrs.rollApiKey({ id: key.id });
    await wrs.revokeApiKey({ id: rolled.id });
    expect((await wrs.getAuditLog()).length).to.be.greaterThan(0);

    stop.abort();
    await stream.done;
    expect(problems).to.deep.equal([]);
    const every = Object.values(OPERATIONS).map((op) => `${op.method} ${op.path}`);
    expect([...called].filter((c) => !c.startsWith('GET /openapi')).sort()).to.deep.equal(
      every.sort(),
    );
  });

  it('throws the service errors typed: status, code, field; a 4xx is not retried', async () => {
    let attempts = 0;
    const wrs = new WorkflowRunClient({
      baseUrl: api.url,
      apiKey: tenant.key,
      fetch: (input, init) => {
        attempts++;
        return fetch(input, init);
      },
    });
    const error = await wrs
      .createWorkflowRun({ workflow_template_id: tenant.template.id, input_fields: { nope: 'x' } })
      .catch((e: unknown) => e);
    expect(error).to.be.instanceOf(WorkflowRunError);
    const e = error as WorkflowRunError;
    expect([e.status, e.code, e.field]).to.deep.equal([
      400,
      'unknown_input_field',
      '/input_fields/nope',
    ]);
    expect(e.idempotencyKey).to.match(/^[0-9a-f-]{36}$/);
    expect(attempts).to.equal(1);
    const missing = await wrs.getWorkflowRun({ id: 'no-such-run' }).catch((x: unknown) => x);
    expect((missing as WorkflowRunError).code).to.equal('run_not_found');
    const unauthorized = new WorkflowRunClient({ baseUrl: api.url, apiKey: 'wrs_nope' });
    const forbidden = await unauthorized.getWorkflowRuns().catch((x: unknown) => x);
    expect([
      (forbidden as WorkflowRunError).status,
      (forbidden as WorkflowRunError).code,
    ]).to.deep.equal([403, 'forbidden']);
  });

  it('retries a POST whose answer was lost after the service had it, and exactly one run exists', async () => {
    // A proxy that lets the first create through to the service and then cuts the client's
    // connection when the answer starts to come back: the run is made, the client never hears.
    const proxy = await AnswerCutter.start(api.port, 'POST /api/v1/create-workflow-run');
    try {
      const wrs = new WorkflowRunClient({
        baseUrl: `http://127.0.0.1:${proxy.port}/api/v1`,
        apiKey: tenant.key,
      });
      const run = await wrs.createWorkflowRun({
        workflow_template_id: tenant.template.id,
        input_fields: { item: 'Desk', amount: '300' },
        labels: { suite: 'lost-answer' },
      });
      expect(proxy.cut).to.equal(1);
      expect(proxy.keys).to.have.length.greaterThanOrEqual(2);
      expect(new Set(proxy.keys).size).to.equal(1); // the same key on every attempt
      const rows = await testDb()('run_labels')
        .where({ organization_id: tenant.orgId, label_key: 'suite', label_value: 'lost-answer' })
        .select('run_id');
      expect(rows.map((r: { run_id: string }) => r.run_id)).to.deep.equal([run.id]);
    } finally {
      await proxy.stop();
    }
  });

  it('walks a list page by page while runs are created: no gap, no duplicate', async () => {
    const wrs = new WorkflowRunClient({ baseUrl: api.url, apiKey: tenant.key });
    const create = (i: number) =>
      wrs.createWorkflowRun({
        workflow_template_id: tenant.template.id,
        input_fields: { item: `item ${i}`, amount: '1' },
        labels: { suite: 'pages' },
      });
    const before = await Promise.all(Array.from({ length: 40 }, (_, i) => create(i)));
    const seen: string[] = [];
    let made = 40;
    for await (const run of wrs.list('getWorkflowRuns', { label: ['suite:pages'], limit: 7 })) {
      seen.push(run.id);
      if (made < 80) await Promise.all([create(made++), create(made++)]); // while paging
    }
    expect(new Set(seen).size, 'no duplicate').to.equal(seen.length);
    const missing = before.filter((r) => !seen.includes(r.id));
    expect(missing, 'every run that existed before the walk is seen').to.deep.equal([]);
    expect(made).to.be.greaterThan(40);
  });

  it('resumes a stream across a restart of its API process: nothing missed, nothing doubled', async () => {
    const streamApi = await startApi();
    const port = streamApi.port;
    let restarted: ApiProcess | undefined;
    const stop = new AbortController();
    try {
      const reader = new WorkflowRunClient({ baseUrl: streamApi.url, apiKey: tenant.key });
      const writer = new WorkflowRunClient({ baseUrl: api.url, apiKey: tenant.key });
      const stream = await follow(reader, { type: 'run.created' }, stop.signal);
      const create = () =>
        writer.createWorkflowRun({
          workflow_template_id: tenant.template.id,
          input_fields: { item: 'Chair', amount: '50' },
          labels: { suite: 'resume' },
        });
      const made = [await create(), await create()];
      await waitFor('the first events', () => stream.events.length >= 2);
      await streamApi.stop();
      made.push(await create(), await create(), await create()); // while the stream's API is down
      restarted = await startApi({ PORT: String(port) });
      made.push(await create());
      await waitFor('every run.created', () => stream.events.length >= made.length, 30000);
      await new Promise((r) => setTimeout(r, 300)); // and no more after
      expect(stream.events.map((e) => e.data.runId)).to.deep.equal(made.map((r) => r.id));
      const ids = stream.events.map((e) => Number(e.id));
      expect(ids).to.deep.equal([...ids].sort((a, b) => a - b));
    } finally {
      stop.abort();
      await Promise.all([streamApi.stop(), restarted?.stop()]);
    }
  });

  it('verifies what the service delivers, and refuses a tampered body or an old timestamp', async () => {
    const wrs = new WorkflowRunClient({ baseUrl: api.url, apiKey: tenant.key });
    const path = '/verify';
    const endpoint = await wrs.createWebhookEndpoint({
      url: receiver.url(path),
      events: ['run.created'],
    });
    const run = await wrs.createWorkflowRun({
      workflow_template_id: tenant.template.id,
      input_fields: { item: 'Lamp', amount: '20' },
    });
    const delivery = await waitFor('a delivery', () =>
      receiver.received.find((r) => r.path === path && r.body.includes(run.id)),
    );
    const payload = verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
    expect(payload.type).to.equal('run.created');
    expect(payload.data.runId).to.equal(run.id);
    const headers = new Headers(
      Object.entries(delivery.headers).map(([k, v]) => [k, String(v)] as [string, string]),
    );
    expect(
      verifyWebhook(new TextEncoder().encode(delivery.body), headers, endpoint.secret).type,
    ).to.equal('run.created');

    const tampered = delivery.body.replace(run.id, `${run.id}x`);
    expect(() => verifyWebhook(tampered, delivery.headers, endpoint.secret)).to.throw(
      WebhookVerificationError,
    );
    // Signed with the right secret, but ten minutes ago: a replay.
    const old = new Date(Date.now() - 10 * 60 * 1000);
    const signature = new Webhook(endpoint.secret).sign('msg_old', old, delivery.body);
    expect(() =>
      verifyWebhook(
        delivery.body,
        {
          'webhook-id': 'msg_old',
          'webhook-timestamp': String(Math.floor(old.getTime() / 1000)),
          'webhook-signature': signature,
        },
        endpoint.secret,
      ),
    ).to.throw(WebhookVerificationError, /timestamp/i);
    await wrs.deleteWebhookEndpoint({ id: endpoint.id });
  });
});

/**
 * A TCP proxy in front of the API that, on the first request starting with `line`, forwards it
 * and then resets the client's connection as soon as the answer begins: the request was handled,
 * its answer lost. Records the Idempotency-Key of each such request it sees.
 */
class AnswerCutter {
  cut = 0;
  readonly keys: string[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(target: number, line: string): Promise<AnswerCutter> {
    const server = createServer();
    const cutter = new AnswerCutter(server);
    server.on('connection', (client) => {
      const upstream = connect(target, '127.0.0.1');
      cutter.sockets.add(client).add(upstream);
      let cutting = false;
      client.on('data', (chunk: Buffer) => {
        const text = chunk.toString('latin1');
        if (text.startsWith(line)) {
          const key = /\r\nidempotency-key: *([^\r]+)/i.exec(text)?.[1];
          if (key) cutter.keys.push(key);
          if (cutter.cut === 0) cutting = true;
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (cutting) {
          cutting = false;
          cutter.cut++;
          client.resetAndDestroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return cutter;
  }

  get port(): number {
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
