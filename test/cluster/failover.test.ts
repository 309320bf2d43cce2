// The Redis Cluster failover drill (npm run test:cluster): a cluster of three masters with a
// replica each and a short cluster-node-timeout, the API and a worker on it, and a real
// webhook receiver. While creates, step completions and webhook deliveries run, the master
// that holds the runs queue's slot is killed with SIGKILL; later (the dead node started again,
// as an operator replaces it) the master that holds the client's rate-limit keys. Each time:
// the replica is promoted, the same API and worker pids go on, every accepted request reaches
// its state with each change exactly once (run events counted in MySQL), every committed event
// is delivered, and a request answered 5xx did nothing. The figures (kill → promotion, kill →
// first run started again, what creates saw) are printed with the test's output.
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { JOB_KINDS } from '../../src/jobs/kinds.js';
import { testEnv } from '../support/env.js';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { RedisCluster } from '../support/redis-cluster.js';
import type { RedisServer } from '../support/redis-server.js';
import { testDb } from '../support/root-hooks.js';
import { expectLedgerApplied, Ledger, stepInputs, type ToldRun } from '../support/run-ledger.js';
import { sleep, waitFor } from '../support/wait.js';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from '../support/webhook-receiver.js';

/** The load: creates at this pace for LOAD_MS, the kill KILL_AT_MS in. */
const CREATES_PER_S = 60;
const LOAD_MS = 10000;
const KILL_AT_MS = 3000;
/** Clients completing the created runs' steps (each retries a 409 after RETRY_MS). */
const COMPLETERS = 12;
const RETRY_MS = 100;
const NODE_TIMEOUT_MS = 1000;

/** One answer a client had: when it asked, how long it waited, the status (0: no answer). */
interface Answer {
  at: number;
  ms: number;
  status: number;
}

interface Figures {
  promotedMs: number;
  firstStartMs: number;
  longestStartGapMs: number;
  baselineGapMs: number;
  creates: Answer[];
}

interface EventCount {
  run_id: string;
  type: string;
  n: number | string;
  steps: number | string;
}

describe('Redis Cluster failover under load @cluster', function () {
  this.timeout(240000);

  let cluster: RedisCluster;
  let receiver: WebhookReceiver;
  let api: ApiProcess;
  let worker: ServiceProcess;
  let pids: number[];
  let runsQueueKey: string;

  before(async function () {
    const cli = process.env.REDIS_CLI_BIN || 'redis-cli';
    if (spawnSync(cli, ['--version']).error) {
      process.stderr.write(`\n  SKIPPED: the failover drill needs ${cli}, not found here\n\n`);
      this.skip();
    }
    cluster = await RedisCluster.start({ replicas: 1, nodeTimeoutMs: NODE_TIMEOUT_MS });
    receiver = await WebhookReceiver.start();
    // REDIS_URL is never used: the cluster's nodes win.
    const env = { ...WEBHOOK_TEST_ENV, ...cluster.env, REDIS_URL: 'redis://127.0.0.1:1' };
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
    pids = [api.pid, worker.pid];
    // Any key of the queue: the hash tag decides the slot.
    runsQueueKey = `${testEnv.QUEUE_PREFIX}:${JOB_KINDS.applyRuns.queue}:wait`;
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await receiver?.close();
    await cluster?.stop();
  });

  /** What a queue holds and which clients are connected where: for a failure's message. */
  async function queueState(queue: string): Promise<string> {
    const key = `${testEnv.QUEUE_PREFIX}:${queue}`;
    const master = await cluster.masterOfKey(key);
    const counts = await Promise.all([
      master.command<number>('LLEN', `${key}:wait`),
      master.command<number>('LLEN', `${key}:active`),
      master.command<number>('ZCARD', `${key}:delayed`),
      master.command<number>('ZCARD', `${key}:prioritized`),
      master.command<number>('ZCARD', `${key}:completed`),
      master.command<number>('ZCARD', `${key}:failed`),
    ]);
    const clients = await master.command<string>('CLIENT', 'LIST');
    const names = clients
      .split('\n')
      .map((line) => `${/ name=(\S*)/.exec(line)?.[1]} ${/ cmd=(\S*)/.exec(line)?.[1]}`)
      .filter((n) => n.startsWith('wrs-worker'))
      .sort();
    return (
      `${queue} on ${master.port}: wait ${counts[0]}, active ${counts[1]}, delayed ${counts[2]}, ` +
      `prioritized ${counts[3]}, completed ${counts[4]}, failed ${counts[5]}; worker clients ` +
      `there: ${names.join(', ')}`
    );
  }

  /** A rate-limit key of the tenant's API key (window 0: the tag alone decides the slot). */
  const rateLimitKey = (tenant: Tenant) => `${testEnv.QUEUE_PREFIX}:ratelimit:{${tenant.keyId}}:0`;

  /**
   * Runs the load, kills the master of `victimKey`'s slot KILL_AT_MS in, and checks everything
   * the drill promises. `holds` names the keys the victim must hold (KEYS pattern) when killed.
   */
  async function drill(name: string, tenant: Tenant, victimKey: string, holds: string) {
    const db = testDb();
    const path = `/${name}`;
    const endpoint = await new Client(api.url, tenant.key).call('/create-webhook-endpoint', {
      url: receiver.url(path),
    });
    expect(endpoint.status, endpoint.text).to.equal(200);

    const ledger = new Ledger();
    const creates: Answer[] = [];
    const refusedCompletions: Answer[] = [];
    const toComplete: ToldRun[] = [];
    const steps = tenant.template.pages.length;
    let loading = true;

    const createOne = async (i: number) => {
      const body = createBody(tenant, { input_fields: { item: `${name}-${i}`, amount: `${i}` } });
      const at = Date.now();
      let status = 0;
      try {
        const res = await request<{ id?: string }>(`${api.url}/create-workflow-run`, {
          key: tenant.key,
          body,
        });
        status = res.status;
        if (status === 200 && typeof res.body?.id === 'string') {
          toComplete.push(ledger.created(tenant, body, res.body.id));
        } else if (status < 500) {
          ledger.unexpected.push(`create answered ${status}: ${res.text.slice(0, 200)}`);
        }
        // A 5xx is allowed if it did nothing: the exact ledger check below finds any run
        // stored that no client was told of.
      } catch (err) {
        ledger.unexpected.push(`create had no answer: ${String(err)}`);
      }
      creates.push({ at, ms: Date.now() - at, status });
    };

    // Completes each step of the run in turn; a 409 (not started yet, or the last completion
    // not applied yet) or a 5xx is asked again, as a client would.
    const completeRun = async (run: ToldRun, giveUpAt: number) => {
      while (run.completions.length < steps && Date.now() < giveUpAt) {
        const step = run.completions.length;
        const inputs = stepInputs(tenant.template, step, `${run.id.slice(-6)}-${step}`);
        const at = Date.now();
        const res = await request(`${api.url}/complete-workflow-step`, {
          key: tenant.key,
          body: { workflow_run_id: run.id, input_fields: inputs },
        }).catch((err: unknown) => ({ status: 0, text: String(err) }));
        if (res.status === 202) {
          run.completions.push(inputs);
          continue;
        }
        if (res.status !== 409 && res.status < 500) {
          ledger.unexpected.push(`complete answered ${res.status}: ${res.text.slice(0, 200)}`);
          return;
        }
        if (res.status !== 409) refusedCompletions.push({ at, ms: Date.now() - at, status: 0 });
        await sleep(RETRY_MS);
      }
    };

    const started = Date.now();
    const creator = (async () => {
      const pending: Array<Promise<void>> = [];
      for (let i = 0; Date.now() - started < LOAD_MS; i++) {
        const due = started + (i * 1000) / CREATES_PER_S;
        if (due > Date.now()) await sleep(due - Date.now());
        pending.push(createOne(i));
      }
      await Promise.all(pending);
      loading = false;
    })();
    const completers = Array.from({ length: COMPLETERS }, async () => {
      while (loading || toComplete.length > 0) {
        const run = toComplete.shift();
        if (run) await completeRun(run, Date.now() + 60000);
        else await sleep(20);
      }
    });

    await sleep(KILL_AT_MS);
    // The load is really running: runs started, events delivered.
    expect(
      receiver.accepted(path).length,
      `deliveries before the kill; worker said:\n${worker.lines.slice(-10).join('\n')}`,
    ).to.be.above(0);
    const slot = await cluster.slotOf(victimKey);
    const victim: RedisServer = await cluster.masterOf(slot);
    const [replica] = await cluster.replicasOf(victim);
    expect(replica, 'the victim has a replica').to.not.equal(undefined);
    expect(
      await victim.command<string[]>('KEYS', holds),
      `the victim holds ${holds}`,
    ).to.have.length.above(0);

    const killedAt = Date.now();
    await cluster.kill(victim);
    const promoted = await cluster.waitForPromotion(slot, victim);
    const promotedMs = Date.now() - killedAt;
    expect(promoted.port, 'the dead master’s replica is the new master').to.equal(replica!.port);

    await creator;
    await Promise.all(completers);

    // Every accepted request reached its state.
    expect(ledger.unexpected, 'answers no client should have had').to.deep.equal([]);
    const accepted = [...ledger.runs.values()];
    const unfinished = accepted.filter((r) => r.completions.length < steps).map((r) => r.id);
    expect(unfinished, 'runs whose completions were not all accepted').to.deep.equal([]);
    await expectLedgerApplied(db, ledger, { exact: true, timeoutMs: 30000 });

    // Each change exactly once: one run.created, one run.started, one step.completed per step,
    // one run.completed, and nothing else, for every accepted run.
    const counts = (await db('run_events')
      .where({ organization_id: tenant.orgId })
      .groupBy('run_id', 'type')
      .select('run_id', 'type')
      .count({ n: '*' })
      .select(db.raw("COUNT(DISTINCT JSON_VALUE(data, '$.step')) AS steps"))) as EventCount[];
    const byRun = new Map<string, Record<string, string>>();
    for (const c of counts) {
      const seen = byRun.get(c.run_id) ?? {};
      seen[c.type] = `${Number(c.n)}/${Number(c.steps)}`;
      byRun.set(c.run_id, seen);
    }
    const expected = {
      'run.created': '1/0',
      'run.started': '1/1',
      'step.completed': `${steps}/${steps}`,
      'run.completed': '1/0',
    };
    const sorted = (o: Record<string, string> = {}) => JSON.stringify(Object.entries(o).sort());
    const wrong = accepted
      .filter((r) => sorted(byRun.get(r.id)) !== sorted(expected))
      .map((r) => `${r.id}: ${sorted(byRun.get(r.id))}`);
    expect(wrong.slice(0, 5), 'runs whose events are not each change exactly once').to.deep.equal(
      [],
    );
    expect(byRun.size, 'runs with events').to.equal(accepted.length);

    // No webhook event lost: every committed event delivered (accepted) at least once.
    const events = (await db('run_events')
      .where({ organization_id: tenant.orgId })
      .select('id')) as Array<{ id: number }>;
    await waitFor(
      'every committed event delivered to the receiver',
      () => {
        const delivered = new Set(
          receiver.accepted(path).map((r) => String(r.headers['webhook-id'])),
        );
        return events.every((e) => delivered.has(`evt_${e.id}`));
      },
      60000,
      250,
    ).catch(async (err: unknown) => {
      const delivered = new Set(
        receiver.accepted(path).map((r) => String(r.headers['webhook-id'])),
      );
      const lost = events.filter((e) => !delivered.has(`evt_${e.id}`)).length;
      throw new Error(
        `${lost} of ${events.length} committed events never delivered: ${err}\n` +
          (await queueState(JOB_KINDS.webhookDelivery.queue)),
      );
    });

    // Nobody restarted the processes.
    expect([api.pid, worker.pid], 'same processes').to.deep.equal(pids);
    expect(api.running && worker.running, 'API and worker still running').to.equal(true);

    // Kill → runs started again: starts after the kill come in bursts (a turn may be in hand
    // when the master dies and start its runs at once); the pause that follows is the
    // failover's, and its end is when runs started again. The longest pause between starts
    // before the kill is the load's own, for comparison.
    const starts = (
      (await db('run_events')
        .where({ organization_id: tenant.orgId, type: 'run.started' })
        .select('at')
        .orderBy('at')) as Array<{ at: Date }>
    ).map((s) => s.at.getTime());
    let previous = killedAt;
    let longestStartGapMs = 0;
    let startedAgain = NaN;
    for (const at of starts.filter((t) => t >= killedAt)) {
      if (at - previous > longestStartGapMs) {
        longestStartGapMs = at - previous;
        startedAgain = at;
      }
      previous = at;
    }
    expect(Number.isNaN(startedAgain), 'runs started after the kill').to.equal(false);
    const before = starts.filter((t) => t < killedAt);
    const baselineGapMs = Math.max(0, ...before.slice(1).map((t, i) => t - before[i]!));
    const firstStartMs = startedAgain - killedAt;

    const figures: Figures = {
      promotedMs,
      firstStartMs,
      longestStartGapMs,
      baselineGapMs,
      creates,
    };
    report(name, killedAt, figures, refusedCompletions.length, events.length);
    return figures;
  }

  function report(
    name: string,
    killedAt: number,
    f: Figures,
    refusedCompletions: number,
    events: number,
  ): void {
    const byStatus = new Map<number, number>();
    for (const c of f.creates) byStatus.set(c.status, (byStatus.get(c.status) ?? 0) + 1);
    // Create latencies before the kill, while the failover lasted, and after the promotion.
    const phase = (from: number, to: number) => {
      const ms = f.creates
        .filter((c) => c.at - killedAt >= from && c.at - killedAt < to)
        .map((c) => c.ms)
        .sort((a, b) => a - b);
      const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))];
      return `${ms.length} asked, p50 ${at(0.5)} ms, max ${at(1)} ms`;
    };
    process.stdout.write(
      `      [${name}] kill → replica promoted ${f.promotedMs} ms; kill → first run started ` +
        `again ${f.firstStartMs} ms, after a pause of ${f.longestStartGapMs} ms (longest pause ` +
        `before the kill ${f.baselineGapMs} ms)\n` +
        `      [${name}] creates ${f.creates.length}: ` +
        `${[...byStatus].map(([s, n]) => `${n} × ${s || 'no answer'}`).join(', ')}; ` +
        `before the kill ${phase(-Infinity, 0)}; during the failover ` +
        `${phase(0, f.promotedMs)}; after ${phase(f.promotedMs, Infinity)}; ` +
        `completions refused ${refusedCompletions}; events delivered ${events}\n`,
    );
  }

  it('loses nothing when the master of the runs queue dies, and starts runs again', async () => {
    const tenant = await createTenant(testDb());
    await drill('runs-queue', tenant, runsQueueKey, `${testEnv.QUEUE_PREFIX}:{workflow-runs}:*`);
  });

  it('loses nothing when the master of the rate-limit keys dies', async () => {
    // The first drill's dead node started again: it joins as a replica, as a replaced node does.
    for (const server of cluster.stopped()) await cluster.restart(server);
    // A client whose rate-limit keys live on another master than the runs queue, so that this
    // drill is about the rate limiter.
    const queueMaster = await cluster.masterOfKey(runsQueueKey);
    let tenant = await createTenant(testDb());
    for (let i = 0; i < 20; i++) {
      if ((await cluster.masterOfKey(rateLimitKey(tenant))).port !== queueMaster.port) break;
      tenant = await createTenant(testDb());
    }
    await drill(
      'rate-limit',
      tenant,
      rateLimitKey(tenant),
      `${testEnv.QUEUE_PREFIX}:ratelimit:{${tenant.keyId}}:*`,
    );
  });
});
