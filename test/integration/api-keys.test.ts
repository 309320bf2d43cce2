// The API keys over the API: each endpoint's success (checked against its response schema and
// the served document) and every refusal, foreign ids, a key that cannot grant what it lacks,
// the secret shown once and stored nowhere (not even for an Idempotency-Key's replay), the
// audit entries of each change, lastUsedAt, the reconciler's record of expiries and the admin
// CLI's keys.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { ApiKeySchema, ApiKeyWithSecretSchema } from '../../src/auth/key-schemas.js';
import { ALL_SCOPES, type Scope } from '../../src/auth/scopes.js';
import { assertDescribed } from '../support/api-document.js';
import { createKey, createTenant, type Tenant } from '../support/fixtures.js';
import { nextLink, request, type Reply } from '../support/http.js';
import {
  runAdmin,
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { assertServiceSchema } from '../support/spec-schemas.js';
import { sleep, waitFor } from '../support/wait.js';

type Json = Record<string, unknown>;
type KeyView = {
  id: string;
  name?: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  expiresAt?: string;
  lastUsedAt?: string;
  revokedAt?: string;
  replacedBy?: string;
  key?: string;
  /** An error answer's. */
  code?: string;
  message?: string;
  field?: string;
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const inHours = (h: number) => new Date(Date.now() + h * 3_600_000);

describe('API keys over the API', () => {
  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let a: Tenant;
  let b: Tenant;

  before(async () => {
    api = await startApi({ KEY_LAST_USED_FLUSH_MS: '200' });
    [a, b] = [await createTenant(testDb()), await createTenant(testDb())];
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  /** A request whose answer must be described by the served document (route and status). */
  async function call<T = Json>(
    key: string,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply<T>> {
    const res = await request<T>(`${api.url}${path}`, { method, key, body, headers });
    await assertDescribed(api.url, method, path.split('?')[0]!, res.status, res.body);
    return res;
  }

  async function createApiKey(key: string, body: Json, headers: Record<string, string> = {}) {
    const res = await call<KeyView>(key, 'POST', '/create-api-key', body, headers);
    if (res.status === 200) assertServiceSchema(ApiKeyWithSecretSchema, res.body);
    return res;
  }

  async function rollApiKey(key: string, body: Json, headers: Record<string, string> = {}) {
    const res = await call<KeyView>(key, 'POST', '/roll-api-key', body, headers);
    if (res.status === 200) assertServiceSchema(ApiKeyWithSecretSchema, res.body);
    return res;
  }

  async function revokeApiKey(key: string, id: string) {
    const res = await call<KeyView>(key, 'POST', '/revoke-api-key', { id });
    if (res.status === 200) assertServiceSchema(ApiKeySchema, res.body);
    return res;
  }

  async function listKeys(key: string, query = '') {
    const res = await call<KeyView[]>(key, 'GET', `/get-api-keys${query}`);
    expect(res.status, res.text).to.equal(200);
    for (const view of res.body) assertServiceSchema(ApiKeySchema, view);
    return res;
  }

  async function allKeys(key: string): Promise<KeyView[]> {
    const all: KeyView[] = [];
    let query: string | undefined = '?limit=3';
    while (query !== undefined) {
      const res = await listKeys(key, query);
      all.push(...res.body);
      const next = nextLink(res.headers);
      query = next?.slice(next.indexOf('?'));
    }
    return all;
  }

  const status = async (key: string, path = '/get-workflow-runs') =>
    (await request<Json>(`${api.url}${path}`, { key })).status;

  const auditOf = (targetId: string, type?: string) =>
    testDb()('audit_log')
      .where({ target_id: targetId, ...(type ? { type } : {}) })
      .orderBy('seq');

  const counts = async () => ({
    keys: Number((await testDb()('api_keys').count({ n: '*' }))[0]!.n),
    // Expiries are the reconciler's, whenever it passes: not a request's doing.
    audit: Number(
      (await testDb()('audit_log').whereNot({ type: 'api_key.expired' }).count({ n: '*' }))[0]!.n,
    ),
  });

  describe('POST /create-api-key', () => {
    it('makes a key with the scopes and expiry asked, shown once, stored as its hash, audited', async () => {
      const expiresAt = inHours(48).toISOString();
      const res = await createApiKey(a.key, {
        name: 'dashboard',
        scopes: ['templates:read', 'runs:read'],
        expires_at: expiresAt,
      });
      expect(res.status, res.text).to.equal(200);
      const made = res.body;
      expect(made).to.include({ name: 'dashboard', expiresAt });
      expect(made.scopes).to.deep.equal(['runs:read', 'templates:read']); // in SCOPES order
      expect(made.key).to.match(/^wrs_/);
      expect(made.prefix).to.equal(made.key!.slice(0, 10));
      expect(new Date(made.createdAt).getTime()).to.be.closeTo(Date.now(), 60_000);

      // It works for what it holds, and only that.
      expect(await status(made.key!)).to.equal(200);
      const refused = await request<Json>(`${api.url}/get-webhook-endpoints`, { key: made.key });
      expect(refused.status).to.equal(403);
      expect(refused.body.code).to.equal('insufficient_scope');

      const row = await testDb()('api_keys').where({ id: made.id }).first();
      expect(row.key_hash).to.equal(sha256(made.key!));
      expect(JSON.stringify(row)).to.not.include(made.key);
      expect(JSON.parse(row.scopes as string)).to.deep.equal(['runs:read', 'templates:read']);
      expect(JSON.parse(row.created_by as string)).to.deep.equal({
        type: 'api_key',
        id: a.keyId,
        name: 'test',
      });
      expect((row.expires_at as Date).toISOString()).to.equal(expiresAt);

      const audit = await auditOf(made.id);
      expect(audit.map((e) => e.type)).to.deep.equal(['api_key.created']);
      expect(audit[0].organization_id).to.equal(a.orgId);
      expect(audit[0].actor_ref).to.equal(a.keyId);
      expect(JSON.parse(audit[0].data as string)).to.deep.equal({
        name: 'dashboard',
        prefix: made.prefix,
        scopes: ['runs:read', 'templates:read'],
        expiresAt,
      });
      expect(JSON.stringify(audit)).to.not.include(made.key).and.not.include(row.key_hash);
    });

    it('makes a key without an expiry, which is left out of the answer', async () => {
      const res = await createApiKey(a.key, { name: 'forever', scopes: ['audit:read'] });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.not.have.property('expiresAt');
      expect(res.text).to.not.include('null');
    });

    for (const [label, body, field, code] of [
      [
        'an unknown scope',
        { name: 'x', scopes: ['runs:read', 'runs:delete'] },
        '/scopes/1',
        'invalid_body',
      ],
      ['no scopes', { name: 'x', scopes: [] }, '/scopes', 'invalid_body'],
      [
        'a scope twice',
        { name: 'x', scopes: ['runs:read', 'runs:read'] },
        '/scopes',
        'invalid_body',
      ],
      ['no name', { scopes: ['runs:read'] }, '/name', 'invalid_body'],
      ['an empty name', { name: '', scopes: ['runs:read'] }, '/name', 'invalid_body'],
      [
        'a null expiry',
        { name: 'x', scopes: ['runs:read'], expires_at: null },
        '/expires_at',
        'invalid_body',
      ],
      [
        'an expiry that is no time',
        { name: 'x', scopes: ['runs:read'], expires_at: 'tomorrow' },
        '/expires_at',
        'invalid_body',
      ],
      [
        'an expiry in the past',
        { name: 'x', scopes: ['runs:read'], expires_at: '2020-01-01T00:00:00Z' },
        '/expires_at',
        'expiry_in_past',
      ],
      [
        'an expiry of now',
        { name: 'x', scopes: ['runs:read'], expires_at: 'NOW' },
        '/expires_at',
        'expiry_in_past',
      ],
      [
        'an unknown field',
        { name: 'x', scopes: ['runs:read'], secret: 'mine' },
        '/secret',
        'invalid_body',
      ],
    ] as const) {
      it(`refuses ${label} with 400 ${code} naming ${field}, storing nothing`, async () => {
        const before = await counts();
        const sent = { ...body } as Json;
        if (sent.expires_at === 'NOW') sent.expires_at = new Date().toISOString();
        const res = await createApiKey(a.key, sent);
        expect(res.status, res.text).to.equal(400);
        expect(res.body).to.include({ code, field });
        expect(await counts()).to.deep.equal(before);
      });
    }

    it('gives a new key no longer a life than the calling key’s: its expiry by default, 403 expiry_not_held beyond it', async () => {
      const expiresAt = new Date(Date.now() + 3600_000);
      const mortal = await createKey(testDb(), a.orgId, {
        scopes: ['keys:manage', 'runs:read'],
        expiresAt,
      });
      const before = await counts();
      const later = new Date(expiresAt.getTime() + 1000).toISOString();
      const refused = await createApiKey(mortal.key, {
        name: 'outlives',
        scopes: ['runs:read'],
        expires_at: later,
      });
      expect(refused.status, refused.text).to.equal(403);
      expect(refused.body).to.include({ code: 'expiry_not_held', field: '/expires_at' });
      expect(refused.body.message).to.include(expiresAt.toISOString());
      expect(await counts()).to.deep.equal(before);
      // Without an expiry, the new key expires with the key that made it; earlier is fine.
      const inherits = await createApiKey(mortal.key, { name: 'heir', scopes: ['runs:read'] });
      expect(inherits.status, inherits.text).to.equal(200);
      expect(inherits.body.expiresAt).to.equal(expiresAt.toISOString());
      const sooner = new Date(expiresAt.getTime() - 1000).toISOString();
      const shorter = await createApiKey(mortal.key, {
        name: 'shorter',
        scopes: ['runs:read'],
        expires_at: sooner,
      });
      expect(shorter.status, shorter.text).to.equal(200);
      expect(shorter.body.expiresAt).to.equal(sooner);
    });

    it('refuses to grant a scope the calling key does not hold: 403 scope_not_held naming it', async () => {
      const narrow = await createKey(testDb(), a.orgId, { scopes: ['keys:manage', 'runs:read'] });
      const before = await counts();
      const res = await createApiKey(narrow.key, {
        name: 'wider',
        scopes: ['runs:read', 'runs:write'],
      });
      expect(res.status, res.text).to.equal(403);
      expect(res.body).to.include({ code: 'scope_not_held', field: '/scopes/1' });
      expect(res.body.message).to.include("'runs:write'");
      expect(await counts()).to.deep.equal(before);
      // What it holds it may give.
      const ok = await createApiKey(narrow.key, { name: 'reader', scopes: ['runs:read'] });
      expect(ok.status, ok.text).to.equal(200);
      // keys:manage itself is a scope like the others: a key may pass it on only if it holds it.
      const reader = await createKey(testDb(), a.orgId, { scopes: ['runs:read'] });
      const cannot = await request<Json>(`${api.url}/create-api-key`, {
        key: reader.key,
        body: { name: 'x', scopes: ['runs:read'] },
      });
      expect(cannot.body.code).to.equal('insufficient_scope');
    });

    it('replays an Idempotency-Key without the secret: one key, 200 with it, no key field', async () => {
      const headers = { 'Idempotency-Key': `create-${Date.now()}` };
      const body = { name: 'retried', scopes: ['runs:read'] };
      const first = await createApiKey(a.key, body, headers);
      expect(first.status, first.text).to.equal(200);
      const before = await counts();
      const again = await createApiKey(a.key, body, headers);
      // The request succeeded once; its replay says so, with the key made and no secret.
      expect(again.status, again.text).to.equal(200);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      const { key: secret, ...view } = first.body;
      expect(secret).to.be.a('string');
      expect(again.body).to.deep.equal(view);
      expect(again.text).to.not.include(secret);
      expect(await counts()).to.deep.equal(before);
      // The secret is nowhere in the database, not even with the stored answer.
      const stored = await testDb()('idempotency_keys').where({
        idem_key: headers['Idempotency-Key'],
      });
      expect(stored).to.have.length(1);
      expect(JSON.stringify(stored)).to.not.include(first.body.key);
      // Another key of the organization replaying it learns no secret either.
      const other = await createKey(testDb(), a.orgId, { scopes: ['keys:manage'] });
      const replayed = await request(`${api.url}/create-api-key`, {
        key: other.key,
        body,
        headers,
      });
      expect(replayed.status).to.equal(200);
      expect(replayed.text).to.not.include(first.body.key);
    });
  });

  describe('GET /get-api-keys', () => {
    it('lists the organization’s keys newest first, in keyset pages, never a secret or hash', async () => {
      const t = await createTenant(testDb());
      const made: KeyView[] = [];
      for (const name of ['one', 'two', 'three', 'four']) {
        const res = await createApiKey(t.key, { name, scopes: ['runs:read'] });
        made.push(res.body);
      }
      const listed = await allKeys(t.key);
      expect(listed.map((k) => k.id)).to.deep.equal([...made.map((k) => k.id).reverse(), t.keyId]);
      expect(listed[0]).to.deep.equal({
        id: made[3]!.id,
        name: 'four',
        prefix: made[3]!.prefix,
        scopes: ['runs:read'],
        createdAt: made[3]!.createdAt,
      });
      // The tenant's own key: every scope, used by these very requests (lastUsedAt may follow).
      expect(listed.at(-1)!.scopes).to.deep.equal(ALL_SCOPES);
      const hashes = (await testDb()('api_keys').where({ organization_id: t.orgId })).map(
        (r) => r.key_hash as string,
      );
      const text = JSON.stringify(listed);
      for (const secret of [...made.map((k) => k.key!), t.key, ...hashes]) {
        expect(text).to.not.include(secret);
      }
      expect(text).to.not.include('null');
    });

    it('shows only the caller’s organization, whatever the cursor', async () => {
      const mine = (await allKeys(b.key)).map((k) => k.id);
      const theirs = (await allKeys(a.key)).map((k) => k.id);
      expect(mine).to.not.include.members([a.keyId]);
      expect(theirs).to.not.include(b.keyId);
      expect(mine.filter((id) => theirs.includes(id))).to.deep.equal([]);
      // a's cursor used by b pages b's keys only.
      const first = await listKeys(a.key, '?limit=1');
      const next = nextLink(first.headers)!;
      const crossed = await listKeys(b.key, next.slice(next.indexOf('?')));
      for (const k of crossed.body) expect(mine).to.include(k.id);
    });

    it('refuses a bad cursor and an unknown parameter', async () => {
      const bad = await call(a.key, 'GET', '/get-api-keys?cursor=nope!');
      expect(bad.status).to.equal(400);
      const unknown = await call<Json>(a.key, 'GET', '/get-api-keys?org=x');
      expect(unknown.body.code).to.equal('invalid_query');
    });
  });

  describe('POST /revoke-api-key', () => {
    it('revokes a key, refused by this process at once; twice keeps the first time and one entry', async () => {
      const made = (await createApiKey(a.key, { name: 'to revoke', scopes: ['runs:read'] })).body;
      expect(await status(made.key!)).to.equal(200); // cached now
      const res = await revokeApiKey(a.key, made.id);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ id: made.id, name: 'to revoke', prefix: made.prefix });
      expect(res.body.revokedAt).to.be.a('string');
      expect(await status(made.key!)).to.equal(403);
      const again = await revokeApiKey(a.key, made.id);
      expect(again.status).to.equal(200);
      expect(again.body.revokedAt).to.equal(res.body.revokedAt);
      const audit = await auditOf(made.id, 'api_key.revoked');
      expect(audit).to.have.length(1);
      expect(audit[0].actor_ref).to.equal(a.keyId);
      expect(JSON.parse(audit[0].data as string)).to.deep.equal({ prefix: made.prefix });
      const listed = (await allKeys(a.key)).find((k) => k.id === made.id)!;
      expect(listed.revokedAt).to.equal(res.body.revokedAt);
    });

    it('answers 404 api_key_not_found for another organization’s key and an unknown id', async () => {
      const before = await counts();
      for (const id of [b.keyId, 'no-such-key']) {
        const res = await revokeApiKey(a.key, id);
        expect(res.status, id).to.equal(404);
        expect(res.body.code).to.equal('api_key_not_found');
      }
      expect(await status(b.key)).to.equal(200);
      expect(await counts()).to.deep.equal(before);
      expect((await testDb()('api_keys').where({ id: b.keyId }).first()).revoked_at).to.equal(null);
    });
  });

  describe('POST /roll-api-key', () => {
    it('makes a new key with the same name, scopes and expiry; the old one works until the overlap ends', async () => {
      const expiresAt = inHours(100);
      const old = (
        await createApiKey(a.key, {
          name: 'ci',
          scopes: ['runs:read', 'runs:write'],
          expires_at: expiresAt.toISOString(),
        })
      ).body;
      const before = Date.now();
      const res = await rollApiKey(a.key, { id: old.id, overlap_hours: 2 });
      expect(res.status, res.text).to.equal(200);
      const made = res.body;
      expect(made.id).to.not.equal(old.id);
      expect(made.key).to.not.equal(old.key);
      expect(made).to.include({ name: 'ci', expiresAt: expiresAt.toISOString() });
      expect(made.scopes).to.deep.equal(['runs:read', 'runs:write']);
      // Both work during the overlap.
      expect(await status(made.key!)).to.equal(200);
      expect(await status(old.key!)).to.equal(200);
      const listed = await allKeys(a.key);
      const oldNow = listed.find((k) => k.id === old.id)!;
      expect(oldNow.replacedBy).to.equal(made.id);
      const overlapEnd = new Date(oldNow.expiresAt!).getTime();
      expect(overlapEnd).to.be.within(before + 2 * 3_600_000 - 5, Date.now() + 2 * 3_600_000);
      expect(listed.find((k) => k.id === made.id)).to.not.have.property('replacedBy');

      const rolled = await auditOf(old.id, 'api_key.rolled');
      expect(rolled).to.have.length(1);
      expect(JSON.parse(rolled[0].data as string)).to.deep.equal({
        prefix: old.prefix,
        newKeyId: made.id,
        newPrefix: made.prefix,
        expiresAt: oldNow.expiresAt,
      });
      expect((await auditOf(made.id)).map((e) => e.type)).to.deep.equal(['api_key.created']);
    });

    it('keeps the old key’s own expiry when it comes before the overlap ends (default 24 h)', async () => {
      const soon = inHours(1).toISOString();
      const old = (
        await createApiKey(a.key, { name: 'x', scopes: ['runs:read'], expires_at: soon })
      ).body;
      const res = await rollApiKey(a.key, { id: old.id });
      expect(res.status).to.equal(200);
      const oldNow = (await allKeys(a.key)).find((k) => k.id === old.id)!;
      expect(oldNow.expiresAt).to.equal(soon);
      const longer = (await createApiKey(a.key, { name: 'y', scopes: ['runs:read'] })).body;
      const t0 = Date.now();
      await rollApiKey(a.key, { id: longer.id });
      const longerNow = (await allKeys(a.key)).find((k) => k.id === longer.id)!;
      expect(new Date(longerNow.expiresAt!).getTime()).to.be.within(
        t0 + 24 * 3_600_000 - 1000,
        Date.now() + 24 * 3_600_000,
      );
    });

    it('with overlap_hours 0 stops the old key at once (403 api_key_expired)', async () => {
      const old = (await createApiKey(a.key, { name: 'leaked', scopes: ['runs:read'] })).body;
      expect(await status(old.key!)).to.equal(200);
      const res = await rollApiKey(a.key, { id: old.id, overlap_hours: 0 });
      expect(res.status).to.equal(200);
      const refused = await request<Json>(`${api.url}/get-workflow-runs`, { key: old.key });
      expect(refused.status).to.equal(403);
      expect(refused.body.code).to.equal('api_key_expired');
      expect(await status(res.body.key!)).to.equal(200);
    });

    it('refuses a revoked, an expired and an already rolled key with 409 api_key_inactive', async () => {
      const revoked = (await createApiKey(a.key, { name: 'r', scopes: ['runs:read'] })).body;
      await revokeApiKey(a.key, revoked.id);
      const expired = await createKey(testDb(), a.orgId, { expiresAt: new Date(Date.now() + 300) });
      const rolled = (await createApiKey(a.key, { name: 'twice', scopes: ['runs:read'] })).body;
      expect((await rollApiKey(a.key, { id: rolled.id })).status).to.equal(200);
      await sleep(400);
      for (const id of [revoked.id, expired.id, rolled.id]) {
        const before = await counts();
        const res = await rollApiKey(a.key, { id });
        expect(res.status, id).to.equal(409);
        expect(res.body).to.include({ code: 'api_key_inactive', field: '/id' });
        expect(await counts()).to.deep.equal(before);
      }
    });

    it('refuses to roll a key holding a scope the caller lacks (403 scope_not_held): no narrow key mints a wide one', async () => {
      const narrow = await createKey(testDb(), a.orgId, { scopes: ['keys:manage', 'runs:read'] });
      const wide = await createKey(testDb(), a.orgId, { scopes: ALL_SCOPES });
      const before = await counts();
      const res = await rollApiKey(narrow.key, { id: wide.id, overlap_hours: 0 });
      expect(res.status, res.text).to.equal(403);
      expect(res.body.code).to.equal('scope_not_held');
      expect(await counts()).to.deep.equal(before);
      const row = await testDb()('api_keys').where({ id: wide.id }).first();
      expect(row.replaced_by).to.equal(null);
      expect(row.expires_at).to.equal(null);
      expect(await status(wide.key)).to.equal(200);
      // A key within its reach it may roll.
      const reader = await createKey(testDb(), a.orgId, { scopes: ['runs:read'] });
      expect((await rollApiKey(narrow.key, { id: reader.id })).status).to.equal(200);
    });

    it('answers 404 api_key_not_found for another organization’s key and an unknown id', async () => {
      const before = await counts();
      for (const id of [b.keyId, 'no-such-key']) {
        const res = await rollApiKey(a.key, { id, overlap_hours: 0 });
        expect(res.status, id).to.equal(404);
        expect(res.body.code).to.equal('api_key_not_found');
      }
      expect(await counts()).to.deep.equal(before);
      expect(await status(b.key)).to.equal(200);
    });

    for (const overlap of [-1, 168.5, '2']) {
      it(`refuses overlap_hours ${JSON.stringify(overlap)} with 400 naming it`, async () => {
        const res = await rollApiKey(a.key, { id: a.keyId, overlap_hours: overlap });
        expect(res.status).to.equal(400);
        expect(res.body).to.include({
          code: 'invalid_body',
          field: '/overlap_hours',
        });
      });
    }

    it('replays an Idempotency-Key without the secret, and rolls once', async () => {
      const old = (await createApiKey(a.key, { name: 'idem', scopes: ['runs:read'] })).body;
      const headers = { 'Idempotency-Key': `roll-${Date.now()}` };
      const first = await rollApiKey(a.key, { id: old.id }, headers);
      expect(first.status).to.equal(200);
      const again = await rollApiKey(a.key, { id: old.id }, headers);
      expect(again.status).to.equal(200);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.body.id).to.equal(first.body.id);
      expect(again.body).to.not.have.property('key');
      expect(again.text).to.not.include(first.body.key);
      expect(await testDb()('api_keys').where({ name: 'idem' })).to.have.length(2);
    });
  });

  it('records lastUsedAt within the flush interval, without a write per request', async () => {
    const made = (await createApiKey(a.key, { name: 'used', scopes: ['runs:read'] })).body;
    const find = async () => (await allKeys(a.key)).find((k) => k.id === made.id)!;
    expect(await find()).to.not.have.property('lastUsedAt');
    const usedAt = Date.now();
    expect(await status(made.key!)).to.equal(200);
    const first = await waitFor(
      'lastUsedAt to be recorded',
      async () => (await find()).lastUsedAt,
      5000,
    );
    expect(new Date(first).getTime()).to.be.within(usedAt - 5, Date.now());
    await sleep(50);
    for (let i = 0; i < 5; i++) expect(await status(made.key!)).to.equal(200);
    const later = await waitFor(
      'lastUsedAt to move',
      async () => {
        const at = (await find()).lastUsedAt;
        return at && at > first ? at : undefined;
      },
      5000,
    );
    expect(new Date(later).getTime()).to.be.greaterThan(new Date(first).getTime());
  });

  it('writes no lastUsedAt per request, and the uses noted when the API shuts down', async () => {
    const slow = await startApi({ KEY_LAST_USED_FLUSH_MS: '60000' });
    try {
      const key = await createKey(testDb(), a.orgId, { scopes: ['runs:read'] });
      for (let i = 0; i < 5; i++) {
        expect((await request(`${slow.url}/get-workflow-runs`, { key: key.key })).status).to.equal(
          200,
        );
      }
      const usedAt = Date.now();
      await sleep(300);
      const row = async () => testDb()('api_keys').where({ id: key.id }).first();
      expect((await row()).last_used_at, 'written by a request').to.equal(null);
      expect(await slow.stop()).to.equal(0);
      const written = (await row()).last_used_at as Date | null;
      expect(written, 'written at shutdown').to.be.instanceOf(Date);
      expect(written!.getTime()).to.be.within(usedAt - 2000, usedAt);
    } finally {
      await slow.stop();
    }
  });

  it('writes api_key.expired once per expired key from the reconciler (system), none for a key revoked first', async () => {
    const t = await createTenant(testDb());
    const soon = () => new Date(Date.now() + 800);
    const expiring = [
      await createKey(testDb(), t.orgId, { name: 'e1', expiresAt: soon() }),
      await createKey(testDb(), t.orgId, { name: 'e2', expiresAt: soon() }),
    ];
    const revokedFirst = await createKey(testDb(), t.orgId, { name: 'r', expiresAt: soon() });
    expect((await revokeApiKey(t.key, revokedFirst.id)).status).to.equal(200);
    worker = await startWorker();
    await waitFor(
      'expiries recorded',
      async () =>
        (
          await testDb()('api_keys')
            .where({ organization_id: t.orgId })
            .whereNotNull('expiry_recorded_at')
        ).length === 3,
      10000,
    );
    await sleep(1500); // several more passes (RECONCILE_INTERVAL_MS is 500 in tests)
    const entries = await testDb()('audit_log')
      .where({ organization_id: t.orgId, type: 'api_key.expired' })
      .orderBy('seq');
    expect(entries.map((e) => e.target_id).sort()).to.deep.equal(expiring.map((k) => k.id).sort());
    for (const entry of entries) {
      expect(JSON.parse(entry.actor as string)).to.deep.equal({ type: 'system' });
      const key = expiring.find((k) => k.id === entry.target_id)!;
      const row = await testDb()('api_keys').where({ id: key.id }).first();
      expect(JSON.parse(entry.data as string)).to.deep.equal({
        prefix: key.prefix,
        expiresAt: (row.expires_at as Date).toISOString(),
      });
    }
    const refused = await request<Json>(`${api.url}/get-workflow-runs`, { key: expiring[0]!.key });
    expect(refused.body.code).to.equal('api_key_expired');
    await worker.stop();
    worker = undefined;
  });

  describe('the admin CLI', () => {
    const cli = async (args: string[]) => {
      const res = await runAdmin(args);
      return { ...res, json: res.code === 0 ? (JSON.parse(res.stdout) as Json) : undefined };
    };

    it('makes keys with every scope, or those given, with an expiry; audited as the admin CLI', async () => {
      const all = await cli(['create-api-key', '--org', a.orgId, '--name', 'ops']);
      expect(all.code, all.stderr).to.equal(0);
      expect(all.json!.scopes).to.deep.equal(ALL_SCOPES);
      const expiresAt = inHours(5).toISOString();
      const some = await cli([
        'create-api-key',
        '--org',
        a.orgId,
        '--scopes',
        'runs:read,templates:read',
        '--expires-at',
        expiresAt,
      ]);
      expect(some.code, some.stderr).to.equal(0);
      expect(some.json).to.include({ expires_at: expiresAt });
      expect(some.json!.scopes).to.deep.equal(['runs:read', 'templates:read'] satisfies Scope[]);
      expect(await status(some.json!.key as string)).to.equal(200);
      expect(await status(some.json!.key as string, '/get-webhook-endpoints')).to.equal(403);
      const audit = await auditOf(some.json!.id as string);
      expect(audit.map((e) => [e.type, e.actor_ref])).to.deep.equal([
        ['api_key.created', 'admin_cli'],
      ]);
    });

    it('refuses an unknown scope and an expiry in the past', async () => {
      for (const args of [
        ['--scopes', 'runs:read,runs:delete'],
        ['--expires-at', '2020-01-01T00:00:00Z'],
        ['--expires-at', 'soon'],
      ]) {
        const res = await cli(['create-api-key', '--org', a.orgId, ...args]);
        expect(res.code, args.join(' ')).to.equal(2);
        expect(res.stderr).to.match(/scope|expires-at/);
      }
    });

    it('revokes a key with one audit entry by the admin CLI, however often', async () => {
      const key = await createKey(testDb(), a.orgId);
      for (let i = 0; i < 2; i++) {
        const res = await cli(['revoke-api-key', '--id', key.id]);
        expect(res.code, res.stderr).to.equal(0);
      }
      const audit = await auditOf(key.id, 'api_key.revoked');
      expect(audit).to.have.length(1);
      expect(JSON.parse(audit[0].actor as string)).to.deep.equal({ type: 'admin_cli' });
    });
  });
});
