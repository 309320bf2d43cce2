// Scenario: MySQL stops answering without closing anything (the server paused with SIGSTOP, or
// a network that drops packets), and the connection dying just as a COMMIT was sent. The rule
// under test: a client told that a request failed can rely on nothing having been done.
//   - a 503 means never stored, not even once MySQL answers again;
//   - a 200/202 means stored;
//   - where the service cannot know (the COMMIT was sent, no answer came), it says so with a
//     500 outcome_unknown, never with a 503 that invites a blind retry.
// The API reaches MariaDB through a TCP proxy of its own; stall() holds every byte both ways
// as a paused server would, and delivers them on unstall().
import { expect } from 'chai';
import { testEnv } from '../support/env.js';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, type Reply } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { sleep, waitFor } from '../support/wait.js';

const STALL_MS = 8000;
const REQUEST_TIMEOUT_MS = 3000;
const WRITE_TIMEOUT_MS = 2000;

type Outcome = 'done' | 'not done' | 'unknown';

/** What an answer tells a client about its request; throws on an answer no client should get. */
function told(res: Reply<Record<string, unknown>>, what: string): Outcome {
  if (res.status === 200 || res.status === 202) return 'done';
  if (res.status === 503) return 'not done';
  if (res.status === 500 && res.body.code === 'outcome_unknown') return 'unknown';
  throw new Error(`${what}: unexpected answer ${res.status} ${res.text}`);
}

describe('fault: MySQL stops answering', function () {
  this.timeout(120000);

  let proxy: TcpProxy;
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    const db = new URL(testEnv.DATABASE_URL!);
    proxy = await TcpProxy.start({ host: db.hostname, port: Number(db.port || 3306) });
    [api, worker] = await Promise.all([
      startApi({
        DATABASE_URL: proxy.urlFor(testEnv.DATABASE_URL!),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        WRITE_TIMEOUT_MS: String(WRITE_TIMEOUT_MS),
      }),
      startWorker(), // straight to MySQL: it applies what the API stored
    ]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  afterEach(() => {
    proxy.holdFrom(undefined);
    proxy.unstall();
    proxy.resume();
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await proxy?.close();
  });

  const row = (id: string) => testDb()('workflow_runs').where({ id }).first();

  async function activeRuns(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await client.createRun(createBody(tenant));
      expect(res.status).to.equal(200);
      ids.push(res.body.id as string);
    }
    for (const id of ids)
      await waitFor('run to start', async () => (await row(id)).status === 'active');
    return ids;
  }

  it('never stores a request it answered 503, through an 8 s stall under load', async () => {
    const toComplete = await activeRuns(40);
    const creates = new Map<string, Outcome>(); // tag → what the client was told
    const completions = new Map<string, Outcome>(); // run id → what the client was told
    let tags = 0;
    let stop = false;

    const createLoop = async () => {
      while (!stop) {
        const tag = `drill-${tags++}`;
        const res = await client.createRun(
          createBody(tenant, { input_fields: { item: tag, amount: '1' } }),
        );
        creates.set(tag, told(res, `create ${tag}`));
      }
    };
    const completeLoop = async () => {
      while (!stop && toComplete.length > 0) {
        const id = toComplete.shift()!;
        const res = await client.completeStep({ workflow_run_id: id, step_name: 'Request' });
        completions.set(id, told(res, `completion of ${id}`));
        await sleep(150);
      }
    };
    const loops = [
      ...Array.from({ length: 6 }, createLoop),
      ...Array.from({ length: 2 }, completeLoop),
    ];
    await sleep(500);
    proxy.stall();
    await sleep(STALL_MS);
    proxy.unstall();
    await sleep(1500);
    stop = true;
    await Promise.all(loops);

    // Let MySQL finish what reached it, then compare with what clients were told.
    await sleep(1000);
    const stored = await testDb()('workflow_runs')
      .where({ organization_id: tenant.orgId })
      .select('run_json');
    const storedTags = new Map<string, number>();
    for (const r of stored) {
      const item = (JSON.parse(r.run_json as string) as { input_fields: { item: string } })
        .input_fields.item;
      storedTags.set(item, (storedTags.get(item) ?? 0) + 1);
    }
    const tally = { done: 0, 'not done': 0, unknown: 0 };
    for (const [tag, outcome] of creates) {
      tally[outcome]++;
      const times = storedTags.get(tag) ?? 0;
      expect(times, `${tag} stored at most once`).to.be.at.most(1);
      if (outcome === 'done') expect(times, `${tag}, answered 200, is stored`).to.equal(1);
      if (outcome === 'not done') expect(times, `${tag}, answered 503, is not stored`).to.equal(0);
    }
    const completionTally = { done: 0, 'not done': 0, unknown: 0 };
    for (const [id, outcome] of completions) {
      completionTally[outcome]++;
      const r = await row(id);
      if (outcome === 'done') expect(r.requested_seq, `completion of ${id} stored`).to.equal(2);
      if (outcome === 'not done') {
        expect(r.requested_seq, `completion of ${id}, answered 503, not stored`).to.equal(1);
        expect(r.current_step_name).to.equal('Request');
      }
    }
    if (process.env.TEST_VERBOSE) {
      process.stderr.write(
        `stall drill: creates ${JSON.stringify(tally)}, completions ${JSON.stringify(completionTally)}\n`,
      );
    }
    // The drill did what it is for: requests failed during the stall and succeeded around it.
    expect(tally.done, 'creates answered 200').to.be.greaterThan(10);
    expect(tally['not done'], 'creates answered 503').to.be.greaterThan(5);
    expect(
      completionTally.done + completionTally['not done'] + completionTally.unknown,
    ).to.be.greaterThan(10);
    expect(completionTally['not done'], 'completions answered 503').to.be.greaterThan(0);
    expect(api.running, 'API alive').to.equal(true);
  });

  for (const delivered of [true, false]) {
    it(`answers 500 outcome_unknown, not 503, when the connection dies after COMMIT was sent (${delivered ? 'it committed' : 'it did not'})`, async () => {
      const [id] = await activeRuns(1);
      for (const endpoint of ['create', 'complete'] as const) {
        proxy.holdFrom((chunk) => chunk.includes('COMMIT'));
        const answer =
          endpoint === 'create'
            ? client.createRun(
                createBody(tenant, { input_fields: { item: `unknown-${delivered}`, amount: '1' } }),
              )
            : client.completeStep({ workflow_run_id: id, step_name: 'Request' });
        await waitFor('the COMMIT to reach the proxy', () => proxy.holding === 1);
        if (delivered) {
          proxy.stall(); // the server's answer to the COMMIT is kept from the API ...
          await proxy.releaseHeld(); // ... while the COMMIT itself reaches the server
        }
        proxy.pause(); // and the connection dies
        const res = await answer;
        proxy.resume();
        proxy.unstall();
        expect(res.status, `${endpoint}: ${res.text}`).to.equal(500);
        expect(res.body.code).to.equal('outcome_unknown');
        expect(res.body.message).to.match(/outcome of this request is unknown/);
        if (endpoint === 'create') {
          const runs = await testDb()('workflow_runs')
            .where({ organization_id: tenant.orgId })
            .where('run_json', 'like', `%unknown-${delivered}%`);
          expect(runs, 'create stored as the COMMIT was (or was not) delivered').to.have.length(
            delivered ? 1 : 0,
          );
        } else {
          expect((await row(id!)).requested_seq).to.equal(delivered ? 2 : 1);
        }
      }
    });
  }
});
