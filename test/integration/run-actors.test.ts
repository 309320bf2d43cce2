// Who did what to a run, end to end with a real worker: the events a request makes (created,
// a step completed, completed, cancelled, retried) carry the requesting key's id and name,
// those the service makes by itself (started, overdue, failed) carry system; the run's history
// shows them, and each webhook delivery carries its event's actor, in the documented payload.
import { expect } from 'chai';
import { SYSTEM, type Actor } from '../../src/audit/actor.js';
import { KeyStore } from '../../src/auth/key-store.js';
import { TemplateStore } from '../../src/templates/template-store.js';
import { WebhookPayloadSchema } from '../../src/webhooks/webhook-schemas.js';
import { keyActor } from '../support/audit-actions.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { assertServiceSchema } from '../support/spec-schemas.js';
import { waitFor } from '../support/wait.js';
import { bodyOf, WEBHOOK_TEST_ENV, WebhookReceiver } from '../support/webhook-receiver.js';

/** 0.0005 h = 1.8 s: a due date a test can wait for. */
const DUE_IN_HOURS = 0.0005;

type History = Array<{ seq: number; type: string; actor?: Actor }>;
type Detail = { status: string; currentStepName?: string; history: History };

describe('run history: who made each change @cluster', function () {
  this.timeout(90000);

  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let receiver: WebhookReceiver;
  let tenant: Tenant;
  let plainTemplate: string;
  /** The tenant's key ('test') and a second key of the organization ('second'). */
  let first: Client;
  let second: Client;
  let firstActor: Actor;
  let secondActor: Actor;
  const runs: string[] = [];
  const env = { ...WEBHOOK_TEST_ENV, JOB_ATTEMPTS: '1' };

  before(async () => {
    receiver = await WebhookReceiver.start();
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
    tenant = await createTenant(testDb(), {
      name: 'Due soon',
      pages: [
        { name: 'Quick', dueInHours: DUE_IN_HOURS, inputFields: [] },
        { name: 'Second', inputFields: [] },
      ],
    });
    plainTemplate = (
      await new TemplateStore(testDb()).insert(tenant.orgId, {
        name: 'Plain',
        pages: [
          { name: 'One', inputFields: [] },
          { name: 'Two', inputFields: [] },
        ],
      })
    ).id;
    const secondKey = await new KeyStore(testDb(), 0).create(tenant.orgId, 'second');
    first = new Client(api.url, tenant.key);
    second = new Client(api.url, secondKey.key);
    firstActor = keyActor(tenant.keyId, 'test');
    secondActor = keyActor(secondKey.id, 'second');
    const hook = await first.call<{ id: string }>('/create-webhook-endpoint', {
      url: receiver.url('/actors'),
    });
    expect(hook.status, hook.text).to.equal(200);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
  });

  const detail = async (id: string) => (await first.getRun(id)).body as unknown as Detail;
  const when = (id: string, what: string, test: (d: Detail) => boolean, timeoutMs = 15000) =>
    waitFor(
      `run ${id}: ${what}`,
      async () => {
        const d = await detail(id);
        return test(d) ? d : undefined;
      },
      timeoutMs,
    );
  const actors = (d: Detail) => d.history.map((e) => [e.type, e.actor]);
  const row = (id: string) => testDb()('workflow_runs').where({ id }).first();

  it('names the key for a request’s changes and system for the service’s own', async () => {
    const created = await first.createRun({
      workflow_template_id: tenant.template.id,
      input_fields: {},
    });
    const id = created.body.id as string;
    runs.push(id);
    await when(id, 'overdue', (d) => d.history.some((e) => e.type === 'step.overdue'), 10000);
    const step = await second.completeStep({
      workflow_run_id: id,
      step_name: 'Quick',
      input_fields: {},
    });
    expect(step.status, step.text).to.equal(202);
    await when(id, 'at its second step', (d) => d.currentStepName === 'Second');
    await first.completeStep({ workflow_run_id: id, step_name: 'Second', input_fields: {} });
    const done = await when(id, 'completed', (d) => d.status === 'completed');
    expect(actors(done)).to.deep.equal([
      ['run.created', firstActor],
      ['run.started', SYSTEM],
      ['step.overdue', SYSTEM],
      ['step.completed', secondActor],
      ['step.completed', firstActor],
      // The completion of the last step, applied by a worker, is the request's.
      ['run.completed', firstActor],
    ]);
    // The history is what MySQL holds, column for column.
    const stored = await testDb()('run_events').where({ run_id: id }).orderBy('seq');
    expect(stored.map((e: { actor: string }) => JSON.parse(e.actor))).to.deep.equal(
      done.history.map((e) => e.actor),
    );
  });

  it('names the key that cancelled a run', async () => {
    const id = (await first.createRun({ workflow_template_id: plainTemplate, input_fields: {} }))
      .body.id as string;
    runs.push(id);
    await when(id, 'started', (d) => d.status === 'active');
    const res = await second.cancelRun({ workflow_run_id: id, reason: 'duplicate' });
    expect(res.status, res.text).to.equal(200);
    expect(actors(await detail(id))).to.deep.equal([
      ['run.created', firstActor],
      ['run.started', SYSTEM],
      ['run.cancelled', secondActor],
    ]);
  });

  it('names system for a failure and the key that retried it', async () => {
    await worker?.stop();
    worker = undefined;
    const id = (await first.createRun({ workflow_template_id: plainTemplate, input_fields: {} }))
      .body.id as string;
    runs.push(id);
    // The run cannot be applied (its pending change skips ahead): a worker marks it failed.
    const broken = JSON.parse((await row(id)).run_json);
    broken.pending.seq = 9;
    await testDb()('workflow_runs')
      .where({ id })
      .update({ run_json: JSON.stringify(broken) });
    worker = await startWorker(env);
    await when(id, 'failed', (d) => d.status === 'failed');
    const mended = JSON.parse((await row(id)).run_json);
    mended.pending.seq = 1;
    await testDb()('workflow_runs')
      .where({ id })
      .update({ run_json: JSON.stringify(mended) });
    const res = await second.retryRun({ workflow_run_id: id });
    expect(res.status, res.text).to.equal(202);
    const started = await when(id, 'started', (d) => d.status === 'active');
    expect(actors(started)).to.deep.equal([
      ['run.created', firstActor],
      ['run.failed', SYSTEM],
      ['run.retried', secondActor],
      ['run.started', SYSTEM],
    ]);
  });

  it('puts each event’s actor in its webhook delivery, as the payload schema says', async () => {
    const expected = new Map<string, Actor | undefined>();
    for (const id of runs) {
      for (const event of (await detail(id)).history)
        expected.set(`${id}#${event.seq}`, event.actor);
    }
    expect(expected.size).to.equal(13);
    const bodies = await waitFor('every event delivered', () => {
      const got = new Map(
        receiver.accepted('/actors').map((r) => {
          const body = bodyOf(r);
          return [`${body.data.runId}#${body.data.seq}` as string, body] as const;
        }),
      );
      return [...expected.keys()].every((k) => got.has(k)) ? got : undefined;
    });
    for (const [key, actor] of expected) {
      const body = bodies.get(key)!;
      assertServiceSchema(WebhookPayloadSchema, body);
      expect(body.data.actor, key).to.deep.equal(actor);
    }
    // Strict: a body whose data holds a field no event has, or an actor of no kind, is refused.
    const sample = bodies.get(`${runs[0]}#1`)!;
    for (const wrong of [
      { ...sample, data: { ...sample.data, secret: 'x' } },
      { ...sample, data: { ...sample.data, actor: { type: 'root' } } },
      { ...sample, type: 'run.started' }, // run.created's data under another type
    ]) {
      expect(() => assertServiceSchema(WebhookPayloadSchema, wrong)).to.throw();
    }
  });
});
