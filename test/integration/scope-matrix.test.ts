// Least privilege on every route, by construction: the operations are read from the served API
// document (generated from apiRoutes, so a route added later is covered without touching this
// file). For each one, a key holding every scope but the operation's is refused with 403
// insufficient_scope naming that scope, before its body is read; a key holding only that scope
// passes the check. The table of operation → scope in docs/keys.md is held to the same document.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ALL_SCOPES, isScope, type Scope } from '../../src/auth/scopes.js';
import { assertDescribed } from '../support/api-document.js';
import { createKey, createTenant } from '../support/fixtures.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

type Json = Record<string, unknown>;

interface Operation {
  method: 'GET' | 'POST';
  path: string;
  /** The operation's scope; `any key` for the one that describes the calling key itself. */
  scope: string;
}

const ANY_KEY = 'any key';

const root = fileURLToPath(new URL('../../../', import.meta.url)); // from dist/test/integration

function operations(document: Json): Operation[] {
  const found: Operation[] = [];
  for (const [path, byMethod] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(byMethod as Record<string, Json>)) {
      found.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        scope: (operation['x-scope'] as string | undefined) ?? ANY_KEY,
      });
    }
  }
  return found;
}

/** The table of operations in docs/keys.md: "METHOD /path" → scope. */
function documentedScopes(): Map<string, string> {
  const page = readFileSync(join(root, 'docs', 'keys.md'), 'utf8');
  const start = page.indexOf('## API keys and scopes');
  if (start < 0) throw new Error('docs/keys.md has no "## API keys and scopes" section');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  const rows = new Map<string, string>();
  for (const m of section.matchAll(
    /^\| `(GET|POST) (\/[a-z-]+)`\s*\| (?:`([a-z]+:[a-z]+)`|(any key))\s*\|/gm,
  )) {
    rows.set(`${m[1]} ${m[2]}`, m[3] ?? m[4]!);
  }
  return rows;
}

describe('scopes: every operation, by the route list', () => {
  let api: ApiProcess;
  let document: Json;
  let ops: Operation[];
  /** Per scope: a key holding only it, and one holding every other scope. */
  const only = new Map<Scope, string>();
  const allBut = new Map<Scope, string>();

  before(async () => {
    api = await startApi();
    document = (await request<Json>(`${api.url}/openapi.json`)).body;
    ops = operations(document);
    const tenant = await createTenant(testDb());
    for (const scope of ALL_SCOPES) {
      only.set(scope, (await createKey(testDb(), tenant.orgId, { scopes: [scope] })).key);
      const others = ALL_SCOPES.filter((s) => s !== scope);
      allBut.set(scope, (await createKey(testDb(), tenant.orgId, { scopes: others })).key);
    }
  });

  after(() => api?.stop());

  it('reads every operation from the document, each with one known scope', () => {
    expect(ops.length).to.be.greaterThan(15);
    for (const op of ops) {
      const known = isScope(op.scope) || op.path === '/get-current-api-key';
      expect(known, `${op.method} ${op.path}: ${op.scope}`).to.equal(true);
    }
    // The one operation without a scope says so in the document: an empty security list.
    const paths = document.paths as Record<string, Record<string, Json>>;
    expect(paths['/get-current-api-key']!.get!.security).to.deep.equal([{ apiKey: [] }]);
    // The key endpoints are among them (the list is the routes', not this file's).
    expect(ops.map((o) => `${o.method} ${o.path}`)).to.include.members([
      'POST /create-api-key',
      'GET /get-api-keys',
      'POST /revoke-api-key',
      'POST /roll-api-key',
    ]);
  });

  const call = async (op: Operation, key: string) => {
    if (streams(op)) {
      // An event stream stays open: its answer's head is all there is to check.
      const controller = new AbortController();
      const res = await fetch(`${api.url}${op.path}`, {
        headers: { authorization: key },
        signal: controller.signal,
      });
      if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
        controller.abort();
        return { status: res.status, body: undefined as unknown as Json, text: '(a stream)' };
      }
      const text = await res.text();
      return { status: res.status, body: JSON.parse(text) as Json, text };
    }
    return request<Json>(`${api.url}${op.path}`, {
      method: op.method,
      key,
      ...(op.method === 'POST' ? { body: {} } : {}),
    });
  };

  /** Whether the operation's success is an event stream (text/event-stream). */
  const streams = (op: Operation): boolean => {
    const paths = document.paths as Record<string, Record<string, Json>>;
    const ok = (paths[op.path]![op.method.toLowerCase()]!.responses as Record<string, Json>)['200'];
    return Object.hasOwn((ok?.content as Json | undefined) ?? {}, 'text/event-stream');
  };

  it('refuses a key lacking the scope of the operation with 403 insufficient_scope naming it, on every operation', async () => {
    for (const op of ops.filter((o) => o.scope !== ANY_KEY)) {
      const res = await call(op, allBut.get(op.scope as Scope)!);
      const what = `${op.method} ${op.path} without ${op.scope}`;
      expect(res.status, what).to.equal(403);
      expect(res.body.code, what).to.equal('insufficient_scope');
      expect(res.body.message, what).to.include(`'${op.scope}'`);
      await assertDescribed(api.url, op.method, op.path, res.status, res.body);
    }
  });

  it('lets a key holding only the scope of the operation past the check, on every operation', async () => {
    for (const op of ops) {
      // The scope-less operation is called with the narrowest key of all, for each scope.
      if (op.scope === ANY_KEY) {
        for (const scope of ALL_SCOPES) {
          const res = await call(op, only.get(scope)!);
          expect(res.status, `${op.path} with only ${scope}`).to.equal(200);
          expect(res.body.scopes, `${op.path} with only ${scope}`).to.deep.equal([scope]);
          await assertDescribed(api.url, op.method, op.path, res.status, res.body);
        }
        continue;
      }
      const res = await call(op, only.get(op.scope as Scope)!);
      const what = `${op.method} ${op.path} with only ${op.scope}: ${res.status} ${res.text.slice(0, 200)}`;
      // An empty body or query may well be refused (400, 404): only not for its scope.
      expect(res.body?.code, what).to.not.equal('insufficient_scope');
      expect(res.status, what).to.be.below(500);
      if (res.text === '(a stream)') expect(streams(op), what).to.equal(true);
      else await assertDescribed(api.url, op.method, op.path, res.status, res.body);
    }
  });

  it('are listed in docs/keys.md, operation by operation, exactly as the routes declare them', () => {
    const table = documentedScopes();
    const routes = new Map(ops.map((op) => [`${op.method} ${op.path}`, op.scope]));
    expect(Object.fromEntries([...table].sort())).to.deep.equal(
      Object.fromEntries([...routes].sort()),
    );
  });
});
