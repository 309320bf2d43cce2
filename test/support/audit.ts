// The audit log as tests read it: the rows in MySQL (auditRows), the API's pages of it
// (readAuditLog, every page checked against the document and the entry schema), and the
// ledger of actions a test takes beside the entries each must leave (AuditLedger), so one
// test can assert that the log equals the actions taken, row for row, whichever endpoints
// (templates, keys, webhooks, the admin CLI) those actions use.
import { expect } from 'chai';
import { ADMIN_CLI, type Actor } from '../../src/audit/actor.js';
import { keyPrefix } from '../../src/auth/api-keys.js';
import { ALL_SCOPES } from '../../src/auth/scopes.js';
import { parseActor } from '../../src/audit/actor.js';
import type { AuditEventType } from '../../src/audit/audit-events.js';
import { AuditEntrySchema } from '../../src/audit/audit-schemas.js';
import type { Db } from '../../src/db.js';
import type { Tenant } from './fixtures.js';
import { Client, nextLink } from './http.js';
import { testDb } from './root-hooks.js';
import { assertServiceSchema } from './spec-schemas.js';

/** An entry as the API shows it. */
export interface AuditEntry {
  id: string;
  type: AuditEventType;
  at: string;
  actor: Actor;
  targetId: string;
  data: Record<string, unknown>;
}

/** What an action must leave in the log: everything but the entry's own id and time. */
export type ExpectedEntry = Omit<AuditEntry, 'id' | 'at'>;

/** An organization's rows in audit_log, oldest first (by seq), as the API would show them. */
export async function auditRows(
  organizationId: string,
  db: Db = testDb(),
): Promise<Array<AuditEntry & { seq: number }>> {
  const rows = (await db('audit_log')
    .where({ organization_id: organizationId })
    .orderBy('seq', 'asc')) as Array<{
    seq: number;
    id: string;
    type: AuditEventType;
    at: Date;
    actor_ref: string;
    actor: string;
    target_id: string;
    data: string;
  }>;
  return rows.map((row) => {
    const actor = parseActor(row.actor);
    if (!actor) throw new Error(`audit row ${row.id}: no valid actor in ${row.actor}`);
    // The filter column must always say who the actor is.
    expect(row.actor_ref, `audit row ${row.id}: actor_ref`).to.equal(
      actor.type === 'api_key' ? actor.id : actor.type,
    );
    return {
      seq: Number(row.seq),
      id: row.id,
      type: row.type,
      at: row.at.toISOString(),
      actor,
      targetId: row.target_id,
      data: JSON.parse(row.data) as Record<string, unknown>,
    };
  });
}

/** Every row of audit_log, whichever organization (to show a refused change wrote none). */
export async function auditRowCount(db: Db = testDb()): Promise<number> {
  const [row] = (await db('audit_log').count({ n: '*' })) as Array<{ n: number | string }>;
  return Number(row?.n ?? 0);
}

/** One page of GET /get-audit-log, checked against the API document and AuditEntry. */
export async function auditPage(client: Client, query = '') {
  const reply = await client.call<AuditEntry[]>(`/get-audit-log${query}`);
  if (reply.status === 200) {
    for (const entry of reply.body) assertServiceSchema(AuditEntrySchema, entry);
  }
  return reply;
}

/**
 * Every entry GET /get-audit-log gives for a query, following the Link header page by page
 * (each page checked, at most `limit` entries).
 */
export async function readAuditLog(client: Client, query = '', limit = 100) {
  const entries: AuditEntry[] = [];
  const separator = query.includes('?') ? '&' : '?';
  let path: string | undefined = `/get-audit-log${query}${separator}limit=${limit}`;
  let pages = 0;
  while (path !== undefined) {
    const at = path.indexOf('/get-audit-log');
    const reply = await auditPage(client, path.slice(at + '/get-audit-log'.length));
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body.length).to.be.at.most(limit);
    entries.push(...reply.body);
    path = nextLink(reply.headers);
    if (path !== undefined)
      expect(reply.body.length, 'a page before the last is full').to.equal(limit);
    if (++pages > 10_000) throw new Error('the audit log does not end');
  }
  return entries;
}

/** The part of an entry an action decides (what ExpectedEntry lists). */
export function decided(entry: AuditEntry): ExpectedEntry {
  return { type: entry.type, actor: entry.actor, targetId: entry.targetId, data: entry.data };
}

/**
 * An administrative action: it returns the entry it must leave, the entries in order when it
 * leaves several (a roll), or undefined for none.
 */
export interface AuditedAction {
  name: string;
  run(): Promise<ExpectedEntry | ExpectedEntry[] | undefined>;
}

/**
 * Takes actions one at a time and checks after each that the organization's log grew by
 * exactly the entry it must leave (or not at all), its time within the action's; `check`
 * then compares the whole log, in MySQL and over the API (newest first), with every entry
 * expected, row for row.
 */
export class AuditLedger {
  readonly expected: ExpectedEntry[] = [];

  constructor(
    readonly organizationId: string,
    private readonly db: Db = testDb(),
  ) {}

  async act(action: AuditedAction): Promise<void> {
    const before = await auditRows(this.organizationId, this.db);
    const started = Date.now();
    const result = await action.run();
    const ended = Date.now();
    const entries = result === undefined ? [] : Array.isArray(result) ? result : [result];
    const after = await auditRows(this.organizationId, this.db);
    const added = after.slice(before.length);
    expect(after.slice(0, before.length), `${action.name}: earlier rows unchanged`).to.deep.equal(
      before,
    );
    expect(added.map(decided), `${action.name}: leaves exactly its entries`).to.deep.equal(entries);
    for (const row of added) {
      // Stored with millisecond precision: within the action, give or take that millisecond.
      expect(Date.parse(row.at), `${action.name}: at`).to.be.within(started - 1, ended + 1);
    }
    this.expected.push(...entries);
  }

  /**
   * A ledger for a tenant of test/support/fixtures, whose log starts with what setting it up
   * recorded (checked here): its key, then its template, both made with the admin CLI.
   */
  static async forTenant(tenant: Tenant, db: Db = testDb()): Promise<AuditLedger> {
    const ledger = new AuditLedger(tenant.orgId, db);
    const setup: ExpectedEntry[] = [
      {
        type: 'api_key.created',
        actor: ADMIN_CLI,
        targetId: tenant.keyId,
        data: { name: 'test', prefix: keyPrefix(tenant.key), scopes: [...ALL_SCOPES] },
      },
      {
        type: 'template.created',
        actor: ADMIN_CLI,
        targetId: tenant.template.id,
        data: { name: tenant.template.name, version: 1 },
      },
    ];
    const rows = await auditRows(tenant.orgId, db);
    expect(rows.map(decided), "the tenant's setup").to.deep.equal(setup);
    ledger.expected.push(...setup);
    return ledger;
  }

  /** Every action in order. */
  async actAll(actions: readonly AuditedAction[]): Promise<void> {
    for (const action of actions) await this.act(action);
  }

  /** The log in MySQL and over the API (read by `client`, in pages of `limit`) is the ledger. */
  async check(client: Client, limit = 3): Promise<void> {
    const rows = await auditRows(this.organizationId, this.db);
    expect(rows.map(decided), 'audit_log, oldest first').to.deep.equal(this.expected);
    const listed = await readAuditLog(client, '', limit);
    expect(listed.map(decided), 'GET /get-audit-log, newest first').to.deep.equal(
      [...this.expected].reverse(),
    );
    expect(listed.map((e) => e.id)).to.deep.equal(rows.map((r) => r.id).reverse());
  }
}
