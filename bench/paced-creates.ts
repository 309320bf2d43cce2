// Creates at a steady rate through the API, open loop (a slow answer does not slow the
// schedule), for the phases that measure one organization's creates while another
// organization's work goes on (fairness, bulk, retention). In-process fetch: at a few hundred
// creates a second it costs the machine little next to what it measures.
import { performance } from 'node:perf_hooks';
import { createBody, type Tenant } from './fixtures.js';
import { sleep } from './processes.js';
import { round, summarize, type LatencySummary } from './stats.js';

/** One round of paced creates. */
export interface CreateRound {
  sent: number;
  created: number;
  errors: number;
  seconds: number;
  /** Each create's answer time, from its send. */
  latency: LatencySummary;
  /** The runs created, in the order they were answered. */
  ids: string[];
}

/**
 * The tenant's creates at `rate` per second until `stop()` says so (checked before each send)
 * or `maxSeconds` have passed; resolves once every create sent has its answer.
 */
export async function pacedCreates(
  apiUrl: string,
  tenant: Tenant,
  rate: number,
  stop: () => boolean,
  maxSeconds: number,
): Promise<CreateRound> {
  const body = createBody(tenant);
  const latencies: number[] = [];
  const ids: string[] = [];
  let errors = 0;
  const sends: Array<Promise<void>> = [];
  const began = Date.now();
  for (let i = 0; !stop() && i < rate * maxSeconds; i++) {
    const due = began + (i * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    const sent = performance.now();
    sends.push(
      fetch(`${apiUrl}/create-workflow-run`, {
        method: 'POST',
        headers: { authorization: tenant.key, 'content-type': 'application/json' },
        body,
      }).then(
        async (res) => {
          const answer = (await res.json()) as { id?: string };
          if (res.status === 200 && answer.id) {
            latencies.push(performance.now() - sent);
            ids.push(answer.id);
          } else errors++;
        },
        () => void errors++,
      ),
    );
  }
  const seconds = (Date.now() - began) / 1000;
  await Promise.all(sends);
  return {
    sent: sends.length,
    created: latencies.length,
    errors,
    seconds: round(seconds, 1),
    latency: summarize(latencies),
    ids,
  };
}
