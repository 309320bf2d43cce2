// Scenario 7: isolation. Many organizations whose runs were created interleaved; random
// callers, ids and cursors (their own, other organizations' and forged ones). No row of one
// organization is ever returned to another; every page is exactly the caller's rows before
// the cursor; complete-workflow-step on another organization's run is a 404 that changes
// nothing, and another organization's template cannot be used.
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeCursor, encodeCursor } from '../../src/http/pagination.js';
import { TemplateStore } from '../../src/templates/template-store.js';
import { createBody, createTenant, TWO_STEP_TEMPLATE, type Tenant } from '../support/fixtures.js';
import { Client, nextLink, type Reply } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { RedisServer } from '../support/redis-server.js';
import { testDb } from '../support/root-hooks.js';
import { inPool } from '../support/run-ledger.js';

const ORGS = 8;
const NUM_RUNS = Number(process.env.FUZZ_RUNS || 300);

interface Org {
  tenant: Tenant;
  client: Client;
  /** Runs and templates, newest first, with their seq. */
  runs: Array<{ id: string; seq: number }>;
  templates: Array<{ id: string; seq: number; name: string }>;
  cursors: string[];
}

describe('fault: isolation between organizations', function () {
  this.timeout(120000);

  let redis: RedisServer;
  let api: ApiProcess;
  const orgs: Org[] = [];
  let maxSeq = 0;

  before(async () => {
    redis = await RedisServer.start();
    api = await startApi({ REDIS_URL: redis.url });
    for (let i = 0; i < ORGS; i++) {
      // Template names tell the organizations apart in every summary.
      const definition = { ...TWO_STEP_TEMPLATE, name: `Workflow of org ${i}` };
      const tenant = await createTenant(testDb(), definition);
      for (let t = 0; t < i % 3; t++) {
        await new TemplateStore(testDb()).insert(tenant.orgId, definition);
      }
      orgs.push({
        tenant,
        client: new Client(api.url, tenant.key),
        runs: [],
        templates: [],
        cursors: [],
      });
    }
    // Runs of all organizations created interleaved, so their seqs mix.
    const creations = Array.from({ length: ORGS * 8 }, (_, i) => orgs[(i * 5) % ORGS]!);
    await inPool(creations, 8, async (org) => {
      const res = await org.client.createRun(createBody(org.tenant));
      expect(res.status).to.equal(200);
    });

    const db = testDb();
    for (const org of orgs) {
      const where = { organization_id: org.tenant.orgId };
      org.runs = (
        await db('workflow_runs').select('id', 'seq').where(where).orderBy('seq', 'desc')
      ).map((r: { id: string; seq: number }) => ({ id: r.id, seq: Number(r.seq) }));
      org.templates = (
        await db('workflow_templates as t')
          .join('workflow_template_versions as v', (on) =>
            on.on('v.template_id', 't.id').andOn('v.version', 't.latest_version'),
          )
          .select('t.id', 't.seq', 'v.name')
          .where('t.organization_id', org.tenant.orgId)
          .orderBy('t.seq', 'desc')
      ).map((r: { id: string; seq: number; name: string }) => ({ ...r, seq: Number(r.seq) }));
      maxSeq = Math.max(maxSeq, ...org.runs.map((r) => r.seq));
      // Every cursor the API hands out while paging through the organization's lists.
      for (const list of ['runs', 'templates'] as const) {
        let path: string | undefined = '?limit=2';
        while (path) {
          const res: Reply<Array<Record<string, unknown>>> =
            list === 'runs'
              ? await org.client.listRuns(path)
              : await org.client.listTemplates(path);
          const next = nextLink(res.headers);
          path = next ? `?${next.split('?')[1]}` : undefined;
          if (path) org.cursors.push(new URLSearchParams(path).get('cursor')!);
        }
      }
    }
  });

  after(async () => {
    await api?.stop();
    await redis?.stop();
  });

  /** Every column of every row of the organizations, to show that nothing changed. */
  async function snapshot(): Promise<unknown> {
    const ids = orgs.map((o) => o.tenant.orgId);
    return {
      runs: await testDb()('workflow_runs').whereIn('organization_id', ids).orderBy('seq'),
      templates: await testDb()('workflow_templates')
        .whereIn('organization_id', ids)
        .orderBy('seq'),
      total: await testDb()('workflow_runs').count({ n: '*' }),
    };
  }

  const anyOrg = fc.integer({ min: 0, max: ORGS - 1 });
  const allCursors = () => orgs.flatMap((o) => o.cursors);
  const cursor = () =>
    fc.oneof(
      fc.constant(undefined),
      fc.constantFrom(...allCursors()),
      fc.integer({ min: 1, max: maxSeq + 5 }).map(encodeCursor),
    );

  it('lists only the caller’s rows, exactly those before the cursor', async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        anyOrg,
        fc.constantFrom('runs' as const, 'templates' as const),
        fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
        cursor(),
        async (i, list, limit, at) => {
          const org = orgs[i]!;
          const params = new URLSearchParams();
          if (limit !== undefined) params.set('limit', String(limit));
          if (at !== undefined) params.set('cursor', at);
          const query = params.size ? `?${params}` : '';
          const res =
            list === 'runs'
              ? await org.client.listRuns(query)
              : await org.client.listTemplates(query);
          const what = `org ${i} ${list}${query}`;
          expect(res.status, what).to.equal(200);

          // Exactly the caller's rows before the cursor, newest first, at most limit of them.
          const rows = list === 'runs' ? org.runs : org.templates;
          const beforeSeq = at === undefined ? Infinity : decodeCursor(at);
          const expected = rows.filter((r) => r.seq < beforeSeq).slice(0, limit ?? 100);
          expect(
            res.body.map((r) => r.id),
            what,
          ).to.deep.equal(expected.map((r) => r.id));
          const name = org.tenant.template.name;
          for (const item of res.body) {
            expect(item[list === 'runs' ? 'workflowName' : 'name'], what).to.equal(name);
          }
          // A next page is announced exactly when there is one, and its cursor is the caller's.
          const next = nextLink(res.headers);
          const more = rows.filter((r) => r.seq < beforeSeq).length > expected.length;
          expect(next !== undefined, `next link of ${what}`).to.equal(more);
          if (next) {
            const seq = decodeCursor(new URL(next, 'http://x').searchParams.get('cursor')!);
            expect(seq, what).to.equal(expected[expected.length - 1]!.seq);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
    expect(await snapshot()).to.deep.equal(before);
  });

  it('pages through each organization’s runs, each run once and no other', async () => {
    for (const org of orgs) {
      const seen: string[] = [];
      let query: string | undefined = '?limit=3';
      while (query) {
        const res: Reply<Array<Record<string, unknown>>> = await org.client.listRuns(query);
        expect(res.status).to.equal(200);
        seen.push(...res.body.map((r) => r.id as string));
        const next = nextLink(res.headers);
        query = next ? `?${next.split('?')[1]}` : undefined;
      }
      expect(seen).to.deep.equal(org.runs.map((r) => r.id));
    }
  });

  it('answers 404 to a step completion on another organization’s run, and changes nothing', async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        anyOrg,
        anyOrg,
        fc.nat(),
        fc.option(fc.uuid(), { nil: undefined }),
        async (i, j, k, randomId) => {
          fc.pre(i !== j || randomId !== undefined);
          const target = orgs[j]!.runs;
          const id = randomId ?? target[k % target.length]!.id;
          const res = await orgs[i]!.client.completeStep({ workflow_run_id: id, input_fields: {} });
          expect(res.status, `org ${i} completing ${id}`).to.equal(404);
          expect(res.body.message).to.be.a('string');
          expect(res.text).to.not.include(orgs[j]!.tenant.orgId);
        },
      ),
      { numRuns: NUM_RUNS / 3 },
    );
    expect(await snapshot()).to.deep.equal(before);
  });

  it('refuses another organization’s template, and stores nothing', async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(anyOrg, anyOrg, fc.nat(), async (i, j, k) => {
        fc.pre(i !== j);
        const templates = orgs[j]!.templates;
        const template = templates[k % templates.length]!;
        const res = await orgs[i]!.client.createRun({
          workflow_template_id: template.id,
          input_fields: { item: 'x', amount: '1' },
        });
        expect(res.status, `org ${i} using template of org ${j}`).to.equal(400);
        expect(res.body.message).to.be.a('string');
        expect(res.text).to.not.include(template.name);
      }),
      { numRuns: NUM_RUNS / 3 },
    );
    expect(await snapshot()).to.deep.equal(before);
  });
});
