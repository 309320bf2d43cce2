// Every error code a client can meet is documented, with its status, in the table of docs/api.md
// (the API guide, under Errors) and in the API document: the codes the source can emit are collected (the table of codes in
// src/http/errors.ts, which every error the service makes must name, and any code written
// into a body by hand anywhere in src/), and each must be in both places.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ERRORS, GENERAL_ERROR_CODES } from '../../src/http/errors.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';

type Json = Record<string, unknown>;

const root = fileURLToPath(new URL('../../../', import.meta.url)); // from dist/test/integration

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Codes the source names where it refuses or answers an error. */
function codesInSource(): Set<string> {
  const patterns = [
    /new (?:DomainError|HttpError)\(\s*'([a-z0-9_]+)'/g,
    /errorBody\(\s*'([a-z0-9_]+)'/g,
    /\bcode: '([a-z0-9_]+)'/g,
  ];
  // (A function that returns a code, as request-context's frameworkCode, is typed ErrorCode:
  // the compiler holds it to the table.)
  const found = new Set<string>();
  for (const file of [...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'workers'))]) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns) for (const m of text.matchAll(pattern)) found.add(m[1]!);
  }
  return found;
}

/** The table of error codes in docs/api.md: code → status. */
function documentedCodes(): Map<string, number> {
  const guide = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
  const start = guide.indexOf('### Errors');
  if (start < 0) throw new Error('docs/api.md has no "### Errors" section');
  const section = guide.slice(start);
  const rows = new Map<string, number>();
  for (const m of section.matchAll(/^\| `([a-z0-9_]+)`\s*\| (\d{3})\s*\|/gm)) {
    rows.set(m[1]!, Number(m[2]));
  }
  return rows;
}

describe('error codes', () => {
  let api: ApiProcess;
  let document: Json;

  before(async () => {
    api = await startApi();
    document = (await request<Json>(`${api.url}/openapi.json`)).body;
  });

  after(() => api?.stop());

  it('are each one of the table of codes, which the source names where it refuses', () => {
    const emitted = codesInSource();
    expect(emitted.size).to.be.greaterThan(20);
    for (const code of emitted) expect(ERRORS, `${code}, emitted in src/`).to.have.property(code);
  });

  it('are each in the table of docs/api.md, with their status, and the table holds no other', () => {
    const table = documentedCodes();
    for (const [code, { status }] of Object.entries(ERRORS)) {
      expect(table.get(code), `docs/api.md row for ${code}`).to.equal(status);
    }
    expect([...table.keys()].sort()).to.deep.equal(Object.keys(ERRORS).sort());
  });

  it('are each in the API document: under the operations and statuses that give them, or as general', () => {
    const listed = new Set<string>();
    const paths = document.paths as Record<string, Record<string, Json>>;
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const responses = operation.responses as Record<string, Json>;
        for (const [status, response] of Object.entries(responses)) {
          const content = response.content as Record<string, Json> | undefined;
          const examples = (content?.['application/json']?.examples ?? {}) as Record<string, Json>;
          for (const [code, example] of Object.entries(examples)) {
            const where = `${method} ${path} ${status} ${code}`;
            expect(ERRORS, where).to.have.property(code);
            expect(ERRORS[code as keyof typeof ERRORS].status, where).to.equal(Number(status));
            expect((example.value as Json).code, where).to.equal(code);
            listed.add(code);
          }
        }
      }
    }
    const schemas = (document.components as Json).schemas as Record<string, Json>;
    const code = (schemas.Error!.properties as Record<string, Json>).code!;
    for (const general of GENERAL_ERROR_CODES) {
      expect(code.description, general).to.include(general);
      listed.add(general);
    }
    expect([...listed].sort()).to.deep.equal(Object.keys(ERRORS).sort());
  });

  it('name the codes of each refusal a route makes: a completion of a step that is not current', () => {
    const paths = document.paths as Record<string, Record<string, Json>>;
    const complete = paths['/complete-workflow-step']!.post!.responses as Record<string, Json>;
    const conflict = (complete['409']!.content as Record<string, Json>)['application/json']!;
    expect(Object.keys(conflict.examples as Json)).to.include.members([
      'step_not_current',
      'completion_pending',
      'run_not_active',
      'run_changed_concurrently',
      'idempotency_key_in_flight',
    ]);
  });
});
