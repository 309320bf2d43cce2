// GET /get-audit-log: an organization's administrative changes, newest first, in keyset pages
// with a Link header, filtered by type, actor and time; every answer checked against the API
// document and the entry schema; another organization's entries never shown, whatever the
// filter or cursor; each page one range scan of its index.
import { expect } from 'chai';
import { ADMIN_CLI, SYSTEM, type Actor } from '../../src/audit/actor.js';
import { AUDIT_EVENT_TYPES, type NewAuditEntry } from '../../src/audit/audit-events.js';
import { AuditEntrySchema } from '../../src/audit/audit-schemas.js';
import { AuditStore, insertAuditEntries } from '../../src/audit/audit-store.js';
import { ALL_SCOPES } from '../../src/auth/scopes.js';
import { KeyStore } from '../../src/auth/key-store.js';
import { writeTransaction } from '../../src/db.js';
import { auditPage, auditRows, readAuditLog, type AuditEntry } from '../support/audit.js';
import { keyActor } from '../support/audit-actions.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client, nextLink } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { assertServiceSchema } from '../support/spec-schemas.js';

const BASE = Date.UTC(2026, 10, 24, 9, 0, 0);
const minute = (n: number) => new Date(BASE + n * 60_000);

/** A plausible entry of each type, made by `actor` at minute `n`. */
function entryOf(
  organizationId: string,
  type: (typeof AUDIT_EVENT_TYPES)[number],
  actor: Actor,
  n: number,
): NewAuditEntry {
  const common = { organizationId, actor, targetId: `target-${n}`, at: minute(n) };
  const when = minute(n + 60).toISOString();
  switch (type) {
    case 'template.created':
    case 'template.updated':
      return { ...common, type, data: { name: `Form ${n}`, version: n } };
    case 'template.archived':
    case 'template.restored':
      return { ...common, type, data: {} };
    case 'api_key.created':
      return { ...common, type, data: { name: 'ci', prefix: 'wrs_ab', scopes: ['runs:read'] } };
    case 'api_key.revoked':
      return { ...common, type, data: { prefix: 'wrs_ab' } };
    case 'api_key.rolled':
      return {
        ...common,
        type,
        data: { prefix: 'wrs_ab', newKeyId: 'k2', newPrefix: 'wrs_cd', expiresAt: when },
      };
    case 'api_key.expired':
      return { ...common, type, data: { prefix: 'wrs_ab', expiresAt: when } };
    case 'webhook_endpoint.created':
      return { ...common, type, data: { url: 'https://h.example/x', events: ['run.failed'] } };
    case 'webhook_endpoint.deleted':
      return { ...common, type, data: { url: 'https://h.example/x' } };
    case 'webhook_endpoint.secret_rotated':
      return { ...common, type, data: { previousSecretExpiresAt: when } };
    case 'bulk_action.created':
      return { ...common, type, data: { action: 'cancel', filter: { status: 'active' } } };
    case 'schedule.created':
      return {
        ...common,
        type,
        data: { templateId: 't1', cron: '0 9 * * 1-5', timeZone: 'Europe/Berlin', state: 'active' },
      };
    case 'schedule.updated':
      return { ...common, type, data: { changed: ['cron'] } };
    case 'schedule.paused':
      return { ...common, type, data: { note: 'holiday' } };
    case 'schedule.resumed':
      return { ...common, type, data: { note: 'back', skippedWhilePaused: 3 } };
    case 'schedule.deleted':
      return { ...common, type, data: {} };
    case 'schedule.triggered':
      return { ...common, type, data: { scheduledFor: when, outcome: 'fired', runId: 'r1' } };
    case 'schedule.backfilled':
      return { ...common, type, data: { from: when, to: when, times: 3, fired: 3 } };
    case 'organization.settings_updated':
      return { ...common, type, data: { runRetentionDays: n } };
  }
}

/** Stores entries as a change does: with the store's own insert, in a transaction. */
async function seed(entries: NewAuditEntry[]): Promise<void> {
  await writeTransaction(testDb(), 10_000, (query) => insertAuditEntries(query, entries));
}

type Model = Array<AuditEntry & { seq: number }>;

/** What the log must answer for a filter: the model's entries that pass it, newest first. */
function expected(model: Model, filter: Record<string, string>): string[] {
  const types = filter.type?.split(',');
  const ref = (a: Actor) => (a.type === 'api_key' ? a.id : a.type);
  return model
    .filter((e) => !types || types.includes(e.type))
    .filter((e) => filter.actor === undefined || ref(e.actor) === filter.actor)
    .filter((e) => !filter.after || Date.parse(e.at) > Date.parse(filter.after))
    .filter((e) => !filter.before || Date.parse(e.at) < Date.parse(filter.before))
    .sort((a, b) => b.seq - a.seq)
    .map((e) => e.id);
}

const queryOf = (filter: Record<string, string>) => {
  const q = new URLSearchParams(filter).toString();
  return q ? `?${q}` : '';
};

describe('the audit log: GET /get-audit-log', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let a: Tenant;
  let b: Tenant;
  let clientA: Client;
  let clientB: Client;
  let modelA: Model;
  let modelB: Model;
  let otherKeyA: string;

  before(async () => {
    api = await startApi();
    a = await createTenant(testDb());
    b = await createTenant(testDb());
    clientA = new Client(api.url, a.key);
    clientB = new Client(api.url, b.key);
    otherKeyA = (await new KeyStore(testDb(), 0).create(a.orgId, 'ops')).id;
    // What setting the tenants up recorded (their keys and templates) is not this test's.
    await testDb()('audit_log').whereIn('organization_id', [a.orgId, b.orgId]).del();

    // Organization A: every type, four actors, times that do not follow the order of insertion
    // (a change's time and its place in the log may disagree by a little), interleaved with B's.
    const actorsA: Actor[] = [
      keyActor(a.keyId, 'test'),
      keyActor(otherKeyA, 'ops'),
      SYSTEM,
      ADMIN_CLI,
    ];
    const actorsB: Actor[] = [keyActor(b.keyId, 'test'), SYSTEM, ADMIN_CLI];
    const entries: NewAuditEntry[] = [];
    for (let i = 0; i < 47; i++) {
      const type = AUDIT_EVENT_TYPES[(i * 7) % AUDIT_EVENT_TYPES.length]!;
      entries.push(entryOf(a.orgId, type, actorsA[i % actorsA.length]!, i + (i % 3 === 0 ? 2 : 0)));
      if (i % 3 === 1) {
        entries.push(entryOf(b.orgId, AUDIT_EVENT_TYPES[i % 5]!, actorsB[i % actorsB.length]!, i));
      }
    }
    await seed(entries.slice(0, 30));
    await seed(entries.slice(30));
    modelA = await auditRows(a.orgId);
    modelB = await auditRows(b.orgId);
    expect(modelA).to.have.length(47);
    expect(modelB.length).to.be.greaterThan(10);
  });

  after(() => api?.stop());

  it('answers the organization’s entries newest first, in full, in pages linked by Link', async () => {
    const first = await auditPage(clientA, '?limit=5');
    expect(first.status).to.equal(200);
    expect(first.body.map((e) => e.id)).to.deep.equal(expected(modelA, {}).slice(0, 5));
    const newest = modelA.at(-1)!;
    expect(first.body[0]).to.deep.equal({
      id: newest.id,
      type: newest.type,
      at: newest.at,
      actor: newest.actor,
      targetId: newest.targetId,
      data: newest.data,
    });
    const link = first.headers.get('link')!;
    expect(link).to.match(/^<\/get-audit-log\?limit=5&cursor=[A-Za-z0-9_-]+>; rel="next"$/);

    // Every page, following Link: each entry once, newest first, the last page without Link.
    for (const limit of [1, 5, 47, 100]) {
      const all = await readAuditLog(clientA, '', limit);
      expect(
        all.map((e) => e.id),
        `limit ${limit}`,
      ).to.deep.equal(expected(modelA, {}));
    }
    const whole = await auditPage(clientA, '?limit=47');
    expect(nextLink(whole.headers), 'no next page after the last entry').to.equal(undefined);
  });

  it('keeps its pages stable while entries are added', async () => {
    const first = await auditPage(clientA, '?limit=10');
    const next = nextLink(first.headers)!;
    // A change committed between two pages is newer than the cursor: it is not on later pages.
    const extra = entryOf(a.orgId, 'template.archived', SYSTEM, 1000);
    await seed([extra]);
    try {
      const second = await auditPage(clientA, next.slice('/get-audit-log'.length));
      expect(second.body.map((e) => e.id)).to.deep.equal(expected(modelA, {}).slice(10, 20));
    } finally {
      await testDb()('audit_log')
        .where({ organization_id: a.orgId, target_id: 'target-1000' })
        .del();
    }
  });

  it('filters by type, actor, after and before, alone and combined, page by page', async () => {
    const filters: Array<Record<string, string>> = [
      { type: 'template.created' },
      { type: 'webhook_endpoint.deleted' },
      { type: 'api_key.created,webhook_endpoint.created,template.restored' },
      { type: 'api_key.rolled,api_key.rolled' },
      { type: AUDIT_EVENT_TYPES.join(',') },
      { actor: a.keyId },
      { actor: otherKeyA },
      { actor: 'system' },
      { actor: 'admin_cli' },
      { actor: b.keyId },
      { actor: 'nobody' },
      { actor: a.keyId, type: 'template.created,api_key.revoked,webhook_endpoint.created' },
      { actor: 'system', type: 'api_key.expired' },
      { after: minute(20).toISOString() },
      { before: minute(20).toISOString() },
      { after: minute(10).toISOString(), before: minute(30).toISOString() },
      { after: minute(5).toISOString(), type: 'template.updated,api_key.created' },
      { before: minute(40).toISOString(), actor: 'admin_cli' },
      { after: minute(30).toISOString(), before: minute(10).toISOString() },
      { after: '2026-11-24T10:10:00+01:00' }, // an offset: the same instant as 09:10Z
    ];
    let nonEmpty = 0;
    for (const filter of filters) {
      const want = expected(modelA, filter);
      if (want.length > 0) nonEmpty++;
      for (const limit of [2, 100]) {
        const got = await readAuditLog(clientA, queryOf(filter), limit);
        expect(
          got.map((e) => e.id),
          `${JSON.stringify(filter)} limit ${limit}`,
        ).to.deep.equal(want);
      }
    }
    // The model is not trivially empty: most filters select something, and not everything.
    expect(nonEmpty).to.be.at.least(filters.length - 4);
    expect(expected(modelA, { type: 'template.created' }).length).to.be.within(1, 46);
    // `after` is on the entry's time, not its place in the log: minute 2 (seq 1) is after minute 1.
    const afterOne = expected(modelA, { after: minute(1).toISOString() });
    expect(afterOne).to.include(modelA[0]!.id);
  });

  it('refuses a bad filter with 400, naming it', async () => {
    const cases: Array<[string, string, string]> = [
      ['?type=nope', 'invalid_query', '/type'],
      ['?type=template.created,', 'invalid_query', '/type'],
      ['?type=template.created,,api_key.created', 'invalid_query', '/type'],
      ['?type=Template.Created', 'invalid_query', '/type'],
      ['?type=run.created', 'invalid_query', '/type'],
      ['?type=template.created&type=api_key.created', 'invalid_query', '/type'],
      ['?type=', 'invalid_query', '/type'],
      ['?actor=', 'invalid_query', '/actor'],
      [`?actor=${'x'.repeat(65)}`, 'invalid_query', '/actor'],
      ['?actor=a&actor=b', 'invalid_query', '/actor'],
      ['?after=yesterday', 'invalid_query', '/after'],
      ['?after=2026-11-24', 'invalid_query', '/after'],
      ['?before=2026-13-01T00:00:00Z', 'invalid_query', '/before'],
      ['?before=', 'invalid_query', '/before'],
      ['?limit=0', 'invalid_query', '/limit'],
      ['?limit=abc', 'invalid_query', '/limit'],
      ['?cursor=!!', 'invalid_query', '/cursor'],
      ['?cursor=abc', 'invalid_cursor', '/cursor'],
      ['?seq=1', 'invalid_query', '/seq'],
      ['?organization_id=x', 'invalid_query', '/organization_id'],
    ];
    for (const [query, code, field] of cases) {
      const res = await auditPage(clientA, query);
      expect(res.status, `${query}: ${res.text}`).to.equal(400);
      expect(res.body, query).to.deep.include({ code, field });
    }
  });

  it('never shows another organization’s entries, whatever the filter or cursor', async () => {
    const filters: Array<Record<string, string>> = [
      {},
      { actor: a.keyId },
      { actor: otherKeyA },
      { actor: b.keyId },
      { actor: 'system' },
      { actor: 'admin_cli' },
      { type: AUDIT_EVENT_TYPES.join(',') },
      { type: 'template.created' },
      { after: minute(-10).toISOString() },
      { before: minute(10_000).toISOString() },
      { actor: a.keyId, type: AUDIT_EVENT_TYPES.join(',') },
    ];
    const idsA = new Set(modelA.map((e) => e.id));
    const idsB = new Set(modelB.map((e) => e.id));
    for (const filter of filters) {
      const seenByB = await readAuditLog(clientB, queryOf(filter), 3);
      expect(
        seenByB.map((e) => e.id),
        JSON.stringify(filter),
      ).to.deep.equal(expected(modelB, filter));
      expect(
        seenByB.filter((e) => idsA.has(e.id)),
        JSON.stringify(filter),
      ).to.deep.equal([]);
      const seenByA = await readAuditLog(clientA, queryOf(filter), 100);
      expect(
        seenByA.filter((e) => idsB.has(e.id)),
        JSON.stringify(filter),
      ).to.deep.equal([]);
    }
    // A's cursor is a position, not access: B following it sees B's entries before it only.
    const pageA = await auditPage(clientA, '?limit=3');
    const cursorA = nextLink(pageA.headers)!.slice('/get-audit-log'.length);
    const bFromA = await readAuditLog(clientB, cursorA.replace(/^\?limit=3&/, '?'), 3);
    const cursorSeq = modelA.find((e) => e.id === pageA.body[2]!.id)!.seq;
    expect(bFromA.map((e) => e.id)).to.deep.equal(
      modelB
        .filter((e) => e.seq < cursorSeq)
        .sort((x, y) => y.seq - x.seq)
        .map((e) => e.id),
    );
  });

  it('needs audit:read, and shows a key without a name by its id only', async () => {
    const keys = new KeyStore(testDb(), 0);
    const withoutAudit = await keys.create(a.orgId, 'no audit');
    await testDb()('api_keys')
      .where({ id: withoutAudit.id })
      .update({ scopes: JSON.stringify(ALL_SCOPES.filter((s) => s !== 'audit:read')) });
    const refused = await new Client(api.url, withoutAudit.key).call<Record<string, unknown>>(
      '/get-audit-log',
    );
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include({ code: 'insufficient_scope' });
    expect(refused.body.message).to.match(/audit:read/);

    const onlyAudit = await keys.create(a.orgId, null);
    await testDb()('api_keys')
      .where({ id: onlyAudit.id })
      .update({ scopes: JSON.stringify(['audit:read']) });
    const allowed = await auditPage(new Client(api.url, onlyAudit.key), '?limit=1');
    expect(allowed.status).to.equal(200);

    const nameless: Actor = { type: 'api_key', id: onlyAudit.id };
    await seed([entryOf(a.orgId, 'template.archived', nameless, 2000)]);
    try {
      const [entry] = (await auditPage(clientA, `?actor=${onlyAudit.id}`)).body;
      expect(entry!.actor).to.deep.equal({ type: 'api_key', id: onlyAudit.id });
    } finally {
      await testDb()('audit_log')
        .where({ organization_id: a.orgId, target_id: 'target-2000' })
        .del();
    }
  });

  it('describes each type’s data strictly: a client can parse every entry, and only those', () => {
    // Every entry the log answered was checked against AuditEntrySchema and the API document
    // (auditPage); here, that the schema is strict enough to mean something.
    const good = {
      id: 'x',
      type: 'webhook_endpoint.deleted',
      at: new Date(BASE).toISOString(),
      actor: { type: 'admin_cli' },
      targetId: 't',
      data: { url: 'https://h.example/x' },
    };
    assertServiceSchema(AuditEntrySchema, good);
    const bad: Array<[string, unknown]> = [
      ['a secret in the data', { ...good, data: { url: 'u', secret: 'whsec_x' } }],
      ['another type’s data', { ...good, data: { previousSecretExpiresAt: good.at } }],
      ['an unknown type', { ...good, type: 'webhook_endpoint.renamed' }],
      ['a field more', { ...good, organizationId: 'o' }],
      ['no actor', { ...good, actor: undefined }],
      ['an actor of no kind', { ...good, actor: { type: 'root' } }],
      ['a key without its id', { ...good, actor: { type: 'api_key', name: 'n' } }],
      ['a time that is not one', { ...good, at: 'soon' }],
      [
        'a template version that is text',
        {
          ...good,
          type: 'template.updated',
          data: { name: 'n', version: '2' },
        },
      ],
    ];
    for (const [what, entry] of bad) {
      expect(
        () => assertServiceSchema(AuditEntrySchema, JSON.parse(JSON.stringify(entry))),
        what,
      ).to.throw();
    }
  });

  it('reads each page as one range scan of the index its filter names', async () => {
    const statements: Array<{ sql: string; bindings: unknown[] }> = [];
    const db = testDb();
    const record = (q: { sql: string; bindings?: unknown[] }) => {
      if (q.sql.includes('audit_log')) statements.push({ sql: q.sql, bindings: q.bindings ?? [] });
    };
    db.on('query', record);
    const store = new AuditStore(db);
    const deep = modelA[5]!.seq;
    try {
      await store.list(a.orgId, {}, 10, deep);
      await store.list(a.orgId, { types: ['template.created'] }, 10, deep);
      await store.list(a.orgId, { actor: 'system' }, 10, deep);
      await store.list(
        a.orgId,
        { actor: 'system', types: ['api_key.expired', 'template.created'] },
        10,
        deep,
      );
      await store.list(a.orgId, { after: minute(3) }, 10, deep);
    } finally {
      db.off('query', record);
    }
    const indexes = [
      'audit_log_org_seq',
      'audit_log_org_type_seq',
      'audit_log_org_actor_seq',
      'audit_log_org_actor_seq',
      'audit_log_org_seq',
    ];
    expect(statements).to.have.length(indexes.length);
    for (const [i, { sql, bindings }] of statements.entries()) {
      const [plan] = (await db.raw(`EXPLAIN ${sql}`, bindings as never)) as unknown as [
        Array<{ key: string | null; type: string }>,
      ];
      expect(
        plan.map((p) => [p.key, p.type]),
        sql,
      ).to.deep.equal([[indexes[i], 'range']]);
    }
  });
});
