// Phase "claims": claims per second with two claimants racing for every step. N active runs
// wait at an unclaimed step of a queue page (candidate group `finance`), seeded straight into
// MySQL as the service stores them (one run made by the service's own code, copied by the
// database, with its inbox term rows). Then, `pairs` at a time, two claims of the same step by
// two users are sent together over keep-alive connections to the running API. Measured: steps
// decided per second (N ÷ the time from the first claim to the last answer), claim latency
// p50 / p99, and the result a claimant relies on: exactly one 200 and one 409
// step_already_claimed per step, and as many step.assigned events as steps.
import { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SYSTEM } from '../../src/audit/actor.js';
import type { Db } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import { applyPending, newRun } from '../../src/runs/run-state.js';
import { groupTerm } from '../../src/tasks/task-terms.js';
import { TemplateStore } from '../../src/templates/template-store.js';
import type { Tenant } from '../fixtures.js';
import { httpRequest } from '../http-request.js';
import { insertRuns } from '../insert-runs.js';
import { copyRun } from '../seed-runs.js';
import { round, summarize, type LatencySummary } from '../stats.js';

export interface ClaimsPhaseResult {
  steps: number;
  pairs: number;
  stepsPerSecond: number;
  claimsPerSecond: number;
  latency: LatencySummary;
  /** Steps whose two claims got exactly one 200 and one 409 step_already_claimed. */
  oneWinner: number;
  assignedEvents: number;
}

export async function measureClaims(deps: {
  db: Db;
  tenant: Tenant;
  apiUrl: string;
  steps: number;
  pairs: number;
}): Promise<ClaimsPhaseResult> {
  const { db, tenant } = deps;
  const template = await new TemplateStore(db).insert(tenant.orgId, {
    name: 'Bench queue',
    pages: [{ name: 'Pay', candidateGroups: ['finance'], inputFields: [] }],
  });
  const now = new Date();
  const prototype = applyPending(newRun(newId(), tenant.orgId, template, {}, {}, now, SYSTEM), now);
  await insertRuns(db, [prototype]);
  await copyRun(db, prototype.id, deps.steps - 1, {}, false);
  await db.raw(
    'INSERT INTO run_task_terms (organization_id, term, task_due, task_started, run_seq) ' +
      'SELECT organization_id, ?, task_due, task_started, seq FROM workflow_runs ' +
      'WHERE organization_id = ? AND template_id = ?',
    [groupTerm('finance'), tenant.orgId, template.id],
  );
  const ids = (
    await db('workflow_runs').where({ organization_id: tenant.orgId, template_id: template.id })
  ).map((row: { id: string }) => row.id);

  const agent = new Agent({ keepAlive: true, maxSockets: deps.pairs * 2 });
  const url = `${deps.apiUrl}/claim-workflow-step`;
  const headers = { authorization: tenant.key, 'content-type': 'application/json' };
  const times: number[] = [];
  let oneWinner = 0;
  const claim = async (id: string, user: string) => {
    const started = performance.now();
    const reply = await httpRequest(
      agent,
      url,
      'POST',
      headers,
      JSON.stringify({ workflow_run_id: id, step_name: 'Pay', user_id: user }),
    );
    times.push(performance.now() - started);
    return reply;
  };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: deps.pairs }, async () => {
      for (let i = next++; i < ids.length; i = next++) {
        const id = ids[i]!;
        const [a, b] = await Promise.all([claim(id, 'fay'), claim(id, 'finn')]);
        const statuses = [a.status, b.status].sort();
        const lost = a.status === 409 ? a : b;
        if (
          statuses[0] === 200 &&
          statuses[1] === 409 &&
          (JSON.parse(lost.body) as { code?: string }).code === 'step_already_claimed'
        ) {
          oneWinner++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const [counted] = (await db('run_events')
    .where({ organization_id: tenant.orgId, type: 'step.assigned' })
    .count({ n: '*' })) as Array<{ n: number | string }>;
  return {
    steps: ids.length,
    pairs: deps.pairs,
    stepsPerSecond: round(ids.length / seconds, 0),
    claimsPerSecond: round((2 * ids.length) / seconds, 0),
    latency: summarize(times),
    oneWinner,
    assignedEvents: Number(counted?.n ?? 0),
  };
}
