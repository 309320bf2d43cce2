// Due dates that act: a step still current at its due date is marked overdue (by a delayed job,
// or by the reconciler when Redis lost the job), with a step.overdue event; completing or
// cancelling first leaves nothing to mark.
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { stepDueJob } from '../../src/jobs/step-due.js';
import { testEnv } from '../support/env.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import { testDb } from '../support/root-hooks.js';
import { sleep, waitFor } from '../support/wait.js';

/** 0.0005 h = 1.8 s: a due date a test can wait for. */
const DUE_IN_HOURS = 0.0005;
const DUE_MS = DUE_IN_HOURS * 3600_000;

type Detail = {
  status: string;
  steps: Array<{ name: string; overdue: boolean; dueDate?: string }>;
  history: Array<{ type: string; data: Record<string, unknown> }>;
};

describe('due dates that act @cluster', function () {
  this.timeout(60000);

  let redis: PrivateRedis;
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    redis = await startPrivateRedis();
    // The reconciler waits long enough that, with Redis intact, the timer marks the step.
    const env = { ...redis.env, RECONCILE_AFTER_MS: '4000' };
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
    tenant = await createTenant(testDb(), {
      name: 'Due soon',
      pages: [
        { name: 'Quick', dueInHours: DUE_IN_HOURS, inputFields: [] },
        { name: 'Later', dueInHours: 1, inputFields: [] },
      ],
    });
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await redis?.stop();
  });

  const detail = async (id: string) => (await client.getRun(id)).body as unknown as Detail;

  async function startedRun(): Promise<string> {
    const id = (
      await client.createRun({ workflow_template_id: tenant.template.id, input_fields: {} })
    ).body.id as string;
    await waitFor('run to start', async () => (await detail(id)).status === 'active');
    return id;
  }

  it('marks a step still current at its due date overdue, with an event, and lists it', async () => {
    const id = await startedRun();
    expect(await overdueIds()).not.to.include(id);
    const marked = await waitFor(
      'step to be marked overdue',
      async () => {
        const d = await detail(id);
        return d.steps[0]!.overdue ? d : undefined;
      },
      DUE_MS + 3000,
    );
    const event = marked.history.find((e) => e.type === 'step.overdue')!;
    expect(event.data).to.deep.equal({ step: 'Quick', dueDate: marked.steps[0]!.dueDate });
    expect(await overdueIds()).to.include(id);
    const row = await testDb()('workflow_runs').where({ id }).first();
    expect(row.current_step_overdue).to.equal(1);
    // Marked by the timer (the reconciler would have waited 4 s past the due date).
    expect(worker.lines.some((l) => l.includes('timers were lost'))).to.equal(false);
  });

  it('marks nothing when the step is completed, or the run cancelled, before its due date', async () => {
    const completed = await startedRun();
    const cancelled = await startedRun();
    await client.completeStep({ workflow_run_id: completed, step_name: 'Quick' });
    await client.cancelRun({ workflow_run_id: cancelled });
    await sleep(DUE_MS + 1500);
    for (const id of [completed, cancelled]) {
      const d = await detail(id);
      expect(d.steps[0]!.overdue, id).to.equal(false);
      expect(d.history.map((e) => e.type)).not.to.include('step.overdue');
    }
  });

  it('still marks the step when Redis loses the timer: the reconciler does it from MySQL', async () => {
    const id = await startedRun();
    // The timer is scheduled just after the start's commit: flush once it is in Redis.
    const timers = new Queue(stepDueJob.queue, {
      connection: redis.connection(),
      prefix: testEnv.QUEUE_PREFIX,
    });
    try {
      await waitFor('the timer in Redis', async () => (await timers.getDelayedCount()) >= 1);
    } finally {
      await timers.close();
    }
    await redis.flushAll(); // the delayed job is gone
    const d = await waitFor(
      'the reconciler to mark the step',
      async () => {
        const now = await detail(id);
        return now.steps[0]!.overdue ? now : undefined;
      },
      DUE_MS + 10000,
    );
    expect(d.history.filter((e) => e.type === 'step.overdue')).to.have.length(1);
    await worker.waitForLine(/timers were lost/, 5000); // logged asynchronously
  });

  async function overdueIds(): Promise<string[]> {
    return (await client.listRuns('?overdue=true')).body.map((r) => r.id as string);
  }
});
