// Baseline (c): the peer a team would pick instead of this service, built as a careful team
// would build it. Koa and pg-boss on PostgreSQL: per create, the body is read and checked
// against the same JSON Schema, the key is checked (SHA-256, cached 2 s), the template is looked
// up (cached, as templates never change) and the inputs checked against it; then the run row's
// INSERT and pg-boss's send() go into one PostgreSQL transaction (named, so prepared,
// statements) and the caller is answered after its commit. GET /get-workflow-runs?limit=N lists
// the organization's newest runs, for the end-to-end phase's client.
import { SYSTEM } from '../../src/audit/actor.js';
import { createHash } from 'node:crypto';
import { Ajv } from 'ajv';
import Koa from 'koa';
import pg from 'pg';
import { PgBoss, type Db as BossDb } from 'pg-boss';
import { keyFromHeader } from '../../src/auth/api-keys.js';
import { loadConfigOrExit } from '../../src/config.js';
import { newId } from '../../src/lib/ids.js';
import { runSchemas, type CreateRunBody } from '../../src/runs/run-schemas.js';
import { newRun } from '../../src/runs/run-state.js';
import { toResource } from '../../src/runs/run-views.js';
import { templateNames } from '../../src/templates/definition/template-definition.js';
import type { Template } from '../../src/templates/template.js';
import { exitWithParent } from '../child.js';
import { INSERT_PEER_RUN, PEER_QUEUE, peerRunValues } from '../peer/peer-db.js';
import { readJson } from './read-json.js';
import { serveBaseline } from './serve.js';

exitWithParent();
const config = loadConfigOrExit();
const connectionString = process.env.PEER_DATABASE_URL ?? '';
const pool = new pg.Pool({ connectionString, max: 16 });
const boss = new PgBoss({ connectionString, max: 2, supervise: false, schedule: false });
boss.on('error', (err) => process.stderr.write(`pg-boss: ${err.message}\n`));
await boss.start();
const validCreate = new Ajv().compile<CreateRunBody>(runSchemas(config).createBody);

const KEY_CACHE_MS = 2000;
const keys = new Map<string, { organizationId: string | undefined; until: number }>();
async function organizationOf(key: string): Promise<string | undefined> {
  const hash = createHash('sha256').update(key, 'utf8').digest('hex');
  const cached = keys.get(hash);
  if (cached && cached.until > Date.now()) return cached.organizationId;
  const { rows } = await pool.query<{ organization_id: string }>({
    name: 'key',
    text: 'SELECT organization_id FROM api_keys WHERE key_hash = $1',
    values: [hash],
  });
  const organizationId = rows[0]?.organization_id;
  keys.set(hash, { organizationId, until: Date.now() + KEY_CACHE_MS });
  return organizationId;
}

const templates = new Map<string, Template>();
async function templateFor(organizationId: string, id: string): Promise<Template | undefined> {
  let template = templates.get(id);
  if (!template) {
    const { rows } = await pool.query<{
      organization_id: string;
      name: string;
      pages: Template['pages'];
    }>({
      name: 'template',
      text: 'SELECT organization_id, name, pages FROM workflow_templates WHERE id = $1',
      values: [id],
    });
    const row = rows[0];
    if (!row) return undefined;
    template = {
      id,
      organizationId: row.organization_id,
      version: 1,
      name: row.name,
      pages: row.pages,
    };
    templates.set(id, template);
  }
  return template.organizationId === organizationId ? template : undefined;
}

/** pg-boss's statements on the transaction's connection, each prepared once per connection. */
const statementNames = new Map<string, string>();
function onConnection(client: pg.PoolClient): BossDb {
  return {
    executeSql: async (text: string, values?: unknown[]) => {
      let name = statementNames.get(text);
      if (!name) statementNames.set(text, (name = `boss${statementNames.size}`));
      return client.query({ name, text, values });
    },
  };
}

function refuse(ctx: Koa.Context, status: number, message: string): void {
  ctx.status = status;
  ctx.body = { message };
}

async function create(ctx: Koa.Context): Promise<void> {
  const organizationId = await organizationOf(keyFromHeader(ctx.get('authorization')) ?? '');
  if (!organizationId) return refuse(ctx, 401, 'a valid API key is required');
  const body = await readJson(ctx.req).catch(() => undefined);
  if (!validCreate(body)) return refuse(ctx, 400, 'invalid request body');
  const template = await templateFor(organizationId, body.workflow_template_id);
  if (!template) return refuse(ctx, 400, 'workflow template not found');
  const { inputIds, pages } = templateNames(template);
  const assignments = body.user_assignments ?? {};
  if (Object.keys(body.input_fields).some((k) => !inputIds.has(k)))
    return refuse(ctx, 400, 'unknown input field');
  if (Object.keys(assignments).some((p) => !pages.has(p))) return refuse(ctx, 400, 'unknown page');
  const run = newRun(
    newId(),
    organizationId,
    template,
    body.input_fields,
    assignments,
    new Date(),
    SYSTEM,
  );

  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query({ name: 'insert-run', text: INSERT_PEER_RUN, values: peerRunValues(run) });
    await boss.send(PEER_QUEUE, { runId: run.id }, { db: onConnection(client) });
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  ctx.body = toResource(run);
}

async function list(ctx: Koa.Context): Promise<void> {
  const organizationId = await organizationOf(keyFromHeader(ctx.get('authorization')) ?? '');
  if (!organizationId) return refuse(ctx, 401, 'a valid API key is required');
  const limit = Math.min(1000, Math.max(1, Number(ctx.query.limit) || 50));
  const { rows } = await pool.query({
    name: 'list',
    text: `SELECT id, status, last_activity AS "lastActivity" FROM workflow_runs
           WHERE organization_id = $1 ORDER BY seq DESC LIMIT $2`,
    values: [organizationId, limit],
  });
  ctx.body = rows;
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'POST' && ctx.path === '/create-workflow-run') return create(ctx);
  if (ctx.method === 'GET' && ctx.path === '/get-workflow-runs') return list(ctx);
  if (ctx.method === 'GET') ctx.body = { status: 'ok' };
  else refuse(ctx, 404, 'not found');
});
serveBaseline(app, () => Promise.all([boss.stop({ graceful: false }), pool.end()]));
