// Phase 3: end-to-end latency. The API and one real worker on one queue; a paced client sends
// creates at a fixed rate and reads the list until each run shows as started.
import type { Db } from '../../src/db.js';
import type { E2eOptions, E2eResult } from '../e2e-client.js';
import { clearQueue, clearRuns, createBody, type Tenant } from '../fixtures.js';
import { runChildScript, startScript } from '../processes.js';
import { PREFIXES, serviceEnv, type BenchSettings } from '../settings.js';

export async function measureEndToEnd(deps: {
  settings: BenchSettings;
  db: Db;
  tenant: Tenant;
  apiUrl: string;
}): Promise<E2eResult> {
  await clearRuns(deps.db);
  await clearQueue(PREFIXES.api);
  const worker = startScript('worker-phase3', 'workers/main.js', {
    env: serviceEnv(PREFIXES.api),
  });
  try {
    await worker.waitForLog(/"msg":"worker started"/);
    const run = (seconds: number) =>
      runChildScript<E2eResult>(
        'e2e-client',
        'bench/e2e-client.js',
        {
          baseUrl: deps.apiUrl,
          key: deps.tenant.key,
          body: createBody(deps.tenant),
          rate: deps.settings.e2eRate,
          seconds,
          pollLimit: 500, // a second of creates at 500/s
          pollIntervalMs: 5,
          settleMs: 2000,
        } satisfies E2eOptions,
        (seconds + 60) * 1000,
      );
    await run(deps.settings.e2eWarmupSeconds); // connections, the worker's first batches
    return await run(deps.settings.e2eSeconds);
  } finally {
    await worker.stop();
    await clearRuns(deps.db);
    await clearQueue(PREFIXES.api);
  }
}
