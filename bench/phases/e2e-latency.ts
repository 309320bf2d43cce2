// Phase 3: end-to-end latency. The API and one real worker on one queue; a paced client sends
// creates at a fixed rate and reads the list until each run shows as started. Then the same
// for the pg-boss peer: its API, its worker, the same client.
import type { Db } from '../../src/db.js';
import type { E2eOptions, E2eResult } from '../e2e-client.js';
import {
  clearQueue,
  clearRuns,
  createBody,
  skipInsightsBacklog,
  type Tenant,
} from '../fixtures.js';
import { peerDatabaseUrl, type PeerDb } from '../peer/peer-db.js';
import { runChildScript, startScript, waitForWorker } from '../processes.js';
import { PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';

export interface E2ePhaseResult {
  service: E2eResult;
  peer?: E2eResult;
}

interface Target {
  name: string;
  apiUrl: string;
  workerScript: string;
  workerEnv: Record<string, string>;
  reset: () => Promise<void>;
}

async function measure(
  settings: BenchSettings,
  tenant: Tenant,
  target: Target,
): Promise<E2eResult> {
  await target.reset();
  const worker = startScript(`${target.name}-worker-phase3`, target.workerScript, {
    env: target.workerEnv,
  });
  try {
    await waitForWorker(worker, target.workerScript);
    const run = (seconds: number) =>
      runChildScript<E2eResult>(
        `${target.name}-e2e-client`,
        'bench/e2e-client.js',
        {
          baseUrl: target.apiUrl,
          key: tenant.key,
          body: createBody(tenant),
          rate: settings.e2eRate,
          seconds,
          pollLimit: 500, // a second of creates at 500/s
          pollIntervalMs: 5,
          settleMs: 2000,
        } satisfies E2eOptions,
        (seconds + 60) * 1000,
      );
    await run(settings.e2eWarmupSeconds); // connections, the worker's first batches
    return await run(settings.e2eSeconds);
  } finally {
    await worker.stop();
    await target.reset();
  }
}

export async function measureEndToEnd(deps: {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  apiUrl: string;
  /** The peer's API and database; without them the peer is not measured. */
  peer?: { apiUrl: string; db: PeerDb };
  /** The service's worker on other servers (the Galera phase): its environment and queues. */
  worker?: { env: Record<string, string>; prefix: string };
}): Promise<E2ePhaseResult> {
  const prefix = deps.worker?.prefix ?? PREFIXES.api;
  const service = await measure(deps.settings, deps.tenant, {
    name: 'service',
    apiUrl: deps.apiUrl,
    workerScript: 'workers/main.js',
    workerEnv: deps.worker?.env ?? serviceEnv(PREFIXES.api),
    reset: async () => {
      await clearRuns(deps.db);
      await clearQueue(prefix);
      // The events of the phases before are taken as folded: the insights' fold folds this
      // phase's flow, as a deployment's keeps up with its own (the catch-up after a backlog is
      // docs/performance.md's insights phase).
      await skipInsightsBacklog(deps.db);
    },
  });
  if (!deps.peer) return { service };
  const { db } = deps.peer;
  const peer = await measure(deps.settings, deps.tenant, {
    name: 'peer',
    apiUrl: deps.peer.apiUrl,
    workerScript: 'bench/baselines/pgboss-worker.js',
    workerEnv: { PEER_DATABASE_URL: peerDatabaseUrl() },
    reset: () => db.reset(),
  });
  return { service, peer };
}
