// Scenario 5: SIGTERM the API under load. Every request answered 200 has its stored run, and
// every stored run was answered; no client sees its connection cut once a response has begun
// (a request either gets its whole response, or is refused or reset before any byte of one);
// the process exits 0.
import { expect } from 'chai';
import { Agent, request as httpRequest } from 'node:http';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { RedisServer } from '../support/redis-server.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

const CLIENTS = 40;
const ANSWERED_BEFORE_SIGTERM = 150;

type Outcome =
  | { kind: 'answered'; status: number; body: { id?: unknown }; sentAt: number; doneAt: number }
  /** Refused or reset before any byte of a response: the client knows nothing was answered. */
  | { kind: 'not-answered'; error: string }
  /** The connection broke after the response had begun: what must never happen. */
  | { kind: 'cut'; error: string };

/** POSTs and tells apart a whole response, no response at all, and a response cut short. */
function post(url: string, key: string, body: unknown, agent: Agent | false): Promise<Outcome> {
  const payload = JSON.stringify(body);
  const sentAt = Date.now();
  return new Promise((resolve) => {
    let responded = false;
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: key,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        responded = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('aborted', () => resolve({ kind: 'cut', error: 'response aborted' }));
        res.on('error', (err) => resolve({ kind: 'cut', error: err.message }));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const length = res.headers['content-length'];
          if (length !== undefined && Number(length) !== Buffer.byteLength(text)) {
            resolve({ kind: 'cut', error: `got ${text.length} of ${length} bytes` });
            return;
          }
          try {
            const parsed = JSON.parse(text) as { id?: unknown };
            resolve({
              kind: 'answered',
              status: res.statusCode ?? 0,
              body: parsed,
              sentAt,
              doneAt: Date.now(),
            });
          } catch {
            resolve({ kind: 'cut', error: `body is not whole JSON: ${text.slice(0, 100)}` });
          }
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (!responded) resolve({ kind: 'not-answered', error: err.code ?? err.message });
      else resolve({ kind: 'cut', error: err.code ?? err.message });
    });
    req.end(payload);
  });
}

describe('fault: SIGTERM to the API under load', function () {
  this.timeout(60000);

  let redis: RedisServer;
  let api: ApiProcess;
  let tenant: Tenant;

  before(async () => {
    redis = await RedisServer.start();
    api = await startApi({ REDIS_URL: redis.url });
    tenant = await createTenant(testDb());
  });

  after(async () => {
    await api?.stop('SIGKILL');
    await redis?.stop();
  });

  it('finishes what it accepted, cuts no response, and exits 0', async () => {
    const outcomes: Outcome[] = [];
    const url = `${api.url}/create-workflow-run`;

    // Half the clients keep their connection alive between requests, half open a new one each
    // time. Each sends creates back to back until the API refuses to connect.
    const clients = Array.from({ length: CLIENTS }, async (_, i) => {
      const agent = i % 2 === 0 ? new Agent({ keepAlive: true, maxSockets: 1 }) : false;
      try {
        for (;;) {
          const outcome = await post(url, tenant.key, createBody(tenant), agent);
          outcomes.push(outcome);
          if (outcome.kind === 'not-answered' && outcome.error === 'ECONNREFUSED') break;
          if (outcome.kind === 'cut') break;
        }
      } finally {
        if (agent) agent.destroy();
      }
    });

    await waitFor(
      'load to build up',
      () =>
        outcomes.filter((o) => o.kind === 'answered' && o.status === 200).length >=
        ANSWERED_BEFORE_SIGTERM,
      30000,
    );
    const sigtermAt = Date.now();
    api.child.kill('SIGTERM');
    const exitCode = await api.exited;
    await Promise.all(clients);

    expect(exitCode, 'exit code of the API').to.equal(0);
    expect(outcomes.filter((o) => o.kind === 'cut')).to.deep.equal([]);
    // A 503 (the database pool busy on a loaded machine) is a whole answer that accepted
    // nothing; anything else but a 200 is wrong.
    const answered = outcomes.filter((o) => o.kind === 'answered');
    expect(answered.filter((o) => o.status !== 200 && o.status !== 503)).to.deep.equal([]);
    const unanswered = outcomes.filter((o) => o.kind === 'not-answered');
    for (const o of unanswered) {
      expect(['ECONNREFUSED', 'ECONNRESET'], 'how an unanswered request failed').to.include(
        o.error,
      );
    }
    // Requests in flight when the signal came were finished, not dropped.
    const inFlight = answered.filter(
      (o) => o.status === 200 && o.sentAt <= sigtermAt && o.doneAt > sigtermAt,
    );
    expect(inFlight.length, 'requests finished during shutdown').to.be.greaterThan(0);

    // MySQL holds exactly the runs clients were told of.
    const told = answered
      .filter((o) => o.status === 200)
      .map((o) => o.body.id as string)
      .sort();
    const stored = (
      await testDb()('workflow_runs').select('id').where({ organization_id: tenant.orgId })
    )
      .map((r: { id: string }) => r.id)
      .sort();
    expect(new Set(told).size, 'distinct ids').to.equal(told.length);
    expect(stored, 'stored runs = runs answered 200').to.deep.equal(told);
  });
});
