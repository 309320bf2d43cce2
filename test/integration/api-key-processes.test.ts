// What one API process does to a key, every API process sees within 2 s: a revocation, an
// expiry and the end of a roll's overlap, on two API processes over one database. Each process
// is polled until it refuses the key; the bound is asserted on the requests themselves: no
// process accepts the key in a request sent more than KEY_CACHE_TTL_MS (2 s) after the change
// was answered (after the expiry, for an expiry: not even 1 ms after).
import { expect } from 'chai';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

type Json = Record<string, unknown>;

/** The documented bound: KEY_CACHE_TTL_MS, at its default. */
const BOUND_MS = 2000;

interface Seen {
  /** When the last request the process accepted was sent. */
  lastAcceptedAt: number | undefined;
  /** When the first request it refused was sent, and with which code. */
  refusedAt: number;
  code: string;
}

/** Polls one process with the key until it refuses it (or gives up after `limitMs`). */
async function pollUntilRefused(api: ApiProcess, key: string, limitMs = 8000): Promise<Seen> {
  let lastAcceptedAt: number | undefined;
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    const sentAt = Date.now();
    const res = await request<Json>(`${api.url}/get-workflow-runs?limit=1`, { key });
    if (res.status === 200) {
      lastAcceptedAt = sentAt;
    } else {
      expect(res.status, res.text).to.equal(403);
      return { lastAcceptedAt, refusedAt: sentAt, code: res.body.code as string };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${api.url} still accepts the key after ${limitMs} ms`);
}

describe('key changes seen by every API process', () => {
  let one: ApiProcess;
  let two: ApiProcess;
  let tenant: Tenant;

  before(async () => {
    const env = { KEY_CACHE_TTL_MS: String(BOUND_MS) };
    [one, two] = await Promise.all([startApi(env), startApi(env)]);
    tenant = await createTenant(testDb());
  });

  after(() => Promise.all([one?.stop(), two?.stop()]));

  async function post(api: ApiProcess, path: string, body: Json): Promise<Json> {
    const res = await request<Json>(`${api.url}${path}`, { key: tenant.key, body });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  /** A new key both processes have looked up (and so hold in their caches). */
  async function cachedKey(body: Json = {}): Promise<{ id: string; key: string }> {
    const made = await post(one, '/create-api-key', { name: 'k', scopes: ['runs:read'], ...body });
    for (const api of [one, two]) {
      const res = await request(`${api.url}/get-workflow-runs?limit=1`, {
        key: made.key as string,
      });
      expect(res.status).to.equal(200);
    }
    return { id: made.id as string, key: made.key as string };
  }

  it('a revocation: at once by the process that made it, within 2 s by the other', async () => {
    const { id, key } = await cachedKey();
    await post(one, '/revoke-api-key', { id });
    const answeredAt = Date.now();
    const [seenOne, seenTwo] = await Promise.all([
      pollUntilRefused(one, key),
      pollUntilRefused(two, key),
    ]);
    expect(seenOne.lastAcceptedAt, 'the revoking process accepted it after the revoke').to.equal(
      undefined,
    );
    for (const seen of [seenOne, seenTwo]) {
      expect(seen.code).to.equal('forbidden');
      if (seen.lastAcceptedAt !== undefined) {
        expect(seen.lastAcceptedAt - answeredAt).to.be.below(BOUND_MS);
      }
      expect(seen.refusedAt - answeredAt).to.be.below(BOUND_MS + 250);
    }
  });

  it('an expiry: by both processes from the expiry on, though both cached the key before', async () => {
    const expiresAt = Date.now() + 2500;
    const { key } = await cachedKey({ expires_at: new Date(expiresAt).toISOString() });
    const [seenOne, seenTwo] = await Promise.all([
      pollUntilRefused(one, key),
      pollUntilRefused(two, key),
    ]);
    for (const seen of [seenOne, seenTwo]) {
      expect(seen.code).to.equal('api_key_expired');
      expect(seen.lastAcceptedAt, 'accepted during its life').to.be.a('number');
      expect(seen.lastAcceptedAt!).to.be.below(expiresAt);
      // Refused from its expiry (a request sent just before may arrive after it), and soon.
      expect(seen.refusedAt).to.be.above(expiresAt - 200);
      expect(seen.refusedAt - expiresAt).to.be.below(BOUND_MS);
    }
  });

  it("the end of a roll's overlap: both accept the old key until then, and refuse it from then", async () => {
    const { id, key } = await cachedKey();
    const rolled = await post(one, '/roll-api-key', { id, overlap_hours: 3 / 3600 }); // 3 s
    const listed = (await request<Json[]>(`${one.url}/get-api-keys`, { key: tenant.key })).body;
    const old = listed.find((k) => k.id === id)!;
    expect(old.replacedBy).to.equal(rolled.id);
    const overlapEnd = new Date(old.expiresAt as string).getTime();
    const [seenOne, seenTwo] = await Promise.all([
      pollUntilRefused(one, key),
      pollUntilRefused(two, key),
    ]);
    for (const seen of [seenOne, seenTwo]) {
      expect(seen.code).to.equal('api_key_expired');
      expect(seen.lastAcceptedAt, 'the old key works during the overlap').to.be.a('number');
      expect(seen.lastAcceptedAt!).to.be.below(overlapEnd);
      expect(seen.refusedAt).to.be.above(overlapEnd - 200);
      expect(seen.refusedAt - overlapEnd).to.be.below(BOUND_MS);
    }
    // The new key works on both.
    for (const api of [one, two]) {
      const res = await request(`${api.url}/get-workflow-runs?limit=1`, {
        key: rolled.key as string,
      });
      expect(res.status).to.equal(200);
    }
  });

  it('a roll without overlap: the old key refused at once by the process that rolled it, within 2 s by the other', async () => {
    const { id, key } = await cachedKey();
    await post(one, '/roll-api-key', { id, overlap_hours: 0 });
    const answeredAt = Date.now();
    const [seenOne, seenTwo] = await Promise.all([
      pollUntilRefused(one, key),
      pollUntilRefused(two, key),
    ]);
    expect(seenOne.lastAcceptedAt).to.equal(undefined);
    for (const seen of [seenOne, seenTwo]) {
      expect(seen.code).to.equal('api_key_expired');
      if (seen.lastAcceptedAt !== undefined) {
        expect(seen.lastAcceptedAt - answeredAt).to.be.below(BOUND_MS);
      }
      expect(seen.refusedAt - answeredAt).to.be.below(BOUND_MS + 250);
    }
  });
});
