// What a hostile or sloppy client sends, and what it gets: a clear 4xx with a JSON {message}
// and nothing stored, or, where the request is fine, the same answer a well-behaved client gets.
import { expect } from 'chai';
import { ASSIGNEE_COLUMN } from '../../src/config.js';
import { createBody, createTenant, type Tenant } from '../support/fixtures.js';
import { Client, request } from '../support/http.js';
import {
  freePort,
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testEnv } from '../support/env.js';
import { RawConnection, rawRequest } from '../support/raw-http.js';
import { testDb } from '../support/root-hooks.js';
import { assertSpec } from '../support/spec-schemas.js';
import { sleep, waitFor } from '../support/wait.js';

const BODY_TIMEOUT_MS = 2500;
const REQUEST_TIMEOUT_MS = 1000;

describe('hostile and sloppy clients', () => {
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let client: Client;

  before(async () => {
    [api, worker] = await Promise.all([
      startApi({
        BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      }),
      startWorker(),
    ]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  const runCount = async (t: Tenant = tenant) =>
    Number(
      (
        await testDb()('workflow_runs')
          .where({ organization_id: t.orgId })
          .count({ n: '*' })
          .first()
      )?.n,
    );

  /** Sends raw bytes as a create and returns the parsed answer, checked as an Error body. */
  async function rawCreate(headers: Record<string, string | string[]>, body: Buffer | string) {
    const conn = await RawConnection.open(api.port);
    conn.write(rawRequest('POST', '/create-workflow-run', headers, body));
    const res = await conn.response();
    conn.close();
    const parsed = JSON.parse(res.body) as unknown;
    assertSpec('Error', parsed);
    return { status: res.status, body: parsed as { message: string; code: string } };
  }

  async function activeRun(t: Tenant = tenant): Promise<string> {
    const created = await new Client(api.url, t.key).createRun(createBody(t));
    const id = created.body.id as string;
    await waitFor('run to start', async () => {
      const row = await testDb()('workflow_runs').where({ id }).first();
      return row.status === 'active';
    });
    return id;
  }

  describe('charsets and Unicode', () => {
    it('refuses a declared charset other than UTF-8 with 415, and stores nothing', async () => {
      const fresh = await createTenant(testDb());
      const body = Buffer.from(JSON.stringify(createBody(fresh)), 'latin1');
      for (const charset of ['latin1', 'iso-8859-1', 'utf-16']) {
        const res = await rawCreate(
          { Authorization: fresh.key, 'Content-Type': `application/json; charset=${charset}` },
          body,
        );
        expect(res.status, charset).to.equal(415);
        expect(res.body.message).to.match(/UTF-8/);
      }
      for (const charset of ['utf-8', 'UTF-8', 'utf8']) {
        const res = await request(`${api.url}/create-workflow-run`, {
          key: fresh.key,
          raw: body.toString(),
          headers: { 'content-type': `application/json; charset=${charset}` },
        });
        expect(res.status, charset).to.equal(200);
      }
      expect(await runCount(fresh)).to.equal(3);
    });

    it('refuses a body with invalid UTF-8 bytes with 400, and stores nothing', async () => {
      const fresh = await createTenant(testDb());
      const json = JSON.stringify(createBody(fresh, { user_assignments: { Request: 'AB' } }));
      // "A", then a lone continuation byte where "B" was: not UTF-8.
      const bytes = Buffer.from(json.replace('"AB"', '"A\u0000"'), 'utf8');
      bytes[bytes.indexOf(0)] = 0x80;
      const res = await rawCreate(
        { Authorization: fresh.key, 'Content-Type': 'application/json' },
        bytes,
      );
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/not valid UTF-8/);
      expect(await runCount(fresh)).to.equal(0);
    });

    it('refuses a lone surrogate anywhere with 400 naming the field; accepts a pair', async () => {
      const fresh = await createTenant(testDb());
      const cases: Array<[string, RegExp]> = [
        [
          `{"workflow_template_id":"${fresh.template.id}","input_fields":{},"user_assignments":{"Request":"a\\ud800"}}`,
          /user_assignments\.Request is not valid Unicode/,
        ],
        [
          `{"workflow_template_id":"${fresh.template.id}","input_fields":{"note":"\\udc00x"}}`,
          /input_fields\.note is not valid Unicode/,
        ],
        [
          `{"workflow_template_id":"${fresh.template.id}","input_fields":{"\\ud83d":"x"}}`,
          /a key of input_fields is not valid Unicode/,
        ],
        [`{"workflow_template_id":"\\ud800","input_fields":{}}`, /workflow_template_id/],
      ];
      for (const [raw, message] of cases) {
        const res = await request(`${api.url}/create-workflow-run`, {
          key: fresh.key,
          raw,
          headers: { 'content-type': 'application/json' },
        });
        expect(res.status, raw).to.equal(400);
        expect((res.body as { message: string }).message, raw).to.match(message);
      }
      expect(await runCount(fresh)).to.equal(0);

      // A surrogate pair is one character, escaped or not: stored and shown the same everywhere.
      const pair = await request<Record<string, unknown>>(`${api.url}/create-workflow-run`, {
        key: fresh.key,
        raw: `{"workflow_template_id":"${fresh.template.id}","input_fields":{"note":"\\ud83d\\ude00"},"user_assignments":{"Request":"\u{1F600}"}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(pair.status).to.equal(200);
      const id = pair.body.id as string;
      await waitFor('run to start', async () => {
        const runs = (await new Client(api.url, fresh.key).listRuns()).body;
        return runs.find((r) => r.id === id && r.currentStepAssignee === '\u{1F600}');
      });
      const row = await testDb()('workflow_runs').where({ id }).first();
      expect(JSON.parse(row.run_json).input_fields.note).to.equal('\u{1F600}');
    });

    it('refuses the same on complete-workflow-step', async () => {
      const id = await activeRun();
      const res = await request(`${api.url}/complete-workflow-step`, {
        key: tenant.key,
        raw: `{"workflow_run_id":"${id}","input_fields":{"note":"\\ud800"}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).to.equal(400);
      expect((res.body as { message: string }).message).to.match(/input_fields\.note/);
      const row = await testDb()('workflow_runs').where({ id }).first();
      expect(row.requested_seq).to.equal(row.applied_seq);
    });
  });

  describe('headers', () => {
    it('refuses two Authorization headers with 400, even when both hold live keys', async () => {
      const other = await createTenant(testDb());
      for (const keys of [
        [tenant.key, other.key],
        [tenant.key, tenant.key],
      ]) {
        const res = await rawCreate(
          { Authorization: keys, 'Content-Type': 'application/json' },
          JSON.stringify(createBody(tenant)),
        );
        expect(res.status).to.equal(400);
        expect(res.body.message).to.match(/one Authorization header/);
      }
      const conn = await RawConnection.open(api.port);
      conn.write(
        rawRequest('GET', '/get-workflow-runs', { Authorization: [other.key, tenant.key] }),
      );
      expect((await conn.response()).status).to.equal(400);
      conn.close();
      expect(await runCount(other)).to.equal(0);
    });

    it('answers oversized headers with 431 and a malformed request with 400, both JSON', async () => {
      const big = await RawConnection.open(api.port);
      big.write(
        `GET /get-workflow-runs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`,
      );
      const tooBig = await big.response();
      expect(tooBig.status).to.equal(431);
      assertSpec('Error', JSON.parse(tooBig.body));
      big.close();

      const broken = await RawConnection.open(api.port);
      broken.write('GET /get-workflow-runs HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n');
      const malformed = await broken.response();
      expect(malformed.status).to.equal(400);
      expect(malformed.headers['content-type']).to.match(/application\/json/);
      assertSpec('Error', JSON.parse(malformed.body));
      broken.close();
    });
  });

  describe('null for an optional field', () => {
    it('is refused with 400 naming the field, on every endpoint, and stores nothing', async () => {
      const id = await activeRun();
      const before = await testDb()('workflow_runs').where({ id }).first();
      for (const field of ['step_name', 'input_fields']) {
        const res = await client.completeStep({ workflow_run_id: id, [field]: null });
        expect(res.status, field).to.equal(400);
        expect(res.body.message).to.equal(
          `${field} must not be null; leave an optional field out instead`,
        );
      }
      const after = await testDb()('workflow_runs').where({ id }).first();
      expect(after.requested_seq).to.equal(before.requested_seq);
      const fresh = await createTenant(testDb());
      const res = await new Client(api.url, fresh.key).createRun(
        createBody(fresh, { user_assignments: null }),
      );
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/^user_assignments must not be null/);
      expect(await runCount(fresh)).to.equal(0);
    });
  });

  describe('assignee length', () => {
    it('holds one limit in the schema and the column: the longest allowed is stored and shown', async () => {
      const column = await testDb()
        .select('CHARACTER_MAXIMUM_LENGTH as width')
        .from('information_schema.COLUMNS')
        .where({
          TABLE_SCHEMA: testDb().client.database(),
          TABLE_NAME: 'workflow_runs',
          COLUMN_NAME: 'current_step_assignee',
        })
        .first();
      expect(Number(column.width)).to.equal(ASSIGNEE_COLUMN);

      const fresh = await createTenant(testDb());
      const freshClient = new Client(api.url, fresh.key);
      const longest = '\u{1F600}'.repeat(ASSIGNEE_COLUMN); // characters, not bytes or UTF-16 units
      const tooLong = await freshClient.createRun(
        createBody(fresh, { user_assignments: { Request: `${longest}x` } }),
      );
      expect(tooLong.status).to.equal(400);
      expect(tooLong.body.message).to.equal(
        `user_assignments.Request must be at most ${ASSIGNEE_COLUMN} characters`,
      );
      const ok = await freshClient.createRun(
        createBody(fresh, { user_assignments: { Request: longest } }),
      );
      expect(ok.status).to.equal(200);
      const listed = await waitFor('run to start', async () =>
        (await freshClient.listRuns()).body.find(
          (r) => r.id === ok.body.id && r.status === 'active',
        ),
      );
      expect(listed.currentStepAssignee).to.equal(longest);
    });

    it('takes a lower MAX_ASSIGNEE_LENGTH, and refuses one the column cannot hold', async () => {
      const small = await startApi({ MAX_ASSIGNEE_LENGTH: '3' });
      try {
        const fresh = await createTenant(testDb());
        const res = await new Client(small.url, fresh.key).createRun(
          createBody(fresh, { user_assignments: { Request: 'abcd' } }),
        );
        expect(res.status).to.equal(400);
        expect(res.body.message).to.match(/at most 3 characters/);
      } finally {
        await small.stop();
      }
      const tooWide = await startApi({ MAX_ASSIGNEE_LENGTH: '256' }).then(
        () => 'started',
        (err: Error) => err.message,
      );
      expect(tooWide).to.match(/MAX_ASSIGNEE_LENGTH must be between 1 and 255/);
    });
  });

  describe('pipelining', () => {
    it('handles requests on one connection in order: a list sees the create before it', async () => {
      const fresh = await createTenant(testDb());
      for (let round = 0; round < 5; round++) {
        const conn = await RawConnection.open(api.port);
        const json = { Authorization: fresh.key, 'Content-Type': 'application/json' };
        conn.write(
          Buffer.concat([
            rawRequest('POST', '/create-workflow-run', json, JSON.stringify(createBody(fresh))),
            rawRequest('GET', '/get-workflow-runs?limit=1', { Authorization: fresh.key }),
          ]),
        );
        const created = await conn.response();
        const listed = await conn.response();
        conn.close();
        expect(created.status).to.equal(200);
        const id = (JSON.parse(created.body) as { id: string }).id;
        const runs = JSON.parse(listed.body) as Array<{ id: string }>;
        expect(runs.map((r) => r.id)).to.deep.equal([id]);
      }
    });
  });

  describe('slow bodies', () => {
    for (const endpoint of ['create-workflow-run', 'complete-workflow-step'] as const) {
      it(`answers a ${endpoint} whose body stalls with 408, and does nothing with it`, async () => {
        const fresh = await createTenant(testDb());
        const runId = endpoint === 'complete-workflow-step' ? await activeRun(fresh) : '';
        const before = runId
          ? await testDb()('workflow_runs').where({ id: runId }).first()
          : undefined;
        const body = Buffer.from(
          JSON.stringify(
            endpoint === 'create-workflow-run'
              ? createBody(fresh)
              : { workflow_run_id: runId, input_fields: { note: 'late' } },
          ),
        );
        const conn = await RawConnection.open(api.port);
        const bytes = rawRequest(
          'POST',
          `/${endpoint}`,
          { Authorization: fresh.key, 'Content-Type': 'application/json' },
          body,
        );
        conn.write(bytes.subarray(0, bytes.length - 10));
        const started = Date.now();
        const res = await conn.response(BODY_TIMEOUT_MS + 5000);
        expect(Date.now() - started).to.be.at.least(BODY_TIMEOUT_MS - 100);
        expect(res.status).to.equal(408);
        const error = JSON.parse(res.body) as { message: string };
        assertSpec('Error', error);
        expect(error.message).to.match(/did not arrive within/);
        // The rest of the body arriving late changes nothing: the connection is closed.
        conn.write(bytes.subarray(bytes.length - 10));
        expect(await conn.closedByServer()).to.equal(true);
        await sleep(300);
        if (runId) {
          const after = await testDb()('workflow_runs').where({ id: runId }).first();
          expect(after.requested_seq).to.equal(before.requested_seq);
          expect(after.run_json).to.equal(before.run_json);
        } else {
          expect(await runCount(fresh)).to.equal(0);
        }
      });
    }

    it("counts the body's time as the client's: a slow body within its limit succeeds", async () => {
      const fresh = await createTenant(testDb());
      const conn = await RawConnection.open(api.port);
      const bytes = rawRequest(
        'POST',
        '/create-workflow-run',
        { Authorization: fresh.key, 'Content-Type': 'application/json' },
        JSON.stringify(createBody(fresh)),
      );
      conn.write(bytes.subarray(0, bytes.length - 10));
      await sleep(REQUEST_TIMEOUT_MS + 500); // longer than the service may take, shorter than the body's limit
      conn.write(bytes.subarray(bytes.length - 10));
      const res = await conn.response();
      conn.close();
      expect(res.status).to.equal(200);
      expect(await runCount(fresh)).to.equal(1);
    });
  });

  describe('logs', () => {
    it('are JSON lines only, also when MySQL cannot be reached', async () => {
      const closed = await freePort();
      const db = new URL(testEnv.DATABASE_URL!);
      db.port = String(closed);
      const cut = await startApi({ DATABASE_URL: db.toString(), DB_ACQUIRE_TIMEOUT_MS: '300' });
      try {
        const res = await request(`${cut.url}/get-workflow-runs`, { key: tenant.key });
        expect(res.status).to.equal(503);
        await sleep(200); // lines are written once per event-loop turn
      } finally {
        await cut.stop();
      }
      expect(cut.lines.length).to.be.greaterThan(2);
      for (const line of cut.lines) {
        expect(() => JSON.parse(line) as unknown, line).not.to.throw();
      }
      await cut.waitForLine(/connect|Acquire/i, 5000); // logged asynchronously
    });
  });
});
