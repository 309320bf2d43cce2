// Webhook endpoint changes and their audit entries: each change writes exactly its entry, with
// who made it and no secret, in the same transaction as the change, so a change that is
// refused or rolled back leaves no entry, and an entry that cannot be stored undoes its change.
import { expect } from 'chai';
import { ADMIN_CLI, type Actor } from '../../src/audit/actor.js';
import type { NewAuditEntry } from '../../src/audit/audit-events.js';
import { insertIdempotencyRecords } from '../../src/idempotency/idempotency-keys.js';
import { writeTransaction } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import { EndpointStore, type Endpoint } from '../../src/webhooks/endpoint-store.js';
import { auditRowCount, auditRows, decided } from '../support/audit.js';
import { keyActor } from '../support/audit-actions.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { runAdmin, startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

type Json = Record<string, unknown>;

/** The message a promise is rejected with (it must be rejected). */
async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return String((err as Error).message);
  }
  throw new Error('expected a rejection');
}

describe('audit entries of webhook endpoint changes', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let tenant: Tenant;
  let other: Tenant;
  let client: Client;
  let actor: Actor;

  before(async () => {
    api = await startApi({ WEBHOOK_MAX_ENDPOINTS: '2' });
    tenant = await createTenant(testDb());
    other = await createTenant(testDb());
    // What setting the tenants up recorded (their keys and templates) is not this test's.
    await testDb()('audit_log').whereIn('organization_id', [tenant.orgId, other.orgId]).del();
    client = new Client(api.url, tenant.key);
    actor = keyActor(tenant.keyId, 'test');
  });

  after(() => api?.stop());

  const post = (path: string, body: Json, headers: Record<string, string> = {}) =>
    client.call<Json>(path, body, headers);

  async function clear(): Promise<void> {
    await testDb()('webhook_endpoints').where({ organization_id: tenant.orgId }).del();
    await testDb()('audit_log').where({ organization_id: tenant.orgId }).del();
  }

  beforeEach(clear);

  it('writes one entry per change, naming the key that made it, with no secret', async () => {
    const made = await post('/create-webhook-endpoint', {
      url: 'https://hooks.example.com/a',
      events: ['run.failed', 'run.completed'],
      description: 'billing',
    });
    expect(made.status).to.equal(200);
    const id = made.body.id as string;
    const rotated = await post('/rotate-webhook-secret', { id });
    expect(rotated.status).to.equal(200);
    const deleted = await post('/delete-webhook-endpoint', { id });
    expect(deleted.status).to.equal(200);

    const rows = await auditRows(tenant.orgId);
    expect(rows.map(decided)).to.deep.equal([
      {
        type: 'webhook_endpoint.created',
        actor,
        targetId: id,
        data: { url: 'https://hooks.example.com/a', events: ['run.failed', 'run.completed'] },
      },
      {
        type: 'webhook_endpoint.secret_rotated',
        actor,
        targetId: id,
        data: { previousSecretExpiresAt: rotated.body.previousSecretExpiresAt },
      },
      {
        type: 'webhook_endpoint.deleted',
        actor,
        targetId: id,
        data: { url: 'https://hooks.example.com/a' },
      },
    ]);
    expect(rows[0]!.at).to.equal(made.body.createdAt);
    const raw = JSON.stringify(
      await testDb()('audit_log').where({ organization_id: tenant.orgId }),
    );
    for (const secret of [made.body.secret, rotated.body.secret] as string[]) {
      expect(raw).not.to.include(secret);
    }
    expect(raw).not.to.include('whsec_');
    expect(await auditRows(other.orgId)).to.deep.equal([]);
  });

  it('writes nothing for a change that is refused or replayed', async () => {
    const first = await post(
      '/create-webhook-endpoint',
      { url: 'https://hooks.example.com/1' },
      { 'Idempotency-Key': 'make-1' },
    );
    expect(first.status).to.equal(200);
    await post('/create-webhook-endpoint', { url: 'https://hooks.example.com/2' });
    const foreign = await new Client(api.url, other.key).call<Json>('/create-webhook-endpoint', {
      url: 'https://hooks.example.com/other',
    });
    expect(foreign.status).to.equal(200);
    const count = await auditRowCount();

    const refusals: Array<[string, Json, number, string, Record<string, string>?]> = [
      [
        '/create-webhook-endpoint',
        { url: 'https://hooks.example.com/3' },
        409,
        'endpoint_limit_reached',
      ],
      ['/create-webhook-endpoint', { url: 'http://hooks.example.com/3' }, 400, 'invalid_url'],
      [
        '/create-webhook-endpoint',
        { url: 'https://hooks.example.com/3', events: ['nope'] },
        400,
        'invalid_body',
      ],
      ['/delete-webhook-endpoint', { id: 'no-such-endpoint' }, 404, 'endpoint_not_found'],
      ['/delete-webhook-endpoint', { id: foreign.body.id }, 404, 'endpoint_not_found'],
      ['/rotate-webhook-secret', { id: 'no-such-endpoint' }, 404, 'endpoint_not_found'],
      ['/rotate-webhook-secret', { id: foreign.body.id }, 404, 'endpoint_not_found'],
      // The same key and body: the first answer again, nothing done again.
      [
        '/create-webhook-endpoint',
        { url: 'https://hooks.example.com/1' },
        200,
        '',
        { 'Idempotency-Key': 'make-1' },
      ],
    ];
    for (const [path, body, status, code, headers] of refusals) {
      const res = await post(path, body, headers);
      expect(res.status, `${path} ${JSON.stringify(body)}: ${res.text}`).to.equal(status);
      if (code) expect(res.body.code).to.equal(code);
      else expect(res.headers.get('idempotent-replayed')).to.equal('true');
      expect(await auditRowCount(), `${path} ${JSON.stringify(body)}`).to.equal(count);
    }
    expect((await auditRows(tenant.orgId)).map((r) => r.type)).to.deep.equal([
      'webhook_endpoint.created',
      'webhook_endpoint.created',
    ]);
  });

  it('counts concurrent creates at the limit: exactly the endpoints made have entries', async () => {
    const replies = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        post('/create-webhook-endpoint', { url: `https://hooks.example.com/c${n}` }),
      ),
    );
    const made = replies.filter((r) => r.status === 200).map((r) => r.body.id as string);
    expect(made).to.have.length(2);
    expect(replies.filter((r) => r.status === 409)).to.have.length(3);
    const rows = await auditRows(tenant.orgId);
    expect(rows.map((r) => r.targetId).sort()).to.deep.equal([...made].sort());
  });

  it('names the admin CLI as the actor of its webhook commands', async () => {
    // The CLI path is exercised row for row in audit-ledger.test.ts; here, only that the
    // actor is the CLI's and never a key.
    const res = await runAdmin([
      'create-webhook-endpoint',
      '--org',
      tenant.orgId,
      '--url',
      'https://hooks.example.com/cli',
    ]);
    expect(res.code, res.stderr).to.equal(0);
    const made = JSON.parse(res.stdout) as Json;
    expect((await auditRows(tenant.orgId)).map(decided)).to.deep.equal([
      {
        type: 'webhook_endpoint.created',
        actor: ADMIN_CLI,
        targetId: made.id,
        data: { url: 'https://hooks.example.com/cli' },
      },
    ]);
  });

  describe('in the same transaction as the change (the store, against MySQL)', () => {
    const store = () => new EndpointStore(testDb(), 10_000);

    const endpoint = (): Omit<Endpoint, 'fromEventId'> => ({
      id: newId(),
      organizationId: tenant.orgId,
      url: 'https://hooks.example.com/tx',
      description: null,
      eventTypes: undefined,
      secret: 'whsec_dGVzdA==',
      previousSecret: null,
      previousSecretExpiresAt: null,
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
      createdAt: new Date(),
    });

    const entry = (targetId: string): NewAuditEntry => ({
      organizationId: tenant.orgId,
      type: 'webhook_endpoint.deleted',
      actor: ADMIN_CLI,
      targetId,
      data: { url: 'https://hooks.example.com/tx' },
      at: new Date(),
    });
    // An entry MySQL refuses (organization_id is NOT NULL), after the change was sent.
    const unstorable = (targetId: string): NewAuditEntry => ({
      ...entry(targetId),
      organizationId: null as unknown as string,
    });

    const endpointRow = (id: string) => testDb()('webhook_endpoints').where({ id }).first();

    it('an entry that cannot be stored undoes its change: create, delete, rotate', async () => {
      const e = endpoint();
      expect(await failure(store().insert(e, 20, unstorable(e.id)))).to.match(/cannot be null/);
      expect(await endpointRow(e.id), 'no endpoint without its entry').to.equal(undefined);

      await store().insert(e, 20, entry(e.id));
      const before = await endpointRow(e.id);
      expect(await failure(store().delete(tenant.orgId, e.id, () => unstorable(e.id)))).to.match(
        /cannot be null/,
      );
      expect(await endpointRow(e.id), 'not deleted without its entry').to.deep.equal(before);
      expect(
        await failure(
          store().rotateSecret(tenant.orgId, e.id, 'whsec_bmV3', new Date(), () =>
            unstorable(e.id),
          ),
        ),
      ).to.match(/cannot be null/);
      expect(await endpointRow(e.id), 'not rotated without its entry').to.deep.equal(before);
      expect((await auditRows(tenant.orgId)).length, 'only the create that was stored').to.equal(1);
    });

    it('a change that fails after its entry was written leaves neither', async () => {
      // The request's Idempotency-Key is stored last in the transaction; one already stored
      // makes that statement fail, after the endpoint and its entry were written.
      const key = {
        organizationId: tenant.orgId,
        key: `k-${newId()}`,
        endpoint: 'createWebhookEndpoint',
        requestHash: 'h',
        expiresAt: new Date(Date.now() + 3600_000),
        status: 200,
        response: '{}',
      };
      await writeTransaction(testDb(), 10_000, (query) => insertIdempotencyRecords(query, [key]));
      const e = endpoint();
      expect(await failure(store().insert(e, 20, entry(e.id), key))).to.match(/Duplicate/);
      expect(await endpointRow(e.id)).to.equal(undefined);
      expect(await auditRows(tenant.orgId), 'no entry for a change not made').to.deep.equal([]);

      const kept = endpoint();
      await store().insert(kept, 20, entry(kept.id));
      await testDb()('audit_log').where({ organization_id: tenant.orgId }).del();
      expect(
        await failure(store().delete(tenant.orgId, kept.id, () => entry(kept.id), key)),
      ).to.match(/Duplicate/);
      expect(
        await failure(
          store().rotateSecret(
            tenant.orgId,
            kept.id,
            'whsec_bmV3',
            new Date(),
            () => entry(kept.id),
            () => key,
          ),
        ),
      ).to.match(/Duplicate/);
      expect(await endpointRow(kept.id)).to.include({ secret: 'whsec_dGVzdA==' });
      expect(await auditRows(tenant.orgId)).to.deep.equal([]);
    });
  });
});
