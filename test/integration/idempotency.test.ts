// Idempotency-Key on every POST: the first answer again for the same request, 422 for another
// request with the key, 409 while the first is in flight; the key is stored in the same
// transaction as the effect, so a refused request leaves nothing and the key may be reused.
import { expect } from 'chai';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { checkReply, Client, request, type Reply } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testEnv } from '../support/env.js';
import { RawConnection, rawRequest } from '../support/raw-http.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { testDb } from '../support/root-hooks.js';
import { sleep, waitFor } from '../support/wait.js';

describe('Idempotency-Key @cluster', () => {
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let n = 0;
  const newKey = () => `key-${process.pid}-${++n}-${Date.now()}`;

  before(async () => {
    [api, worker] = await Promise.all([startApi(), startWorker()]);
    tenant = await createTenant(testDb());
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  function post(
    path: string,
    body: unknown,
    key: string | undefined,
    options: { api?: ApiProcess; tenant?: Tenant } = {},
  ): Promise<Reply<Record<string, unknown>>> {
    return request<Record<string, unknown>>(`${(options.api ?? api).url}${path}`, {
      key: (options.tenant ?? tenant).key,
      body,
      headers: key === undefined ? {} : { 'idempotency-key': key },
    }).then((reply) => checkReply(reply, 'WorkflowRun', path));
  }

  const runsOf = async (t: Tenant) =>
    testDb()('workflow_runs').where({ organization_id: t.orgId }).select('id');

  it('answers a repeated create with the first answer, and creates one run', async () => {
    const fresh = await createTenant(testDb());
    const key = newKey();
    const first = await post('/create-workflow-run', createBody(fresh), key, { tenant: fresh });
    expect(first.status).to.equal(200);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const again = await post('/create-workflow-run', createBody(fresh), key, { tenant: fresh });
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.text).to.equal(first.text);
    expect(await runsOf(fresh)).to.have.length(1);
  });

  it('answers the same key with another body or on another endpoint with 422, doing nothing', async () => {
    const fresh = await createTenant(testDb());
    const key = newKey();
    expect(
      (await post('/create-workflow-run', createBody(fresh), key, { tenant: fresh })).status,
    ).to.equal(200);
    const otherBody = await post(
      '/create-workflow-run',
      createBody(fresh, { input_fields: { item: 'Desk', amount: '1' } }),
      key,
      { tenant: fresh },
    );
    expect(otherBody.status).to.equal(422);
    expect(otherBody.body.message).to.match(/another request/);
    const [run] = await runsOf(fresh);
    const otherEndpoint = await post('/cancel-workflow-run', { workflow_run_id: run.id }, key, {
      tenant: fresh,
    });
    expect(otherEndpoint.status).to.equal(422);
    expect(await runsOf(fresh)).to.have.length(1);
    expect((await testDb()('workflow_runs').where({ id: run.id }).first()).status).not.to.equal(
      'cancelled',
    );
  });

  it('gives 20 concurrent creates with one key exactly one run: each answer is it or a 409', async () => {
    const fresh = await createTenant(testDb());
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        post('/create-workflow-run', createBody(fresh), key, { tenant: fresh }),
      ),
    );
    const runs = await runsOf(fresh);
    expect(runs).to.have.length(1);
    for (const answer of answers) {
      if (answer.status === 409) {
        expect(answer.body.code).to.equal('idempotency_key_in_flight');
      } else {
        expect(answer.status).to.equal(200);
        expect(answer.body.id).to.equal(runs[0].id);
      }
    }
    expect(answers.filter((a) => a.status === 200).length).to.be.at.least(1);
  });

  it('keeps a duplicate key inside a group-committed batch from failing its neighbours', async () => {
    // API process A stores the key, and its COMMIT is held back at a proxy, so the key's place
    // stays locked. Process B gets the same key at once with 30 other creates: they go into
    // one batch, whose INSERT waits on that lock. When A commits, B's batch meets the key.
    const db = new URL(testEnv.DATABASE_URL!);
    const proxy = await TcpProxy.start({ host: db.hostname, port: Number(db.port || 3306) });
    const a = await startApi({ DATABASE_URL: proxy.urlFor(testEnv.DATABASE_URL!) });
    try {
      const fresh = await createTenant(testDb());
      const key = newKey();
      proxy.holdFrom((chunk) => chunk.includes('COMMIT'));
      const first = post('/create-workflow-run', createBody(fresh), key, { api: a, tenant: fresh });
      await waitFor('A to hold its COMMIT', () => proxy.holding === 1);
      const keyed = post('/create-workflow-run', createBody(fresh), key, { tenant: fresh });
      // Neighbours with keys of their own: like the keyed request they look their key up
      // first, so they reach the batcher together with it.
      const neighbours = Array.from({ length: 30 }, () =>
        post('/create-workflow-run', createBody(fresh), newKey(), { tenant: fresh }),
      );
      await sleep(500); // B's batch is waiting on the key's lock
      await proxy.releaseHeld();
      const [won, replayed, others] = await Promise.all([first, keyed, Promise.all(neighbours)]);
      expect(won.status).to.equal(200);
      expect(replayed.status).to.equal(200);
      expect(replayed.text).to.equal(won.text);
      expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
      expect(others.map((r) => r.status)).to.deep.equal(others.map(() => 200));
      expect(await runsOf(fresh)).to.have.length(31);
      expect(api.lines.some((l) => l.includes('inserting rows one by one'))).to.equal(false);
    } finally {
      proxy.holdFrom(undefined);
      await a.stop();
      await proxy.close();
    }
  });

  it('replays after the API was restarted: the key is in MySQL, not in the process', async () => {
    const fresh = await createTenant(testDb());
    const key = newKey();
    const first = await post('/create-workflow-run', createBody(fresh), key, { tenant: fresh });
    const restarted = await startApi();
    try {
      await api.stop();
      const again = await post('/create-workflow-run', createBody(fresh), key, {
        api: restarted,
        tenant: fresh,
      });
      expect(again.status).to.equal(200);
      expect(again.text).to.equal(first.text);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
    } finally {
      api = restarted; // the suite goes on with the new process
    }
    expect(await runsOf(fresh)).to.have.length(1);
  });

  it('stores nothing for a refused request: the key may be used again', async () => {
    const fresh = await createTenant(testDb());
    const key = newKey();
    const refused = await post(
      '/create-workflow-run',
      { workflow_template_id: fresh.template.id },
      key,
      { tenant: fresh },
    );
    expect(refused.status).to.equal(400);
    const unknownTemplate = await post(
      '/create-workflow-run',
      createBody(fresh, { workflow_template_id: 'nope' }),
      key,
      { tenant: fresh },
    );
    expect(unknownTemplate.status).to.equal(400);
    const ok = await post('/create-workflow-run', createBody(fresh), key, { tenant: fresh });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('makes complete-step, cancel and retry safe to repeat', async () => {
    const fresh = await createTenant(testDb());
    const freshClient = new Client(api.url, fresh.key);
    const id = (await freshClient.createRun(createBody(fresh))).body.id as string;
    await waitFor(
      'start',
      async () => (await testDb()('workflow_runs').where({ id }).first()).status === 'active',
    );
    const completeKey = newKey();
    const body = { workflow_run_id: id, input_fields: { note: 'x' } };
    const first = await post('/complete-workflow-step', body, completeKey, { tenant: fresh });
    expect(first.status).to.equal(202);
    await waitFor(
      'step 2',
      async () =>
        (await testDb()('workflow_runs').where({ id }).first()).current_step_name === 'Approval',
    );
    // Without the key this would complete the second step (or be refused); with it, the
    // client learns what its first request did.
    const again = await post('/complete-workflow-step', body, completeKey, { tenant: fresh });
    expect(again.status).to.equal(202);
    expect(again.text).to.equal(first.text);
    const cancelKey = newKey();
    const cancelled = await post('/cancel-workflow-run', { workflow_run_id: id }, cancelKey, {
      tenant: fresh,
    });
    expect(cancelled.status).to.equal(200);
    const cancelledAgain = await post('/cancel-workflow-run', { workflow_run_id: id }, cancelKey, {
      tenant: fresh,
    });
    expect(cancelledAgain.status).to.equal(200);
    expect(cancelledAgain.headers.get('idempotent-replayed')).to.equal('true');
    const history = (await freshClient.getRun(id)).body.history as Array<{ type: string }>;
    expect(history.map((e) => e.type)).to.deep.equal([
      'run.created',
      'run.started',
      'step.completed',
      'run.cancelled',
    ]);
  });

  it('keeps keys apart per organization, and lets them expire', async () => {
    const a = await createTenant(testDb());
    const b = await createTenant(testDb());
    const key = newKey();
    const ra = await post('/create-workflow-run', createBody(a), key, { tenant: a });
    const rb = await post('/create-workflow-run', createBody(b), key, { tenant: b });
    expect([ra.status, rb.status]).to.deep.equal([200, 200]);
    expect(ra.body.id).not.to.equal(rb.body.id);

    const shortLived = await startApi({ IDEMPOTENCY_TTL_SECONDS: '1' });
    try {
      const c = await createTenant(testDb());
      const k = newKey();
      const first = await post('/create-workflow-run', createBody(c), k, {
        api: shortLived,
        tenant: c,
      });
      await sleep(1200);
      const later = await post('/create-workflow-run', createBody(c), k, {
        api: shortLived,
        tenant: c,
      });
      expect(later.status).to.equal(200);
      expect(later.body.id).not.to.equal(first.body.id);
      expect(await runsOf(c)).to.have.length(2);
    } finally {
      await shortLived.stop();
    }
  });

  it('refuses a malformed key and two keys with 400', async () => {
    for (const key of ['', 'has space', 'x'.repeat(256), 'é']) {
      const res = await request<{ message: string }>(`${api.url}/create-workflow-run`, {
        key: tenant.key,
        body: createBody(tenant),
        headers: { 'idempotency-key': key },
      }).catch(() => undefined);
      if (!res) continue; // fetch refuses to send some of these at all
      expect(res.status, JSON.stringify(key)).to.equal(400);
    }
    const conn = await RawConnection.open(api.port);
    conn.write(
      rawRequest(
        'POST',
        '/create-workflow-run',
        {
          Authorization: tenant.key,
          'Content-Type': 'application/json',
          'Idempotency-Key': ['a', 'b'],
        },
        JSON.stringify(createBody(tenant)),
      ),
    );
    const res = await conn.response();
    conn.close();
    expect(res.status).to.equal(400);
    expect(res.body).to.match(/one Idempotency-Key/);
  });
});
