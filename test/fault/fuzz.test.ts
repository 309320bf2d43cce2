// Scenario 6: property-based fuzzing of every endpoint's body, query and headers. Whatever
// arrives, the answer is a 2xx or a 4xx, never a 5xx; every error is JSON with a string
// message; a refused request leaves MySQL exactly as it was; and what is accepted is what was
// asked, for the caller's own organization, and can be applied by a worker afterwards.
//
// The API runs without a worker while fuzzed, so nothing but the fuzzed requests writes to
// MySQL; a worker is started at the end to apply what the fuzzing got accepted.
import { expect } from 'chai';
import fc from 'fast-check';
import { KeyStore } from '../../src/auth/key-store.js';
import { TemplateStore } from '../../src/templates/template-store.js';
import { createTenant, TWO_STEP_TEMPLATE, type Tenant } from '../support/fixtures.js';
import { Client, nextLink } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { sendRaw, type RawReply, type RawRequest } from '../support/raw-http.js';
import { RedisServer } from '../support/redis-server.js';
import { testDb } from '../support/root-hooks.js';
import { createRun, expectLedgerApplied, Ledger, type ToldRun } from '../support/run-ledger.js';

const NUM_RUNS = Number(process.env.FUZZ_RUNS || 300);
const BODY_LIMIT = 16 * 1024;

/** A request to send, with what the test knows about it. */
interface Probe {
  request: RawRequest;
  /** The organization whose live key the request carries, if any. */
  owner: Tenant | undefined;
  /** Why the request must be refused whoever sends it, if it must. */
  mustRefuse?: string;
  /** The JSON body as sent, when it is one. */
  json?: Record<string, unknown>;
}

// ---- what the fuzzing draws from -------------------------------------------------------------

const ascii = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength });

/** Strings as a hostile caller would send them: odd, long, unicode, control characters. */
const hostileString = fc.oneof(
  { weight: 4, arbitrary: ascii(20) },
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.constantFrom(
    '',
    ' ',
    '__proto__',
    'constructor',
    "'; DROP TABLE workflow_runs; --",
    '\u0000',
    '\ud800',
    '𝕏𝕐',
    '<script>alert(1)</script>',
  ),
  // Around the 255-character width of the assignee and name columns.
  fc.string({ unit: 'grapheme-ascii', minLength: 250, maxLength: 260 }),
  fc.string({ unit: 'grapheme', minLength: 250, maxLength: 260 }),
);

const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Top-level fields a caller may not set; a body carrying one must be refused. */
const forbiddenField = fc.record({
  name: fc.constantFrom(
    'organization_id',
    'status',
    'id',
    'run_json',
    'last_activity',
    'template_id',
    'requested_seq',
    'applied_seq',
    '__proto__',
    'constructor',
  ),
  value: fc.jsonValue({ maxDepth: 1 }),
});

/** The value one time in eight, else null. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, arbitrary);
}

/** Sets a property as own data, even __proto__, so JSON.stringify sends it. */
function setOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(target, name, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function bodyOf(fields: Record<string, unknown>, extra: { name: string; value: unknown } | null) {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) setOwn(body, name, value);
  }
  if (extra) setOwn(body, extra.name, extra.value);
  return body;
}

/** Bodies that are not JSON objects, too deep, too big or too wide. */
const hostilePayload = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 50 }),
  anyJson.map((v) => JSON.stringify(v)),
  fc.constantFrom('', 'null', '[]', '"x"', '{', '{"a":', '\u0000', '{}{}', '{"a":1,"a":2}'),
  fc.integer({ min: 100, max: 5000 }).map((d) => '['.repeat(d) + ']'.repeat(d)),
  fc
    .integer({ min: 100, max: 1000 })
    .map((d) => '{"input_fields":'.repeat(d) + '{}' + '}'.repeat(d)),
  fc.constant(JSON.stringify({ input_fields: { item: 'x'.repeat(BODY_LIMIT) } })),
  fc.integer({ min: 201, max: 400 }).map((n) =>
    JSON.stringify({
      input_fields: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v'])),
    }),
  ),
);

/** Stands for "the template of the organization whose key the request carries". */
const OWN_TEMPLATE = '<own template>';

const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'authorization',
  'content-type',
  'expect',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
]);

const otherHeaders = fc
  .dictionary(
    fc.oneof(
      fc.constantFrom('x-request-id', 'content-encoding', 'accept', 'x-forwarded-for', 'cookie'),
      fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
    ),
    fc.oneof(
      ascii(40),
      fc.constantFrom('gzip', 'identity', 'deflate, br', '../../etc/passwd', 'a'.repeat(300)),
    ),
    { maxKeys: 3 },
  )
  .map((h) => Object.fromEntries(Object.entries(h).filter(([k]) => !RESERVED_HEADERS.has(k))));

/** Query strings on the POST endpoints, which take none. */
const postQuery = fc.oneof(
  { weight: 8, arbitrary: fc.constant('') },
  fc.array(fc.tuple(ascii(8), ascii(8)), { maxLength: 3 }).map((p) => `?${new URLSearchParams(p)}`),
  fc.constantFrom('?%', '?organization_id=x', '?__proto__[x]=1', '?limit=1&cursor=x'),
);

const contentType = fc.oneof(
  { weight: 20, arbitrary: fc.constant('application/json') },
  fc.constantFrom(
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/vnd.api+json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    '',
  ),
  ascii(30),
);

describe('fault: fuzzing every endpoint', function () {
  this.timeout(180000);

  let redis: RedisServer;
  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let a: Tenant;
  let b: Tenant;
  let revokedKey: string;
  const ledger = new Ledger();
  const active: ToldRun[] = [];
  const cursors: string[] = [];
  let pendingRunId: string;

  before(async () => {
    redis = await RedisServer.start();
    const env = { REDIS_URL: redis.url, BODY_LIMIT_BYTES: String(BODY_LIMIT) };
    [api, worker] = await Promise.all([startApi(env), startWorker(env)]);
    [a, b] = [await createTenant(testDb()), await createTenant(testDb())];
    const keys = new KeyStore(testDb(), 0);
    const revoked = await keys.create(a.orgId, 'revoked');
    await keys.revoke(revoked.id);
    revokedKey = revoked.key;

    // Active runs in both organizations (targets for complete-workflow-step), then no worker.
    for (const [tenant, n] of [
      [a, 6],
      [b, 3],
    ] as const) {
      const client = new Client(api.url, tenant.key);
      for (let i = 0; i < n; i++) {
        const run = await createRun(client, tenant, ledger, `z${i}`);
        if (run) active.push(run);
      }
    }
    await expectLedgerApplied(testDb(), ledger, { exact: true });
    await worker.stop();
    worker = undefined;
    const pending = await createRun(new Client(api.url, a.key), a, ledger, 'pending');
    pendingRunId = pending!.id;

    // Valid cursors of both organizations' runs and templates (a second template for those).
    for (const tenant of [a, b]) {
      await new TemplateStore(testDb()).insert(tenant.orgId, TWO_STEP_TEMPLATE);
      const client = new Client(api.url, tenant.key);
      for (const res of [
        await client.listRuns('?limit=1'),
        await client.listTemplates('?limit=1'),
      ]) {
        const link = nextLink(res.headers);
        if (!link) throw new Error('expected a next page');
        cursors.push(new URL(link, 'http://x').searchParams.get('cursor')!);
      }
    }
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await redis?.stop();
  });

  // ---- the request parts that depend on the tenants ---------------------------------------

  /** An Authorization header (or none) and whose live key it is. */
  function authorization() {
    const live = (t: Tenant) => (header: string) => ({ header, owner: t as Tenant | undefined });
    const dead = (header: string | undefined) => ({
      header,
      owner: undefined as Tenant | undefined,
    });
    return fc.oneof(
      { weight: 16, arbitrary: fc.constant(a.key).map(live(a)) },
      {
        weight: 2,
        arbitrary: fc
          .constantFrom(`Bearer ${a.key}`, `bearer   ${a.key}`, ` ${a.key} `)
          .map(live(a)),
      },
      { weight: 3, arbitrary: fc.constant(b.key).map(live(b)) },
      fc
        .oneof(
          ascii(60),
          fc.constantFrom(
            '',
            'Bearer',
            'Bearer ',
            `Basic ${Buffer.from('a:b').toString('base64')}`,
            a.key.slice(0, -1),
            `${a.key}x`,
            a.key.toUpperCase(),
            `Bearer ${a.key} ${a.key}`,
            revokedKey,
            'x'.repeat(300),
          ),
        )
        .map(dead),
      { weight: 2, arbitrary: fc.constant(undefined).map(dead) },
    );
  }

  function headersFor(
    auth: { header: string | undefined },
    type: string | undefined,
    other: Record<string, string>,
  ) {
    const headers: Record<string, string> = { ...other };
    if (auth.header !== undefined) headers.authorization = auth.header;
    if (type !== undefined) headers['content-type'] = type;
    return headers;
  }

  const inputKey = fc.oneof(
    fc.constantFrom(
      'item',
      'amount',
      'note',
      'approver',
      '__proto__',
      'constructor',
      'toString',
      '',
    ),
    ascii(10),
  );
  // Mostly near-valid values (the template's own keys, hostile values), so that the fuzzing
  // also reaches the paths that accept and store, not only the first validation.
  const inputFields = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.dictionary(fc.constantFrom('item', 'amount', 'note'), hostileString, {
        maxKeys: 3,
      }),
    },
    { weight: 2, arbitrary: fc.dictionary(inputKey, hostileString, { maxKeys: 5 }) },
    fc.constant({ item: 'Laptop', amount: '1200' }),
    anyJson,
  );

  function createProbe(): fc.Arbitrary<Probe> {
    const body = fc.record({
      workflow_template_id: fc.oneof(
        { weight: 14, arbitrary: fc.constant(OWN_TEMPLATE) },
        fc.constantFrom(a.template.id, b.template.id),
        fc.uuid(),
        ascii(70),
        anyJson,
        fc.constant(undefined),
      ),
      input_fields: fc.oneof({ weight: 14, arbitrary: inputFields }, fc.constant(undefined)),
      user_assignments: fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: fc.constant({ Request: 'alice', Approval: 'bob' }) },
        {
          weight: 5,
          arbitrary: fc.dictionary(fc.constantFrom('Request', 'Approval'), hostileString, {
            maxKeys: 2,
          }),
        },
        fc.dictionary(
          fc.oneof(fc.constantFrom('Request', 'Approval', '__proto__', ''), ascii(10)),
          hostileString,
          { maxKeys: 3 },
        ),
        anyJson,
      ),
      extra: sometimes(forbiddenField),
    });
    return fc
      .tuple(
        authorization(),
        contentType,
        otherHeaders,
        fc.oneof({ weight: 10, arbitrary: body }, hostilePayload),
        fc.boolean(),
        postQuery,
      )
      .map(([auth, type, other, payload, chunked, query]) => {
        const headers = headersFor(auth, type, other);
        if (typeof payload === 'string') {
          return {
            request: {
              method: 'POST',
              path: `/create-workflow-run${query}`,
              headers,
              body: payload,
              chunked,
            },
            owner: auth.owner,
          };
        }
        const { extra, ...fields } = payload;
        if (fields.workflow_template_id === OWN_TEMPLATE) {
          fields.workflow_template_id = (auth.owner ?? a).template.id;
        }
        const json = bodyOf(fields, extra);
        const foreign = auth.owner && fields.workflow_template_id !== auth.owner.template.id;
        return {
          request: {
            method: 'POST',
            path: `/create-workflow-run${query}`,
            headers,
            body: JSON.stringify(json),
            chunked,
          },
          owner: auth.owner,
          json,
          mustRefuse: extra
            ? `the caller may not set ${extra.name}`
            : foreign
              ? 'the template is not one of the caller’s'
              : undefined,
        };
      });
  }

  function completeProbe(): fc.Arbitrary<Probe> {
    const body = fc.record({
      workflow_run_id: fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(...active.map((r) => r.id), pendingRunId) },
        fc.uuid(),
        ascii(70),
        anyJson,
        fc.constant(undefined),
      ),
      input_fields: fc.oneof(
        fc.constant(undefined),
        fc.constant({}),
        fc.constant({ note: 'fuzzed' }),
        inputFields,
      ),
      extra: sometimes(forbiddenField),
    });
    return fc
      .tuple(
        authorization(),
        contentType,
        otherHeaders,
        fc.oneof({ weight: 10, arbitrary: body }, hostilePayload),
        fc.boolean(),
        postQuery,
      )
      .map(([auth, type, other, payload, chunked, query]) => {
        const headers = headersFor(auth, type, other);
        const path = `/complete-workflow-step${query}`;
        if (typeof payload === 'string') {
          return {
            request: { method: 'POST', path, headers, body: payload, chunked },
            owner: auth.owner,
          };
        }
        const { extra, ...fields } = payload;
        const json = bodyOf(fields, extra);
        const id = fields.workflow_run_id;
        const run = typeof id === 'string' ? ledger.runs.get(id) : undefined;
        const foreign = auth.owner && run?.orgId !== auth.owner.orgId;
        return {
          request: { method: 'POST', path, headers, body: JSON.stringify(json), chunked },
          owner: auth.owner,
          json,
          mustRefuse: extra
            ? `the caller may not set ${extra.name}`
            : foreign
              ? 'the run is not one of the caller’s'
              : undefined,
        };
      });
  }

  function listProbe(path: string): fc.Arbitrary<Probe> {
    const limit = fc.oneof(
      fc.integer({ min: -5, max: 1100 }).map(String),
      fc.constantFrom('', '1e2', '0x10', ' 5', '007', '1.5', '99999999999999999999', 'NaN'),
      ascii(10),
    );
    const cursor = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...cursors) },
      fc
        .oneof(
          fc.integer({ min: -10, max: 2 ** 53 }).map((s) => ({ s })),
          anyJson,
        )
        .map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
      ascii(50),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    const pair = fc.oneof(
      { weight: 3, arbitrary: fc.tuple(fc.constant('limit'), limit) },
      { weight: 3, arbitrary: fc.tuple(fc.constant('cursor'), cursor) },
      fc.tuple(fc.constantFrom('cursor[]', 'limit[]', '__proto__', 'organization_id'), ascii(5)),
      fc.tuple(ascii(10), ascii(10)),
    );
    const query = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.array(pair, { maxLength: 3 }).map((p) => new URLSearchParams(p).toString()),
      },
      fc.constantFrom(
        '%',
        'limit=%zz',
        'cursor=%E0%A4%A',
        '&&&',
        '=',
        'limit',
        'cursor=',
        'limit=1&limit=2',
      ),
    );
    return fc
      .tuple(authorization(), otherHeaders, query, sometimes(fc.tuple(contentType, hostilePayload)))
      .map(([auth, other, q, withBody]) => ({
        request: {
          method: 'GET',
          path: `/${path}${q ? `?${q}` : ''}`,
          headers: headersFor(auth, withBody?.[0], other),
          body: withBody?.[1],
        },
        owner: auth.owner,
      }));
  }

  // ---- the property -----------------------------------------------------------------------

  /** Counts of every table and checksums of the fuzzed organizations' rows. */
  async function snapshot(): Promise<string> {
    const orgs = [a.orgId, b.orgId];
    const [rows] = (await testDb().raw(
      `SELECT
        (SELECT COUNT(*) FROM workflow_runs) AS runs,
        (SELECT COUNT(*) FROM workflow_templates) AS templates,
        (SELECT COUNT(*) FROM api_keys) AS api_keys,
        (SELECT COUNT(*) FROM organizations) AS organizations,
        (SELECT COALESCE(SUM(CRC32(CONCAT_WS('|', id, status, run_json, requested_seq,
            applied_seq, IFNULL(pending_since, '-'), last_activity,
            IFNULL(current_step_assignee, '-')))), 0)
          FROM workflow_runs WHERE organization_id IN (?, ?)) AS runs_sum,
        (SELECT COALESCE(SUM(CRC32(CONCAT_WS('|', template_id, version, name, pages))), 0)
          FROM workflow_template_versions WHERE organization_id IN (?, ?)) AS templates_sum,
        (SELECT COALESCE(SUM(CRC32(CONCAT_WS('|', id, key_hash, IFNULL(revoked_at, '-')))), 0)
          FROM api_keys WHERE organization_id IN (?, ?)) AS keys_sum`,
      [...orgs, ...orgs, ...orgs],
    )) as [Array<Record<string, unknown>>];
    return JSON.stringify(rows[0]);
  }

  async function orgRowIds(table: string, orgId: string): Promise<Set<string>> {
    const rows = await testDb()(table).select('id').where({ organization_id: orgId });
    return new Set(rows.map((r: { id: string }) => r.id));
  }

  /** Sends the probe and checks every rule; records what was accepted in the ledger. */
  async function check(probe: Probe): Promise<number> {
    const before = await snapshot();
    const res: RawReply = await sendRaw(api.url, probe.request);
    const what = `${probe.request.method} ${probe.request.path.slice(0, 200)} → ${res.status} ${res.text.slice(0, 200)}`;
    expect(res.status, what).to.be.within(200, 499);
    expect(String(res.headers['content-type']), what).to.match(/^application\/json/);
    const body = JSON.parse(res.text) as unknown;

    if (res.status >= 400) {
      expect((body as { message?: unknown }).message, what).to.be.a('string');
      expect(await snapshot(), `MySQL changed by a refused request: ${what}`).to.equal(before);
      return res.status;
    }
    expect(probe.owner, `accepted without a live key: ${what}`).to.not.equal(undefined);
    expect(probe.mustRefuse, `accepted although ${probe.mustRefuse}: ${what}`).to.equal(undefined);
    const owner = probe.owner!;

    const endpoint = probe.request.path.split('?')[0];
    if (endpoint === '/create-workflow-run') {
      const run = body as { id: string; organization_id: string; template_id: string };
      expect(res.status, what).to.equal(200);
      expect(run.organization_id, what).to.equal(owner.orgId);
      expect(run.template_id, what).to.equal(owner.template.id);
      const json = probe.json as { input_fields: Record<string, string> };
      ledger.created(owner, json, run.id);
    } else if (endpoint === '/complete-workflow-step') {
      expect(res.status, what).to.equal(202);
      const json = probe.json as { workflow_run_id: string; input_fields?: Record<string, string> };
      const run = ledger.runs.get(json.workflow_run_id);
      expect(run?.orgId, what).to.equal(owner.orgId);
      run!.completions.push(json.input_fields ?? {});
    } else {
      expect(res.status, what).to.equal(200);
      expect(body, what).to.be.an('array');
      const own = await orgRowIds(
        endpoint === '/get-workflow-runs' ? 'workflow_runs' : 'workflow_templates',
        owner.orgId,
      );
      for (const item of body as Array<{ id: string }>) {
        expect(own.has(item.id), `row of another organization: ${what}`).to.equal(true);
      }
    }
    return res.status;
  }

  /**
   * Runs the property; then makes sure the fuzzing reached the accepting paths too (a fuzzer
   * whose every request is refused at the door proves little).
   */
  async function fuzz(probes: () => fc.Arbitrary<Probe>, minAccepted: number) {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(probes(), async (probe) => {
        const status = await check(probe);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
      { numRuns: NUM_RUNS, endOnFailure: true },
    );
    const accepted = [...statuses].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0);
    expect(
      accepted,
      `accepted requests (answers: ${JSON.stringify([...statuses])})`,
    ).to.be.at.least(minAccepted);
  }

  it('POST /create-workflow-run', () => fuzz(createProbe, NUM_RUNS / 10));

  it('POST /complete-workflow-step', () => fuzz(completeProbe, 3));

  it('GET /get-workflow-runs', () => fuzz(() => listProbe('get-workflow-runs'), NUM_RUNS / 10));

  it('GET /get-workflow-templates', () =>
    fuzz(() => listProbe('get-workflow-templates'), NUM_RUNS / 10));

  it('applies every run and completion the fuzzing got accepted', async () => {
    expect(ledger.runs.size).to.be.greaterThan(active.length + 1);
    worker = await startWorker({ REDIS_URL: redis.url });
    await expectLedgerApplied(testDb(), ledger, { exact: true, timeoutMs: 30000 });
  });
});
