// Templates over the API: creating, saving versions guarded by expected_version, reading one
// version and the list of them, archiving and restoring; runs pinned to a version and runs that
// keep theirs to their end (with a real worker); the admin CLI's import with the same schema;
// an audit entry per change in the change's transaction, none for a refusal; every endpoint
// and filter scoped to the caller's organization.
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  WorkflowTemplateDetailSchema,
  WorkflowTemplateVersionSchema,
} from '../../src/templates/template-schemas.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client, nextLink, type Reply } from '../support/http.js';
import {
  runAdmin,
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { assertServiceSchema } from '../support/spec-schemas.js';
import { waitFor } from '../support/wait.js';

type Json = Record<string, unknown>;

interface Detail {
  id: string;
  version: number;
  latestVersion: number;
  archived: boolean;
  name: string;
  pages: Array<{ name: string; dueInHours?: number; inputFields: Json[] }>;
  createdAt: string;
  updatedAt: string;
  versionCreatedAt: string;
  versionCreatedBy?: Json;
}

interface VersionView {
  version: number;
  name: string;
  createdAt: string;
  createdBy?: Json;
  pageCount: number;
  fieldCount: number;
}

interface RunDetail {
  templateVersion: number;
  status: string;
  currentStepName?: string;
  steps: Array<{ name: string; status: string; dueDate?: string; startedAt?: string }>;
}

const V1 = {
  name: 'Onboarding',
  pages: [
    {
      name: 'Details',
      dueInHours: 1,
      inputFields: [{ inputId: 'full_name', fieldName: 'Full name', required: true }],
    },
    { name: 'Laptop', inputFields: [{ inputId: 'laptop', fieldName: 'Laptop' }] },
  ],
};

const V2 = {
  pages: [
    {
      name: 'Details',
      dueInHours: 5,
      inputFields: [{ inputId: 'email', fieldName: 'Email', required: true }],
    },
    { name: 'Badge', dueInHours: 2, inputFields: [] },
    { name: 'Desk', inputFields: [{ inputId: 'desk', fieldName: 'Desk' }] },
  ],
};

describe('templates over the API', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let worker: ServiceProcess | undefined;
  let a: Tenant;
  let b: Tenant;
  let clientA: Client;
  let clientB: Client;

  before(async () => {
    api = await startApi();
    [a, b] = await Promise.all([createTenant(testDb()), createTenant(testDb())]);
    clientA = new Client(api.url, a.key);
    clientB = new Client(api.url, b.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  /** A call whose answer the API document describes; a 200 checked against its own schema. */
  async function call<T = Json>(
    client: Client,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply<T>> {
    const reply = await client.call<T>(path, body, headers);
    if (reply.status === 200) {
      const list = path.startsWith('/get-workflow-template-versions');
      if (list) {
        for (const item of reply.body as unknown[]) {
          assertServiceSchema(WorkflowTemplateVersionSchema, item);
        }
      } else {
        assertServiceSchema(WorkflowTemplateDetailSchema, reply.body);
      }
    }
    return reply;
  }

  const create = (client: Client, body: unknown, headers?: Record<string, string>) =>
    call<Detail>(client, '/create-workflow-template', body, headers);
  const update = (client: Client, body: unknown, headers?: Record<string, string>) =>
    call<Detail>(client, '/update-workflow-template', body, headers);
  const get = (client: Client, query: string) =>
    call<Detail>(client, `/get-workflow-template?${query}`);
  const versions = (client: Client, query: string) =>
    call<VersionView[]>(client, `/get-workflow-template-versions?${query}`);
  const archive = (client: Client, id: string) =>
    call<Detail>(client, '/archive-workflow-template', { id });
  const restore = (client: Client, id: string) =>
    call<Detail>(client, '/restore-workflow-template', { id });

  async function refused(reply: Reply<unknown>, status: number, code: string, field?: string) {
    const body = reply.body as Json;
    expect(reply.status, JSON.stringify(body)).to.equal(status);
    expect(body.code).to.equal(code);
    if (field !== undefined) expect(body.field).to.equal(field);
    return body;
  }

  const apiKeyActor = (tenant: Tenant) => ({ type: 'api_key', id: tenant.keyId, name: 'test' });

  async function auditRows(targetId: string) {
    const rows = await testDb()('audit_log').where({ target_id: targetId }).orderBy('seq');
    return rows.map((row: Json) => ({
      organizationId: row.organization_id,
      type: row.type,
      actor: JSON.parse(row.actor as string) as Json,
      actorRef: row.actor_ref,
      data: JSON.parse(row.data as string) as Json,
    }));
  }

  /** Counts of what a refused request must not have written. */
  async function written(orgId: string) {
    const count = async (table: string) =>
      Number(
        ((await testDb()(table).where({ organization_id: orgId }).count({ n: '*' })) as Json[])[0]!
          .n,
      );
    return {
      templates: await count('workflow_templates'),
      versions: await count('workflow_template_versions'),
      audit: await count('audit_log'),
    };
  }

  describe('create-workflow-template', () => {
    it('creates version 1, answered in full, with its audit entry by the key', async () => {
      const before = await written(a.orgId);
      const made = await create(clientA, V1);
      expect(made.status).to.equal(200);
      const t = made.body;
      expect(t).to.include({ version: 1, latestVersion: 1, archived: false, name: 'Onboarding' });
      expect(t.pages).to.deep.equal(V1.pages);
      expect(t.createdAt).to.equal(t.updatedAt);
      expect(t.versionCreatedAt).to.equal(t.createdAt);
      expect(t.versionCreatedBy).to.deep.equal(apiKeyActor(a));
      expect(Date.parse(t.createdAt)).to.be.closeTo(Date.now(), 60_000);
      expect(await written(a.orgId)).to.deep.equal({
        templates: before.templates + 1,
        versions: before.versions + 1,
        audit: before.audit + 1,
      });
      expect(await auditRows(t.id)).to.deep.equal([
        {
          organizationId: a.orgId,
          type: 'template.created',
          actor: apiKeyActor(a),
          actorRef: a.keyId,
          data: { name: 'Onboarding', version: 1 },
        },
      ]);
      // As read back, and in the spec's list.
      expect((await get(clientA, `id=${t.id}`)).body).to.deep.equal(t);
      const listed = await clientA.listTemplates();
      expect(listed.body.find((x) => x.id === t.id)).to.deep.equal({
        id: t.id,
        name: 'Onboarding',
        inputFields: [
          { pageName: 'Details', inputId: 'full_name', fieldName: 'Full name' },
          { pageName: 'Laptop', inputId: 'laptop', fieldName: 'Laptop' },
        ],
      });
    });

    it('stores an Idempotency-Key with the template: a retry gets the same answer, once', async () => {
      const before = await written(a.orgId);
      const headers = { 'Idempotency-Key': `create-${Date.now()}` };
      const first = await create(clientA, V1, headers);
      const again = await create(clientA, V1, headers);
      expect(first.status).to.equal(200);
      expect(again.status).to.equal(200);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect((await written(a.orgId)).templates).to.equal(before.templates + 1);
    });

    const pages = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `P${i}`, inputFields: [] as Json[] }));
    const fields = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ inputId: `f${i}`, fieldName: 'F' }));
    const refusals: Array<[string, unknown, string, string | undefined]> = [
      [
        'a duplicate page name',
        {
          name: 'T',
          pages: [...pages(3), { name: 'P1', inputFields: [] }],
        },
        'duplicate_page_name',
        '/pages/3/name',
      ],
      [
        'a duplicate inputId, on another page',
        {
          name: 'T',
          pages: [
            { name: 'A', inputFields: [{ inputId: 'x', fieldName: 'X' }] },
            { name: 'B', inputFields: [{ inputId: 'x', fieldName: 'X again' }] },
          ],
        },
        'duplicate_input_id',
        '/pages/1/inputFields/0/inputId',
      ],
      ['no pages', { name: 'T', pages: [] }, 'invalid_body', '/pages'],
      ['201 pages', { name: 'T', pages: pages(201) }, 'invalid_body', '/pages'],
      [
        '1001 fields on a page',
        { name: 'T', pages: [{ name: 'P', inputFields: fields(1001) }] },
        'invalid_body',
        '/pages/0/inputFields',
      ],
      [
        'a name of 256 characters',
        { name: 'x'.repeat(256), pages: pages(1) },
        'invalid_body',
        '/name',
      ],
      ['an empty name', { name: '', pages: pages(1) }, 'invalid_body', '/name'],
      [
        'a page name of 256 characters',
        { name: 'T', pages: [{ name: 'p'.repeat(256), inputFields: [] }] },
        'invalid_body',
        '/pages/0/name',
      ],
      [
        'dueInHours 0',
        { name: 'T', pages: [{ name: 'P', dueInHours: 0, inputFields: [] }] },
        'invalid_body',
        '/pages/0/dueInHours',
      ],
      [
        'dueInHours over ten years',
        { name: 'T', pages: [{ name: 'P', dueInHours: 87601, inputFields: [] }] },
        'invalid_body',
        '/pages/0/dueInHours',
      ],
      [
        'a field without fieldName',
        { name: 'T', pages: [{ name: 'P', inputFields: [{ inputId: 'a' }] }] },
        'invalid_body',
        '/pages/0/inputFields/0/fieldName',
      ],
      ['an unknown field', { name: 'T', pages: pages(1), id: 'mine' }, 'invalid_body', '/id'],
      ['missing pages', { name: 'T' }, 'invalid_body', '/pages'],
    ];
    for (const [what, body, code, field] of refusals) {
      it(`refuses ${what} (${code}) and writes nothing`, async () => {
        const before = await written(a.orgId);
        await refused(await create(clientA, body), 400, code, field);
        expect(await written(a.orgId)).to.deep.equal(before);
      });
    }

    it('accepts the limits themselves: 200 pages, 1000 fields on a page', async () => {
      const many = pages(200);
      many[0] = { name: 'P0', inputFields: fields(1000) };
      const made = await create(clientA, { name: 'Big', pages: many });
      expect(made.status).to.equal(200);
      const listed = await versions(clientA, `id=${made.body.id}`);
      expect(listed.body).to.have.length(1);
      expect(listed.body[0]).to.include({ pageCount: 200, fieldCount: 1000 });
    });

    it('needs templates:write; templates:read reads', async () => {
      const reader = await createTenant(testDb());
      await testDb()('api_keys')
        .where({ id: reader.keyId })
        .update({ scopes: JSON.stringify(['templates:read']) });
      const client = new Client(api.url, reader.key);
      const body = await refused(await create(client, V1), 403, 'insufficient_scope');
      expect(body.message).to.match(/templates:write/);
      await refused(await archive(client, reader.template.id), 403, 'insufficient_scope');
      expect((await get(client, `id=${reader.template.id}`)).status).to.equal(200);
      expect((await versions(client, `id=${reader.template.id}`)).status).to.equal(200);
    });
  });

  describe('update-workflow-template', () => {
    it('saves expected_version + 1 under the same id; the old version is unchanged', async () => {
      const t = (await create(clientA, V1)).body;
      const saved = await update(clientA, { id: t.id, expected_version: 1, ...V2 });
      expect(saved.status).to.equal(200);
      const v2 = saved.body;
      expect(v2).to.include({ id: t.id, version: 2, latestVersion: 2, archived: false });
      expect(v2.name, 'the name defaults to the previous version’s').to.equal('Onboarding');
      expect(v2.pages).to.deep.equal(V2.pages);
      expect(v2.createdAt).to.equal(t.createdAt);
      expect(Date.parse(v2.updatedAt)).to.be.at.least(Date.parse(t.updatedAt));
      expect(v2.versionCreatedAt).to.equal(v2.updatedAt);

      const v1 = (await get(clientA, `id=${t.id}&version=1`)).body;
      expect(v1).to.include({ version: 1, latestVersion: 2, name: 'Onboarding' });
      expect(v1.pages).to.deep.equal(V1.pages);
      expect((await get(clientA, `id=${t.id}`)).body).to.deep.equal(v2);

      const renamed = await update(clientA, {
        id: t.id,
        expected_version: 2,
        name: 'Onboarding (2027)',
        pages: V1.pages,
      });
      expect(renamed.body).to.include({ version: 3, name: 'Onboarding (2027)' });
      // The spec's list shows the latest version.
      const listed = await clientA.listTemplates();
      expect(listed.body.find((x) => x.id === t.id)?.name).to.equal('Onboarding (2027)');

      expect((await auditRows(t.id)).map((r) => [r.type, r.data, r.actor])).to.deep.equal([
        ['template.created', { name: 'Onboarding', version: 1 }, apiKeyActor(a)],
        ['template.updated', { name: 'Onboarding', version: 2 }, apiKeyActor(a)],
        ['template.updated', { name: 'Onboarding (2027)', version: 3 }, apiKeyActor(a)],
      ]);
    });

    it('refuses a stale expected_version with 409, naming the latest, and writes nothing', async () => {
      const t = (await create(clientA, V1)).body;
      expect((await update(clientA, { id: t.id, expected_version: 1, ...V2 })).status).to.equal(
        200,
      );
      const before = await written(a.orgId);
      for (const expected of [1, 5]) {
        const body = await refused(
          await update(clientA, { id: t.id, expected_version: expected, name: 'Lost', ...V2 }),
          409,
          'template_version_conflict',
          '/expected_version',
        );
        expect(body.message).to.match(/latest version is 2/);
      }
      expect(await written(a.orgId)).to.deep.equal(before);
      expect((await get(clientA, `id=${t.id}`)).body).to.include({
        version: 2,
        name: 'Onboarding',
      });
    });

    it('of two concurrent saves from the same version, exactly one wins (each time)', async () => {
      for (let round = 0; round < 8; round++) {
        const t = (await create(clientA, V1)).body;
        const replies = await Promise.all(
          [0, 1, 2].map((i) =>
            update(clientA, { id: t.id, expected_version: 1, name: `Save ${i}`, ...V2 }),
          ),
        );
        const statuses = replies.map((r) => r.status).sort();
        expect(statuses, `round ${round}`).to.deep.equal([200, 409, 409]);
        for (const lost of replies.filter((r) => r.status === 409)) {
          const body = lost.body as unknown as Json;
          expect(body.code).to.equal('template_version_conflict');
          expect(body.message).to.match(/latest version is 2/);
        }
        const winner = replies.find((r) => r.status === 200)!.body;
        expect(winner.version).to.equal(2);
        const stored = await testDb()('workflow_template_versions')
          .where({ template_id: t.id })
          .orderBy('version');
        expect(stored.map((row: Json) => [row.version, row.name])).to.deep.equal([
          [1, 'Onboarding'],
          [2, winner.name],
        ]);
        expect((await auditRows(t.id)).map((r) => r.type)).to.deep.equal([
          'template.created',
          'template.updated',
        ]);
      }
    });

    it('refuses duplicates as create does, and an unknown or foreign id with 404', async () => {
      const before = await written(a.orgId);
      await refused(
        await update(clientA, {
          id: a.template.id,
          expected_version: 1,
          pages: [
            { name: 'X', inputFields: [] },
            { name: 'X', inputFields: [] },
          ],
        }),
        400,
        'duplicate_page_name',
        '/pages/1/name',
      );
      await refused(
        await update(clientA, { id: 'no-such-template', expected_version: 1, ...V2 }),
        404,
        'template_not_found',
      );
      await refused(
        await update(clientA, { id: a.template.id, expected_version: 0, ...V2 }),
        400,
        'invalid_body',
        '/expected_version',
      );
      await refused(
        await update(clientA, { id: a.template.id, ...V2 }),
        400,
        'invalid_body',
        '/expected_version',
      );
      expect(await written(a.orgId)).to.deep.equal(before);
      // Another organization's template is not found, and left as it was.
      const theirs = await written(b.orgId);
      await refused(
        await update(clientA, { id: b.template.id, expected_version: 1, ...V2 }),
        404,
        'template_not_found',
      );
      expect(await written(b.orgId)).to.deep.equal(theirs);
    });

    it('stores an Idempotency-Key with the version: a retry gets the same answer, no third version', async () => {
      const t = (await create(clientA, V1)).body;
      const headers = { 'Idempotency-Key': `update-${t.id}` };
      const first = await update(clientA, { id: t.id, expected_version: 1, ...V2 }, headers);
      const again = await update(clientA, { id: t.id, expected_version: 1, ...V2 }, headers);
      expect(first.status).to.equal(200);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect((await get(clientA, `id=${t.id}`)).body.latestVersion).to.equal(2);
    });
  });

  describe('get-workflow-template and its versions', () => {
    it('answers 404 for an unknown version, an unknown or foreign id; 400 for a bad query', async () => {
      await refused(
        await get(clientA, `id=${a.template.id}&version=2`),
        404,
        'template_version_not_found',
        '/version',
      );
      await refused(await get(clientA, 'id=nope'), 404, 'template_not_found');
      await refused(await get(clientA, `id=${b.template.id}`), 404, 'template_not_found');
      await refused(await get(clientA, `id=${b.template.id}&version=1`), 404, 'template_not_found');
      await refused(
        await get(clientA, `id=${a.template.id}&version=0`),
        400,
        'invalid_query',
        '/version',
      );
      await refused(await get(clientA, 'version=1'), 400, 'invalid_query', '/id');
    });

    it('lists versions newest first, in keyset pages, with counts and who saved each', async () => {
      const t = (await create(clientA, V1)).body;
      await update(clientA, { id: t.id, expected_version: 1, ...V2 });
      await update(clientA, { id: t.id, expected_version: 2, ...V1, name: 'Third' });
      const all = await versions(clientA, `id=${t.id}`);
      expect(all.status).to.equal(200);
      expect(
        all.body.map((v) => [v.version, v.name, v.pageCount, v.fieldCount, v.createdBy]),
      ).to.deep.equal([
        [3, 'Third', 2, 2, apiKeyActor(a)],
        [2, 'Onboarding', 3, 2, apiKeyActor(a)],
        [1, 'Onboarding', 2, 2, apiKeyActor(a)],
      ]);
      expect(nextLink(all.headers)).to.equal(undefined);

      const seen: number[] = [];
      let path: string | undefined = `/get-workflow-template-versions?id=${t.id}&limit=2`;
      while (path) {
        const page: Reply<VersionView[]> = await call<VersionView[]>(clientA, path);
        expect(page.status).to.equal(200);
        seen.push(...page.body.map((v) => v.version));
        path = nextLink(page.headers);
      }
      expect(seen).to.deep.equal([3, 2, 1]);

      await refused(await versions(clientA, `id=${b.template.id}`), 404, 'template_not_found');
      await refused(await versions(clientA, 'id=nope'), 404, 'template_not_found');
      await refused(await versions(clientA, `id=${t.id}&cursor=!`), 400, 'invalid_query');
      // A version saved before actors were recorded shows none.
      await testDb()('workflow_template_versions')
        .where({ template_id: t.id, version: 1 })
        .update({ created_by: null });
      const oldest = (await versions(clientA, `id=${t.id}`)).body[2]!;
      expect(oldest).not.to.have.property('createdBy');
    });
  });

  describe('archive and restore', () => {
    it('archives: no new runs (409), off the list, on ?archived=true; restore brings it back', async () => {
      const t = (await create(clientA, V1)).body;
      const archived = await archive(clientA, t.id);
      expect(archived.status).to.equal(200);
      expect(archived.body).to.include({ id: t.id, archived: true, version: 1, latestVersion: 1 });
      expect(Date.parse(archived.body.updatedAt)).to.be.at.least(Date.parse(t.updatedAt));

      // The next create sees it at once: the head is never cached.
      await refused(
        await clientA.createRun({ workflow_template_id: t.id, input_fields: {} }),
        409,
        'template_archived',
        '/workflow_template_id',
      );
      const listed = (await clientA.listTemplates()).body.map((x) => x.id);
      expect(listed).not.to.include(t.id);
      expect(listed).to.include(a.template.id);
      const archivedList = (await clientA.listTemplates('?archived=true')).body.map((x) => x.id);
      expect(archivedList).to.deep.equal([t.id]);
      const bArchived = (await clientB.listTemplates('?archived=true')).body.map((x) => x.id);
      expect(bArchived).not.to.include(t.id);

      // Archiving again changes and records nothing.
      const twice = await archive(clientA, t.id);
      expect(twice.status).to.equal(200);
      expect(twice.body).to.deep.equal(archived.body);
      // Still readable, and still takes new versions (it stays archived).
      expect((await get(clientA, `id=${t.id}`)).body.archived).to.equal(true);
      const v2 = await update(clientA, { id: t.id, expected_version: 1, ...V2 });
      expect(v2.body).to.include({ version: 2, archived: true });

      const restored = await restore(clientA, t.id);
      expect(restored.body).to.include({ archived: false, version: 2, latestVersion: 2 });
      expect((await restore(clientA, t.id)).body).to.deep.equal(restored.body);
      const run = await clientA.createRun({
        workflow_template_id: t.id,
        input_fields: { email: 'ada@example.com' },
      });
      expect(run.status).to.equal(200);
      expect((await clientA.listTemplates('?archived=true')).body).to.deep.equal([]);

      expect((await auditRows(t.id)).map((r) => [r.type, r.data])).to.deep.equal([
        ['template.created', { name: 'Onboarding', version: 1 }],
        ['template.archived', {}],
        ['template.updated', { name: 'Onboarding', version: 2 }],
        ['template.restored', {}],
      ]);
    });

    it('answers 404 for an unknown or foreign template, and leaves the other organization’s as it was', async () => {
      const theirs = await written(b.orgId);
      await refused(await archive(clientA, b.template.id), 404, 'template_not_found');
      await refused(await restore(clientA, b.template.id), 404, 'template_not_found');
      await refused(await archive(clientA, 'nope'), 404, 'template_not_found');
      expect(await written(b.orgId)).to.deep.equal(theirs);
      expect((await get(clientB, `id=${b.template.id}`)).body.archived).to.equal(false);
    });

    it('pages ?archived=true and keeps the filter in the Link', async () => {
      const tenant = await createTenant(testDb());
      const client = new Client(api.url, tenant.key);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const t = (await create(client, { ...V1, name: `Old ${i}` })).body;
        await archive(client, t.id);
        ids.unshift(t.id);
      }
      const first = await client.listTemplates('?archived=true&limit=2');
      expect(first.body.map((x) => x.id)).to.deep.equal(ids.slice(0, 2));
      const next = nextLink(first.headers)!;
      expect(next).to.match(/archived=true/);
      const second = await client.listTemplates(next.slice('/get-workflow-templates'.length));
      expect(second.body.map((x) => x.id)).to.deep.equal(ids.slice(2));
      expect((await client.listTemplates('?archived=false')).body.map((x) => x.id)).to.deep.equal([
        tenant.template.id,
      ]);
    });
  });

  describe('runs and versions', () => {
    it('pins a version with workflow_template_version; refuses one the template lacks', async () => {
      const t = (await create(clientA, V1)).body;
      await update(clientA, { id: t.id, expected_version: 1, ...V2 });
      const pinned = await clientA.createRun({
        workflow_template_id: t.id,
        workflow_template_version: 1,
        input_fields: { full_name: 'Ada' },
      });
      expect(pinned.status).to.equal(200);
      const doc = pinned.body.run_json as { template: { version: number; pages: unknown } };
      expect(doc.template.version).to.equal(1);
      expect(doc.template.pages).to.deep.equal(V1.pages);
      // Checked against the pinned version: v2's field is not v1's.
      await refused(
        await clientA.createRun({
          workflow_template_id: t.id,
          workflow_template_version: 1,
          input_fields: { email: 'x' },
        }),
        400,
        'unknown_input_field',
      );
      const before = Number(
        (
          (await testDb()('workflow_runs').where({ template_id: t.id }).count({ n: '*' })) as Json[]
        )[0]!.n,
      );
      await refused(
        await clientA.createRun({
          workflow_template_id: t.id,
          workflow_template_version: 3,
          input_fields: {},
        }),
        400,
        'unknown_template_version',
        '/workflow_template_version',
      );
      await refused(
        await clientA.createRun({
          workflow_template_id: t.id,
          workflow_template_version: 0,
          input_fields: {},
        }),
        400,
        'invalid_body',
        '/workflow_template_version',
      );
      await refused(
        await clientA.createRun({
          workflow_template_id: b.template.id,
          workflow_template_version: 1,
          input_fields: {},
        }),
        400,
        'unknown_template',
        '/workflow_template_id',
      );
      expect(
        Number(
          (
            (await testDb()('workflow_runs').where({ template_id: t.id }).count({
              n: '*',
            })) as Json[]
          )[0]!.n,
        ),
      ).to.equal(before);
      // The list's template_id filter finds runs of every version.
      const latest = await clientA.createRun({
        workflow_template_id: t.id,
        input_fields: { email: 'ada@example.com' },
      });
      const runs = await clientA.listRuns(`?template_id=${t.id}`);
      expect(runs.body.map((r) => r.id)).to.have.members([pinned.body.id, latest.body.id]);
    });

    it('runs made before and after a save keep their own version, pages and due times to the end, also once archived', async () => {
      const t = (await create(clientA, V1)).body;
      const early = await clientA.createRun({
        workflow_template_id: t.id,
        input_fields: { full_name: 'Ada' },
      });
      await update(clientA, { id: t.id, expected_version: 1, ...V2 });
      const late = await clientA.createRun({
        workflow_template_id: t.id,
        input_fields: { email: 'grace@example.com' },
      });
      expect(late.status).to.equal(200);
      const earlyId = early.body.id as string;
      const lateId = late.body.id as string;

      worker = await startWorker();
      const runWhen = (id: string, test: (run: RunDetail) => boolean) =>
        waitFor(`run ${id}`, async () => {
          const run = (await clientA.getRun(id)).body as unknown as RunDetail;
          return test(run) ? run : undefined;
        });
      const dueAfter = (run: RunDetail, index: number) => {
        const step = run.steps[index]!;
        return Date.parse(step.dueDate!) - Date.parse(step.startedAt!);
      };

      const e1 = await runWhen(earlyId, (r) => r.status === 'active');
      const l1 = await runWhen(lateId, (r) => r.status === 'active');
      expect(e1.templateVersion).to.equal(1);
      expect(l1.templateVersion).to.equal(2);
      expect(e1.steps.map((s) => s.name)).to.deep.equal(['Details', 'Laptop']);
      expect(l1.steps.map((s) => s.name)).to.deep.equal(['Details', 'Badge', 'Desk']);
      expect(dueAfter(e1, 0)).to.equal(3600_000);
      expect(dueAfter(l1, 0)).to.equal(5 * 3600_000);

      // Archived from here on: the runs go on.
      expect((await archive(clientA, t.id)).status).to.equal(200);

      // Each run takes its own version's fields.
      await refused(
        await clientA.completeStep({ workflow_run_id: earlyId, input_fields: { email: 'x' } }),
        400,
        'unknown_input_field',
      );
      expect(
        (
          await clientA.completeStep({
            workflow_run_id: earlyId,
            step_name: 'Details',
            input_fields: { full_name: 'Ada L.' },
          })
        ).status,
      ).to.equal(202);
      expect(
        (await clientA.completeStep({ workflow_run_id: lateId, step_name: 'Details' })).status,
        'v2 requires email, given at creation',
      ).to.equal(202);
      const e2 = await runWhen(earlyId, (r) => r.currentStepName === 'Laptop');
      const l2 = await runWhen(lateId, (r) => r.currentStepName === 'Badge');
      expect(e2.steps[1]).not.to.have.property('dueDate');
      expect(dueAfter(l2, 1)).to.equal(2 * 3600_000);

      await clientA.completeStep({ workflow_run_id: earlyId, step_name: 'Laptop' });
      await clientA.completeStep({ workflow_run_id: lateId, step_name: 'Badge' });
      await runWhen(lateId, (r) => r.currentStepName === 'Desk');
      await clientA.completeStep({ workflow_run_id: lateId, step_name: 'Desk' });
      const eEnd = await runWhen(earlyId, (r) => r.status === 'completed');
      const lEnd = await runWhen(lateId, (r) => r.status === 'completed');
      expect(eEnd.templateVersion).to.equal(1);
      expect(lEnd.templateVersion).to.equal(2);
      expect(eEnd.steps.map((s) => [s.name, s.status])).to.deep.equal([
        ['Details', 'completed'],
        ['Laptop', 'completed'],
      ]);
      expect(lEnd.steps.map((s) => s.name)).to.deep.equal(['Details', 'Badge', 'Desk']);
      const rows = await testDb()('workflow_runs')
        .whereIn('id', [earlyId, lateId])
        .select('id', 'template_version');
      expect(Object.fromEntries(rows.map((r: Json) => [r.id, r.template_version]))).to.deep.equal({
        [earlyId]: 1,
        [lateId]: 2,
      });
    });
  });

  describe('admin CLI import-template', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'wrs-templates-'));
    });

    async function importFile(content: unknown, ...args: string[]) {
      const file = join(dir, `t-${Math.random().toString(36).slice(2)}.json`);
      await writeFile(file, JSON.stringify(content));
      return runAdmin(['import-template', '--file', file, ...args]);
    }

    it('makes a new template, and with --id a new version of one, each audited as admin_cli', async () => {
      const made = await importFile(V1, '--org', a.orgId);
      expect(made.code, made.stderr).to.equal(0);
      const first = JSON.parse(made.stdout) as Json;
      expect(first).to.include({ version: 1, name: 'Onboarding', organization_id: a.orgId });
      const id = first.id as string;

      const next = await importFile({ name: 'Onboarding v2', ...V2 }, '--org', a.orgId, '--id', id);
      expect(next.code, next.stderr).to.equal(0);
      expect(JSON.parse(next.stdout)).to.include({ id, version: 2, name: 'Onboarding v2' });
      const third = await importFile(
        { ...V1, name: 'Onboarding v3' },
        '--org',
        a.orgId,
        '--id',
        id,
      );
      expect(JSON.parse(third.stdout)).to.include({ id, version: 3 });

      // Seen over the API, at once.
      const shown = (await get(clientA, `id=${id}`)).body;
      expect(shown).to.include({ version: 3, latestVersion: 3, name: 'Onboarding v3' });
      expect(shown.versionCreatedBy).to.deep.equal({ type: 'admin_cli' });
      expect((await get(clientA, `id=${id}&version=2`)).body.pages).to.deep.equal(V2.pages);
      expect((await auditRows(id)).map((r) => [r.type, r.actor, r.actorRef, r.data])).to.deep.equal(
        [
          [
            'template.created',
            { type: 'admin_cli' },
            'admin_cli',
            { name: 'Onboarding', version: 1 },
          ],
          [
            'template.updated',
            { type: 'admin_cli' },
            'admin_cli',
            { name: 'Onboarding v2', version: 2 },
          ],
          [
            'template.updated',
            { type: 'admin_cli' },
            'admin_cli',
            { name: 'Onboarding v3', version: 3 },
          ],
        ],
      );
    });

    it('refuses what the API refuses, with the same limits, and another organization’s id', async () => {
      const before = await written(a.orgId);
      const theirs = await written(b.orgId);
      const cases: Array<[unknown, string[], RegExp]> = [
        [
          {
            name: 'T',
            pages: Array.from({ length: 201 }, (_, i) => ({ name: `P${i}`, inputFields: [] })),
          },
          [],
          /more than 200/,
        ],
        [
          {
            name: 'T',
            pages: [
              {
                name: 'P',
                inputFields: Array.from({ length: 1001 }, (_, i) => ({
                  inputId: `f${i}`,
                  fieldName: 'F',
                })),
              },
            ],
          },
          [],
          /more than 1000/,
        ],
        [{ name: 'x'.repeat(256), pages: [{ name: 'P', inputFields: [] }] }, [], /at most 255/],
        [
          {
            name: 'T',
            pages: [
              { name: 'A', inputFields: [] },
              { name: 'A', inputFields: [] },
            ],
          },
          ['--id', a.template.id],
          /duplicate page name 'A' \(at \/pages\/1\/name\)/,
        ],
        [V1, ['--id', b.template.id], /not found/],
        [V1, ['--id', 'nope'], /not found/],
      ];
      for (const [content, extra, message] of cases) {
        const res = await importFile(content, '--org', a.orgId, ...extra);
        expect(res.code, res.stdout).to.equal(2);
        expect(res.stderr).to.match(message);
      }
      expect(await written(a.orgId)).to.deep.equal(before);
      expect(await written(b.orgId)).to.deep.equal(theirs);
    });
  });

  describe('isolation', () => {
    it('keeps every template endpoint and filter to the caller’s organization', async () => {
      // B's template, archived, with a second version: nothing of it is A's.
      const t = (await create(clientB, V1)).body;
      await update(clientB, { id: t.id, expected_version: 1, ...V2 });
      await archive(clientB, t.id);
      const theirs = await written(b.orgId);
      await refused(await get(clientA, `id=${t.id}`), 404, 'template_not_found');
      await refused(await get(clientA, `id=${t.id}&version=2`), 404, 'template_not_found');
      await refused(await versions(clientA, `id=${t.id}`), 404, 'template_not_found');
      await refused(
        await update(clientA, { id: t.id, expected_version: 2, ...V1 }),
        404,
        'template_not_found',
      );
      await refused(await archive(clientA, t.id), 404, 'template_not_found');
      await refused(await restore(clientA, t.id), 404, 'template_not_found');
      await refused(
        await clientA.createRun({ workflow_template_id: t.id, input_fields: {} }),
        400,
        'unknown_template',
      );
      for (const query of ['', '?archived=true', '?archived=false']) {
        const ids = (await clientA.listTemplates(query)).body.map((x) => x.id);
        expect(ids, query).not.to.include(t.id);
      }
      expect((await clientB.listTemplates('?archived=true')).body.map((x) => x.id)).to.deep.equal([
        t.id,
      ]);
      expect(await written(b.orgId)).to.deep.equal(theirs);
      expect((await get(clientB, `id=${t.id}`)).body).to.include({ archived: true, version: 2 });
    });
  });
});
