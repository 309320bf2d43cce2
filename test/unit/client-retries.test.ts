// The client's retries, against a real HTTP server that answers as each case needs: what is
// retried (no answer, 429 with Retry-After, 503, 500 outcome_unknown, 409 in flight on a retry),
// what is not (any other 4xx, another 500), and that every attempt of a POST carries one key.
import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  WorkflowRunClient,
  WorkflowRunConnectionError,
  WorkflowRunError,
} from 'workflow-run-client';

type Answer = { status: number; code?: string; headers?: Record<string, string> } | 'drop';

interface Seen {
  key: string | undefined;
  at: number;
}

/** A server that gives the scripted answers in turn, then 200 with a run. */
async function scripted(answers: Answer[]): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      seen.push({ key: req.headers['idempotency-key'] as string | undefined, at: Date.now() });
      const answer = answers.shift();
      if (answer === 'drop') return void req.socket.destroy();
      res.setHeader('content-type', 'application/json');
      if (!answer) return void res.end(JSON.stringify({ id: 'run-1', status: 'pending' }));
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(JSON.stringify({ message: 'scripted', code: answer.code ?? 'internal' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const body = { workflow_template_id: 't', input_fields: {} };

describe('client retries', () => {
  const servers: Server[] = [];
  const start = async (answers: Answer[]) => {
    const s = await scripted(answers);
    servers.push(s.server);
    return {
      ...s,
      wrs: new WorkflowRunClient({ baseUrl: s.url, apiKey: 'k', maxRetryDelayMs: 2000 }),
    };
  };
  afterEach(() => servers.splice(0).forEach((s) => s.close()));

  it('retries a dropped connection, 503, 500 outcome_unknown and 409 in flight, with one key', async () => {
    const { wrs, seen } = await start([
      'drop',
      { status: 503, code: 'unavailable' },
      { status: 409, code: 'idempotency_key_in_flight' },
    ]);
    const run = await wrs.createWorkflowRun(body);
    expect(run.id).to.equal('run-1');
    expect(seen).to.have.length(4);
    expect(new Set(seen.map((s) => s.key)).size).to.equal(1);
    expect(seen[0]!.key).to.match(/^[0-9a-f-]{36}$/);

    const second = await start([{ status: 500, code: 'outcome_unknown' }]);
    await second.wrs.createWorkflowRun(body, { idempotencyKey: 'mine' });
    expect(second.seen.map((s) => s.key)).to.deep.equal(['mine', 'mine']);
  });

  it('waits what Retry-After asks on a 429', async () => {
    const { wrs, seen } = await start([
      { status: 429, code: 'rate_limited', headers: { 'retry-after': '1' } },
    ]);
    await wrs.getWorkflowRuns();
    expect(seen).to.have.length(2);
    expect(seen[1]!.at - seen[0]!.at).to.be.at.least(950);
  });

  it('gives up at once when Retry-After asks longer than the client waits', async () => {
    const { wrs, seen } = await start([
      { status: 429, code: 'rate_limited', headers: { 'retry-after': '60' } },
    ]);
    const error = (await wrs.getWorkflowRuns().catch((e: unknown) => e)) as WorkflowRunError;
    expect([error.status, error.retryAfterSeconds, seen.length]).to.deep.equal([429, 60, 1]);
  });

  it('never retries another 4xx, another 500, or a 409 in flight on a first attempt', async () => {
    for (const answer of [
      { status: 400, code: 'invalid_body' },
      { status: 409, code: 'run_not_cancellable' },
      { status: 409, code: 'idempotency_key_in_flight' },
      { status: 422, code: 'idempotency_key_reused' },
      { status: 500, code: 'internal' },
    ]) {
      const { wrs, seen } = await start([answer]);
      const error = (await wrs
        .createWorkflowRun(body)
        .catch((e: unknown) => e)) as WorkflowRunError;
      expect([error.status, error.code, seen.length], answer.code).to.deep.equal([
        answer.status,
        answer.code,
        1,
      ]);
    }
  });

  it('is bounded: after maxRetries the last failure is thrown, with the key to retry later', async () => {
    const { url, seen } = await start(['drop', 'drop', 'drop']);
    const wrs = new WorkflowRunClient({ baseUrl: url, apiKey: 'k', maxRetries: 2 });
    const error = await wrs.createWorkflowRun(body).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(WorkflowRunConnectionError);
    expect((error as WorkflowRunConnectionError).idempotencyKey).to.equal(seen[0]!.key);
    expect(seen).to.have.length(3);
  });

  it('spreads its retries (jitter): clients that failed together do not come back together', async () => {
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const { wrs, seen } = await start([{ status: 503, code: 'unavailable' }]);
      await wrs.getWorkflowRuns();
      waits.push(seen[1]!.at - seen[0]!.at);
    }
    expect(Math.min(...waits)).to.be.at.least(100);
    expect(new Set(waits).size).to.be.greaterThan(1);
  });
});
