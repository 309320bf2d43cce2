// Baseline (b) of the create benchmark: the naive pipeline. Per request: parse the body, one
// INSERT of the run row and one Queue.add of its job, then answer. No key check, no
// validation, no rate limit, no batching: what the storage round trips cost one by one.
import { SYSTEM } from '../../src/audit/actor.js';
import Koa from 'koa';
import { loadConfigOrExit } from '../../src/config.js';
import { createDb } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import { applyRunsJob } from '../../src/jobs/apply-runs.js';
import { RedisConnections } from '../../src/queue.js';
import { toResource } from '../../src/runs/run-views.js';
import { newRun } from '../../src/runs/run-state.js';
import { TemplateStore } from '../../src/templates/template-store.js';
import { exitWithParent } from '../child.js';
import { insertRuns } from '../insert-runs.js';
import { readJson } from './read-json.js';
import { serveBaseline } from './serve.js';

interface NaiveBody {
  input_fields?: Record<string, string>;
  user_assignments?: Record<string, string>;
}

exitWithParent();
const config = loadConfigOrExit();
const db = createDb(config);
const queue = new RedisConnections(config).queue(applyRunsJob, config, 'wrs-bench-naive');
const orgId = process.env.BENCH_ORG_ID ?? '';
const found = await new TemplateStore(db).forNewRun(orgId, process.env.BENCH_TEMPLATE_ID ?? '');
if (!found.ok) throw new Error('BENCH_ORG_ID / BENCH_TEMPLATE_ID name no template');
const { template } = found;

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'GET') {
    ctx.body = { status: 'ok' };
    return;
  }
  const body = (await readJson(ctx.req)) as NaiveBody;
  const run = newRun(
    newId(),
    orgId,
    template,
    body.input_fields ?? {},
    body.user_assignments ?? {},
    new Date(),
    SYSTEM,
  );
  await insertRuns(db, [run]);
  // Its organization's turn, as the service enqueues it (one per organization at a time).
  await queue.add('apply', { organizationId: orgId }, applyRunsJob.jobs([orgId], {})[0]!.opts);
  ctx.body = toResource(run);
});
serveBaseline(app, () => Promise.all([queue.close(), db.destroy()]));
