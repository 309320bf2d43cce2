// `npm run bench [-- --quick]`: measures the built service beside baselines started in the same
// run on the same machine, prints a table, writes bench/results.json and ends with a one-line
// JSON summary. It owns a database (wrs_bench_<pid>) and Redis queue prefixes
// (wrs-bench-<pid>*), and removes both (and every process it started) however it ends.
//
// The pg-boss peer runs on its own database (wrs_bench_peer_<pid>) on the local PostgreSQL;
// where none answers, the peer's figures are left out with a note.
//
// Options: --quick (about a minute, smaller sizes),
// --only=create,coldstart,worker,e2e,steady,floor,list,webhooks,fairness,bulk,migrate,schedules,insights,retention,stream,replica,galera,
// procs,rules,claims (some phases; rules: templates with 200 typed fields and 50 rules against the same
// without rules, the API's CPU per create and a worker's per step applied),
// --keep-logs (keep the processes' logs). Environment: BENCH_DATABASE_URL / BENCH_REDIS_URL /
// BENCH_PG_URL (servers to use; the database name is always the bench's own), BENCH_SERVICE_DIST
// (run the API and worker of another build, to compare two versions), BENCH_API_NODE_ARGS /
// BENCH_WORKER_NODE_ARGS (node flags for them, e.g. --cpu-prof), BENCH_LOAD=autocannon (not wrk).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createDb, type Db } from '../src/db.js';
import {
  benchConfig,
  createBenchDatabase,
  createTenant,
  clearQueue,
  deleteRateLimitKeys,
  dropBenchDatabase,
  removeLeftovers,
} from './fixtures.js';
import { MemoryTracker } from './memory.js';
import {
  createPeerDatabase,
  dropPeerDatabase,
  peerDatabasePids,
  peerDatabaseUrl,
  peerUnavailable,
  PeerDb,
} from './peer/peer-db.js';
import { measureCreateThroughput } from './phases/create-throughput.js';
import { measureEndToEnd } from './phases/e2e-latency.js';
import { measureSteadyState } from './phases/steady-state.js';
import { measureWriteFloor } from './phases/write-floor.js';
import { measureBulk } from './phases/bulk.js';
import { measureSchedules } from './phases/schedules.js';
import { measureInsights } from './phases/insights.js';
import { measureFairness } from './phases/fairness.js';
import { measureListScale } from './phases/list-scale.js';
import { measureRetention } from './phases/retention.js';
import { measureWorkerThroughput } from './phases/worker-throughput.js';
import { measureWebhooks } from './phases/webhook-delivery.js';
import { measureStream } from './phases/event-stream.js';
import { measureDrainStream } from './phases/drain-stream.js';
import { measureReplica } from './phases/replica.js';
import { mariadbPairMissing } from '../test/support/mariadb-pair.js';
import { galeraMissing } from '../test/support/galera-cluster.js';
import { measureGalera } from './phases/galera.js';
import { measureApiProcesses } from './phases/api-processes.js';
import { measureColdStart } from './phases/cold-start.js';
import { measureRules, RULES_RATIO_LIMIT, rulesSizes } from './phases/rules.js';
import { measureClaims } from './phases/claims.js';
import {
  freePort,
  killAllNow,
  startScript,
  stopAll,
  waitForHttp,
  type BenchProcess,
} from './processes.js';
import { cpuList } from './cpu.js';
import { evaluate, formatTable, type Figures } from './report.js';
import { BENCH_PREFIX, FULL, LOG_DIR, PREFIXES, QUICK, serviceEnv } from './settings.js';
import { round } from './stats.js';

const settings = process.argv.includes('--quick') ? QUICK : FULL;
// --only=create,worker,e2e,list runs some phases (for working on one); the default is all.
const onlyArg = process.argv.find((a) => a.startsWith('--only='));
const only = new Set(onlyArg ? onlyArg.slice('--only='.length).split(',') : []);
// For profiling: BENCH_API_NODE_ARGS="--cpu-prof" (profiles land in the kept log directory).
const API_NODE_ARGS = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
const keepLogs =
  process.argv.includes('--keep-logs') ||
  API_NODE_ARGS.length > 0 ||
  Boolean(process.env.BENCH_WORKER_NODE_ARGS);
const runs = (
  phase:
    | 'create'
    | 'coldstart'
    | 'worker'
    | 'e2e'
    | 'steady'
    | 'floor'
    | 'list'
    | 'webhooks'
    | 'fairness'
    | 'bulk'
    | 'migrate'
    | 'schedules'
    | 'insights'
    | 'retention'
    | 'stream'
    | 'replica'
    | 'galera'
    | 'procs'
    | 'rules'
    | 'claims',
) => only.size === 0 || only.has(phase);
const RESULTS_PATH = fileURLToPath(new URL('../../bench/results.json', import.meta.url));
const began = Date.now();
const elapsed = () => round((Date.now() - began) / 1000, 1);
const log = (line: string) => process.stdout.write(line + '\n');

async function startHttp(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<{ proc: BenchProcess; url: string }> {
  const port = await freePort();
  const proc = startScript(name, script, { env: { ...env, PORT: String(port) }, nodeArgs });
  const url = `http://127.0.0.1:${port}`;
  // The service's API takes load once /readyz answers 200, as behind a load balancer: before
  // it has warmed up (src/warm-up.ts), the first requests paid for its pools and compilation
  // (the stream phase's first second of creates took up to 0.75 s). The baselines have /healthz.
  await waitForHttp(`${url}/${script === 'src/server.js' ? 'readyz' : 'healthz'}`, proc);
  return { proc, url };
}

/** A pool that allows several statements a query, as the API's batch pool and a worker's. */
const batchPool = (connections: number) =>
  createDb({ ...benchConfig(BENCH_PREFIX), dbPoolMax: connections }, undefined, {
    multipleStatements: true,
  });

let cleaning: Promise<void> | undefined;
/** Runs the clean-up once, however many paths (end, failure, signal) ask for it. */
const cleanUpOnce = () => (cleaning ??= cleanUp());

async function cleanUp(): Promise<void> {
  await stopAll();
  await dropBenchDatabase().catch((err: unknown) => log(`could not drop the database: ${err}`));
  if (peerCreated) {
    await dropPeerDatabase().catch((err: unknown) =>
      log(`could not drop the peer's database: ${err}`),
    );
  }
  try {
    for (const prefix of Object.values(PREFIXES)) await clearQueue(prefix);
    await deleteRateLimitKeys(PREFIXES.api, tenantKeyIds, RATE_LIMIT_WINDOW_MS, began);
  } catch (err) {
    log(`could not delete the Redis keys: ${err}`);
  }
}

let peerCreated = false;

/** The bench's API keys, whose rate-limit counters are deleted at the end. */
const tenantKeyIds: string[] = [];
const RATE_LIMIT_WINDOW_MS = 60_000; // the service's default, which the bench does not change

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    log(`${signal}: stopping and cleaning up (logs kept in ${LOG_DIR})`);
    void cleanUpOnce().finally(() => {
      log(JSON.stringify({ bench: 'workflow-run-service', ok: false, error: signal }));
      process.exit(130);
    });
  });
}

async function main(): Promise<{ figures: Figures; ok: boolean }> {
  mkdirSync(LOG_DIR, { recursive: true });
  log(
    `bench (${settings.mode}) on ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; logs in ${LOG_DIR}`,
  );
  let db: Db | undefined;
  let peerDb: PeerDb | undefined;
  try {
    const others = await removeLeftovers();
    if (others.length > 0) {
      log(`warning: another bench is running (pid ${others.join(', ')}); figures will suffer`);
    }
    db = await createBenchDatabase();
    const tenant = await createTenant(db, 'Bench organization');
    const workerTenant = await createTenant(db, 'Bench worker organization');
    const small = await createTenant(db, 'Bench small organization');
    const big = await createTenant(db, 'Bench big organization');
    const hooked = await createTenant(db, 'Bench webhook organization');
    const backlogged = await createTenant(db, 'Bench organization A (backlog)');
    const steady = await createTenant(db, 'Bench organization B (steady)');
    const cancelled = await createTenant(db, 'Bench organization X (bulk cancel)');
    const creating = await createTenant(db, 'Bench organization Y (creates)');
    const moved = await createTenant(db, 'Bench organization X (bulk migration)');
    const scheduling = await createTenant(db, 'Bench organization (schedules)');
    const expiring = await createTenant(db, 'Bench organization A (retention)');
    const claiming = await createTenant(db, 'Bench organization (claims)');
    const retentionCreating = await createTenant(db, 'Bench organization B (creates)');
    const rulesTenant = await createTenant(db, 'Bench rules organization');
    tenantKeyIds.push(
      ...[tenant, workerTenant, small, big, hooked, backlogged, steady].map((t) => t.keyId),
      ...[cancelled, creating, moved, scheduling, expiring, retentionCreating, rulesTenant].map(
        (t) => t.keyId,
      ),
    );

    // The peer: its database (the same tenants' keys and templates), unless none answers.
    const noPeer = await peerUnavailable();
    if (noPeer) {
      log(`note: the pg-boss peer is left out: ${noPeer}`);
    } else {
      for (const pid of await peerDatabasePids()) {
        if (pid !== process.pid && !others.includes(pid)) await dropPeerDatabase(pid);
      }
      peerCreated = true;
      await createPeerDatabase([tenant, workerTenant]);
      peerDb = new PeerDb();
    }
    const peerServer = peerDb
      ? startHttp('peer', 'bench/baselines/pgboss-server.js', {
          ...serviceEnv(PREFIXES.naive),
          PEER_DATABASE_URL: peerDatabaseUrl(),
        })
      : undefined;

    const apiMetricsPort = await freePort();
    const [api, echo, naive, peer] = await Promise.all([
      startHttp(
        'api',
        'src/server.js',
        { ...serviceEnv(PREFIXES.api), METRICS_PORT: String(apiMetricsPort) },
        API_NODE_ARGS,
      ),
      startHttp('echo', 'bench/baselines/echo-server.js', {}),
      startHttp('naive', 'bench/baselines/naive-server.js', {
        ...serviceEnv(PREFIXES.naive),
        BENCH_ORG_ID: tenant.orgId,
        BENCH_TEMPLATE_ID: tenant.template.id,
      }),
      peerServer,
    ]);
    const memory = new MemoryTracker(api.proc.pid);
    memory.sample('after start');
    const figures: Figures = { cores: cpus().length, memory };

    if (runs('create')) {
      log(
        `\n[1/5] create throughput: ${settings.connections} connections, ${settings.createSeconds} s per run, ${settings.createRounds} round(s) (t=${elapsed()} s)`,
      );
      figures.create = await measureCreateThroughput({
        settings,
        db,
        tenant,
        urls: {
          service: `${api.url}/create-workflow-run`,
          echo: `${echo.url}/create-workflow-run`,
          naive: `${naive.url}/create-workflow-run`,
          ...(peer ? { peer: `${peer.url}/create-workflow-run` } : {}),
        },
        pids: {
          service: api.proc.pid,
          echo: echo.proc.pid,
          naive: naive.proc.pid,
          ...(peer ? { peer: peer.proc.pid } : {}),
        },
        resetPeer: peerDb ? () => peerDb!.reset() : undefined,
        serviceMetricsUrl: `http://127.0.0.1:${apiMetricsPort}/metrics`,
        memory,
        log,
      });
    }
    if (runs('coldstart')) {
      log(
        `\n[coldstart] ${settings.coldStarts} cold start(s): a fresh database, a new API process (no worker), from its first /readyz 200 ${settings.coldRounds} rounds of ${settings.coldSeconds} s at ${settings.connections} connections, each between ${settings.coldEchoSeconds} s echo rounds; target: each round's p99 <= 50 ms where the echo beside it stayed <= 10 ms (t=${elapsed()} s)`,
      );
      figures.coldstart = await measureColdStart({
        settings,
        echoUrl: `${echo.url}/create-workflow-run`,
        apiNodeArgs: API_NODE_ARGS,
        log,
      });
    }
    await echo.proc.stop();
    await naive.proc.stop();
    if (!runs('create')) memory.setBaseline(runs('e2e') ? 'end-to-end phase' : 'list phase');

    if (runs('worker')) {
      log(
        `\n[2/5] worker throughput: backlog of ${settings.backlog} pending runs (t=${elapsed()} s)`,
      );
      // The API is idle here (its RSS stays where the last load left it): a reading after the
      // phase, but no samples for the comparison, which is made between phases under load.
      const pool = batchPool(3);
      try {
        figures.worker = await measureWorkerThroughput({
          settings,
          db,
          pool,
          tenant: workerTenant,
          peer: peerDb,
          log,
        });
      } finally {
        await pool.destroy();
      }
      memory.sample('after worker phase (API idle)');
    }

    if (runs('e2e')) {
      log(
        `\n[3/5] end-to-end latency at ${settings.e2eRate} creates/s for ${settings.e2eSeconds} s (t=${elapsed()} s)`,
      );
      memory.enterPhase('end-to-end phase');
      figures.e2e = await measureEndToEnd({
        settings,
        db,
        tenant,
        apiUrl: api.url,
        peer: peer && peerDb ? { apiUrl: peer.url, db: peerDb } : undefined,
      });
      memory.enterPhase(undefined);
      for (const [name, e] of Object.entries(figures.e2e)) {
        log(
          `  ${name}: ${e.created} runs at ${e.achievedRate}/s: create p50 ${e.createLatency.p50} ms p99 ${e.createLatency.p99} ms;` +
            ` started-and-listed p50 ${e.endToEnd.p50} ms p99 ${e.endToEnd.p99} ms max ${e.endToEnd.max} ms;` +
            ` ${e.unseen} unseen, ${e.createErrors} errors, ${e.polls} list reads (p50 ${e.pollLatency.p50} ms)`,
        );
      }
      memory.sample('after end-to-end phase');
    }

    if (runs('steady')) {
      log(
        `\n[3b/5] steady state: creates at ${settings.connections} connections with the worker running, ${settings.steadySeconds} s per round, ${settings.steadyRounds} round(s) (t=${elapsed()} s)`,
      );
      memory.enterPhase('steady-state phase');
      figures.steady = await measureSteadyState({
        settings,
        db,
        tenant,
        service: { url: `${api.url}/create-workflow-run`, pid: api.proc.pid },
        peer:
          peer && peerDb
            ? { url: `${peer.url}/create-workflow-run`, pid: peer.proc.pid, db: peerDb }
            : undefined,
        log,
      });
      memory.enterPhase(undefined);
      memory.sample('after steady-state phase');
    }

    await peer?.proc.stop();

    if (runs('floor')) {
      log(
        `\n[3c/5] write floor: the service's writes of runs created and started, alone, by batch size (t=${elapsed()} s)`,
      );
      const pool = batchPool(2);
      try {
        figures.floor = await measureWriteFloor({
          db,
          pool,
          tenant,
          runsPerSize: settings.floorRuns,
          log,
        });
      } finally {
        await pool.destroy();
      }
    }

    if (runs('list')) {
      log(
        `\n[4/5] list at scale: ${settings.listSmall} and ${settings.listBig} runs${
          settings.mode === 'quick' ? ' (--quick: the big organization is smaller than 1M)' : ''
        } (t=${elapsed()} s)`,
      );
      memory.enterPhase('list phase');
      figures.list = await measureListScale({ settings, db, small, big, apiUrl: api.url, log });
      memory.enterPhase(undefined);
      for (const [name, page] of Object.entries(figures.list.pages)) {
        log(
          `  ${name.padEnd(10)} ${page.rows} rows  p50 ${page.p50} ms  p99 ${page.p99} ms (median of blocks ${page.blockP99} ms)`,
        );
      }
      for (const [name, reads] of Object.entries(figures.list.taskReads)) {
        log(
          `  inbox ${name}: MySQL read ${reads.small} rows at ${settings.listSmall}, ${reads.big} at ${settings.listBig}`,
        );
      }
      const labelSmall = figures.list.pages['smallFilter:label'];
      const labelBig = figures.list.pages['bigFilter:label'];
      if (labelSmall && labelBig) {
        log(
          `  label-filtered first page, ${settings.listBig} vs ${settings.listSmall} runs: p50 ratio ${(labelBig.p50 / labelSmall.p50).toFixed(2)}`,
        );
      }
      memory.sample('after list phase');
    }
    if (runs('webhooks')) {
      log(
        `\n[5/5] webhooks: a backlog of ${settings.webhookBacklog} events, then ${settings.webhookRate} events/s for ${settings.webhookSeconds} s (t=${elapsed()} s)`,
      );
      memory.enterPhase('webhook phase');
      figures.webhooks = await measureWebhooks({
        settings,
        db,
        tenant: hooked,
        apiUrl: api.url,
        apiPid: api.proc.pid,
        log,
      });
      memory.enterPhase(undefined);
      const w = figures.webhooks;
      log(
        `  change → receipt p50 ${w.latency.p50} ms p99 ${w.latency.p99} ms (bare POST p50 ${w.bareLatency.p50} ms p99 ${w.bareLatency.p99} ms); ${w.missing} missing; CPU µs/delivery ${cpuList(w.rateCpuUsPerDelivery)}`,
      );
      memory.sample('after webhook phase');
    }
    if (runs('fairness')) {
      log(
        `\n[fairness] organization A's backlog of ${settings.fairnessBacklog} runs, organization B creating ${settings.fairnessRate}/s (t=${elapsed()} s)`,
      );
      memory.enterPhase('fairness phase');
      figures.fairness = await measureFairness({
        settings,
        db,
        a: backlogged,
        b: steady,
        apiUrl: api.url,
        log,
      });
      memory.enterPhase(undefined);
      memory.sample('after fairness phase');
    }
    if (runs('bulk')) {
      log(
        `\n[bulk] bulk cancel of ${settings.bulkRuns} runs, another organization creating ${settings.bulkCreateRate}/s (t=${elapsed()} s)`,
      );
      memory.enterPhase('bulk phase');
      figures.bulk = await measureBulk({
        action: 'cancel',
        settings,
        db,
        x: cancelled,
        y: creating,
        apiUrl: api.url,
        log,
      });
      memory.enterPhase(undefined);
      memory.sample('after bulk phase');
    }
    if (runs('migrate')) {
      log(
        `\n[migrate] bulk migration of ${settings.migrateRuns} runs to another template version, another organization creating ${settings.bulkCreateRate}/s (t=${elapsed()} s)`,
      );
      memory.enterPhase('migrate phase');
      figures.migrate = await measureBulk({
        action: 'migrate',
        settings,
        db,
        x: moved,
        y: creating,
        apiUrl: api.url,
        log,
      });
      memory.enterPhase(undefined);
      memory.sample('after migrate phase');
    }
    if (runs('schedules')) {
      log(
        `\n[schedules] ${settings.scheduleBurst} schedules due at once; ${settings.scheduleSteady} every minute for ${settings.scheduleMinutes} minutes beside creates at ${settings.bulkCreateRate}/s (t=${elapsed()} s)`,
      );
      memory.enterPhase('schedules phase');
      figures.schedules = await measureSchedules({
        settings,
        db,
        scheduling,
        creating,
        apiUrl: api.url,
        log,
      });
      memory.enterPhase(undefined);
      memory.sample('after schedules phase');
    }
    if (runs('insights')) {
      log(
        `\n[insights] ${settings.insightsSmall} and ${settings.insightsBig} completed runs' history folded, then get-run-insights timed at each size (t=${elapsed()} s)`,
      );
      memory.enterPhase('insights phase');
      const insightsSmall = await createTenant(db, 'Bench insights organization (small)');
      const insightsBig = await createTenant(db, 'Bench insights organization (big)');
      tenantKeyIds.push(insightsSmall.keyId, insightsBig.keyId);
      figures.insights = await measureInsights({
        settings,
        db,
        small: insightsSmall,
        big: insightsBig,
        apiUrl: api.url,
        log,
      });
      memory.enterPhase(undefined);
      for (const [name, page] of Object.entries(figures.insights.pages)) {
        log(`  ${name.padEnd(14)} p50 ${page.p50} ms  p99 ${page.p99} ms`);
      }
      log(`  big / small p50: ${JSON.stringify(figures.insights.ratios)}`);
      memory.sample('after insights phase');
    }
    if (runs('retention')) {
      log(
        `\n[retention] deleting ${settings.retentionRuns} expired runs of organization A, organization B creating ${settings.retentionCreateRate}/s (t=${elapsed()} s)`,
      );
      memory.enterPhase('retention phase');
      figures.retention = await measureRetention({
        settings,
        db,
        a: expiring,
        b: retentionCreating,
        apiUrl: api.url,
        log,
      });
      memory.enterPhase(undefined);
      memory.sample('after retention phase');
    }
    if (runs('stream')) {
      const seconds = settings.mode === 'quick' ? 5 : 15;
      log(
        `\n[stream] a live event stream on one API process, 500 creates/s for ${seconds} s through another (after a second's lead-in), a quiet echo beside it (t=${elapsed()} s)`,
      );
      const other = await startHttp('api-stream-writer', 'src/server.js', serviceEnv(PREFIXES.api));
      try {
        memory.enterPhase('stream phase');
        figures.stream = await measureStream({
          db,
          tenant,
          streamUrl: api.url,
          writeUrl: other.url,
          echoUrl: echo.url,
          rate: 500,
          seconds,
          log,
        });
        memory.enterPhase(undefined);
      } finally {
        await other.proc.stop();
      }
      const x = figures.stream;
      log(
        `  commit → received on the other process: p50 ${x.fromSent.p50} ms p99 ${x.fromSent.p99} ms from the create sent (${x.fromAnswered.p50} / ${x.fromAnswered.p99} ms from its answer); ${x.created} created, ${x.missing} missing, ${x.duplicates} duplicates; the echo beside it p50 ${x.echo.p50} ms p99 ${x.echo.p99} ms`,
      );
      log(
        `  a live stream while a worker drains a backlog of ${settings.backlog} runs (stored, then the worker started)`,
      );
      memory.enterPhase('stream phase');
      const d = (figures.drainStream = await measureDrainStream({
        db,
        tenant,
        streamUrl: api.url,
        runs: settings.backlog,
      }));
      memory.enterPhase(undefined);
      log(
        `  start applied → run.started received: p50 ${d.latency.p50} ms p99 ${d.latency.p99} ms max ${d.latency.max} ms over ${d.drainSeconds} s; ${d.received} received, ${d.missing} missing, ${d.duplicates} duplicates`,
      );
      memory.sample('after stream phase');
    }
    if (runs('replica')) {
      const missing = mariadbPairMissing();
      if (missing) {
        log(`\n[replica] skipped: it starts a MariaDB primary and replica of its own; ${missing}`);
      } else {
        log(
          `\n[replica] list and run-in-full req/s, primary alone vs with a replica (target: with >= 0.5 x without, no errors) (t=${elapsed()} s)`,
        );
        figures.replica = await measureReplica({
          quick: settings.mode === 'quick',
          startApi: (name, env) =>
            startHttp(name, 'src/server.js', { ...serviceEnv(PREFIXES.api), ...env }),
          log,
        });
      }
    }
    if (runs('galera')) {
      const missing = galeraMissing();
      if (missing) {
        log(`\n[galera] skipped: it starts a Galera cluster of its own; ${missing}`);
      } else {
        log(
          `\n[galera] the service on a three-node Galera cluster (one writer) vs on one server run as its nodes are: commit cost, end-to-end latency, steady state (reported) (t=${elapsed()} s)`,
        );
        figures.galera = await measureGalera({
          settings,
          startApi: (name, env) =>
            startHttp(name, 'src/server.js', { ...serviceEnv(PREFIXES.api), ...env }),
          log,
        });
        const r = figures.galera.ratio;
        log(
          `  galera / single: commit p50 ${r.commitP50}, end-to-end p50 ${r.e2eP50} p99 ${r.e2eP99}, steady runs/s ${r.steady}`,
        );
      }
    }
    if (runs('procs')) {
      log(
        `\n[procs] create throughput with 1 and with 2 API processes (API_PROCESSES), alternated, ${settings.connections} connections, ${settings.createSeconds} s per round; target: 2 ÷ 1 >= 0.9 (t=${elapsed()} s)`,
      );
      const [one, two] = await Promise.all([
        startHttp('api-procs-1', 'src/server.js', serviceEnv(PREFIXES.api)),
        startHttp('api-procs-2', 'src/server.js', {
          ...serviceEnv(PREFIXES.api),
          API_PROCESSES: '2',
        }),
      ]);
      try {
        await two.proc.waitForLog(/"msg":"api processes listening"/);
        figures.procs = await measureApiProcesses({
          settings,
          db,
          tenant,
          apis: {
            1: { url: `${one.url}/create-workflow-run`, pid: one.proc.pid },
            2: { url: `${two.url}/create-workflow-run`, pid: two.proc.pid },
          },
          log,
        });
      } finally {
        await Promise.all([one.proc.stop(), two.proc.stop()]);
      }
    }
    if (runs('claims')) {
      log(
        `\n[claims] ${settings.claimSteps} unclaimed steps, two claimants racing for each, ${settings.claimPairs} pairs at once (t=${elapsed()} s)`,
      );
      figures.claims = await measureClaims({
        db,
        tenant: claiming,
        apiUrl: api.url,
        steps: settings.claimSteps,
        pairs: settings.claimPairs,
      });
      const c = figures.claims;
      log(
        `  ${c.stepsPerSecond} steps decided/s (${c.claimsPerSecond} claims/s); claim p50 ${c.latency.p50} ms p99 ${c.latency.p99} ms; one winner for ${c.oneWinner} of ${c.steps} steps; ${c.assignedEvents} step.assigned events`,
      );
    }
    if (runs('rules')) {
      const sizes = rulesSizes(settings);
      log(
        `\n[rules] creates of a template with 200 typed fields and 50 rules (A), the same fields without rules (B) and untyped (C): ${sizes.createRounds} rounds of ${sizes.createSeconds} s at ${sizes.connections} connections (ABC, CBA, …); then one worker draining ${sizes.drainRuns} step completions of each, ${sizes.drainRounds} times (an API and a worker of the phase's own); targets: API CPU per create and worker CPU per step applied, A ÷ B <= ${RULES_RATIO_LIMIT} (t=${elapsed()} s)`,
      );
      // An API and a worker of its own, each counting the statements it sends.
      figures.rules = await measureRules({
        db,
        tenant: rulesTenant,
        env: serviceEnv(PREFIXES.api),
        apiPrefix: PREFIXES.api,
        workerPrefix: PREFIXES.workerPhase,
        apiNodeArgs: API_NODE_ARGS,
        sizes,
        log,
      });
    }
    log(
      `\nAPI RSS MiB after each phase: ${memory.samples.map((s) => `${s.label} ${s.rssMiB}`).join(', ')}`,
    );
    log(
      `API RSS MiB during each phase (median / max): ${memory
        .phases()
        .map((p) => `${p.phase} ${p.medianMiB} / ${p.maxMiB}`)
        .join(', ')}`,
    );

    const apiErrors = await api.proc.countInLog('"level":"error"');
    if (apiErrors > 0) log(`  note: the API logged ${apiErrors} error line(s); see ${LOG_DIR}`);
    return { figures, ok: true };
  } finally {
    await db?.destroy();
    await peerDb?.close();
  }
}

let exitCode = 0;
let summary: Record<string, unknown>;
try {
  const { figures } = await main();
  const { rows, targets } = evaluate(figures);
  log(`\nresults (${settings.mode}, ${elapsed()} s):\n`);
  log(formatTable(rows));
  log('');
  for (const t of targets) log(`${t.pass ? 'PASS' : 'FAIL'}  ${t.name} = ${t.value} (${t.limit})`);
  const passed = targets.every((t) => t.pass);
  const results = {
    mode: settings.mode,
    finishedAt: new Date().toISOString(),
    seconds: elapsed(),
    machine: { cpus: cpus().length, loadavg: loadavg(), node: process.version },
    settings,
    figures: {
      ...figures,
      memory: { afterPhase: figures.memory.samples, duringPhase: figures.memory.phases() },
    },
    table: rows,
    targets,
    passed,
  };
  writeFileSync(RESULTS_PATH, JSON.stringify(results, null, 2) + '\n');
  log(`\nwrote ${RESULTS_PATH}`);
  summary = {
    bench: 'workflow-run-service',
    mode: settings.mode,
    ok: true,
    passed,
    seconds: elapsed(),
    ...Object.fromEntries(targets.map((t) => [t.name, t.value])),
    failed: targets.filter((t) => !t.pass).map((t) => t.name),
  };
} catch (err) {
  // Interrupted: the phases fail as their processes are stopped; the signal handler reports.
  if (interrupted) await new Promise(() => undefined);
  exitCode = 1;
  log(`\nbench failed: ${(err as Error)?.stack ?? String(err)}`);
  log(`logs kept in ${LOG_DIR}`);
  summary = { bench: 'workflow-run-service', mode: settings.mode, ok: false, error: String(err) };
}
await cleanUpOnce();
if (exitCode === 0 && !keepLogs) rmSync(LOG_DIR, { recursive: true, force: true });
summary.seconds = elapsed();
log(JSON.stringify(summary));
process.exit(exitCode);
