// Templates in MySQL: each template's head (workflow_templates: its latest version, whether it
// is archived) and its versions (workflow_template_versions: name and pages, never changed once
// written). A version is immutable, so versions are cached by (id, version) for good.
//
// A head changes, and another API process may change it, so the heads cached for new runs are
// only assumptions: a new run carries what it assumed of its template's head (a
// TemplateAssumption), and the transaction that stores it reads the head again first
// (run-sql's templateGuardSql), so a run is stored only if the head was still as assumed
// after its request arrived; when it was not, the head is read again and the create made
// again. A cached
// head may let a create through to that check; it never refuses one: a refusal (archived, no
// such version) is decided on a head read just now. Heads read fresh share one query through a
// group-commit batcher. The organization check is made on every use. Every change is one
// transaction with its audit entry and the request's Idempotency-Key.
import { ADMIN_CLI, actorJson, parseActor, type Actor } from '../audit/actor.js';
import { insertAuditEntries } from '../audit/audit-store.js';
import { writeTransaction, type Db, type TxQuery } from '../db.js';
import { onPool, type Reader } from '../db-replicas.js';
import {
  insertIdempotencyRecords,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import { Batcher } from '../lib/batcher.js';
import { newId } from '../lib/ids.js';
import type { TemplateAssumption } from '../runs/run-sql.js';
import type { Template, TemplateDefinition, TemplateHead, TemplateVersion } from './template.js';

interface VersionRow {
  template_id: string;
  version: number;
  organization_id: string;
  name: string;
  pages: string;
  created_at: Date;
  created_by: string | null;
}

interface HeadRow {
  id: string;
  organization_id: string;
  latest_version: number;
  archived: number | boolean;
  created_at: Date;
  updated_at: Date;
}

const HEAD_COLUMNS = [
  'id',
  'organization_id',
  'latest_version',
  'archived',
  'created_at',
  'updated_at',
] as const;

const VERSION_COLUMNS = [
  'template_id',
  'version',
  'organization_id',
  'name',
  'pages',
  'created_at',
  'created_by',
] as const;

function fromVersionRow(row: VersionRow): TemplateVersion {
  return {
    id: row.template_id,
    organizationId: row.organization_id,
    version: Number(row.version),
    name: row.name,
    pages: JSON.parse(row.pages) as Template['pages'],
    createdAt: row.created_at,
    createdBy: parseActor(row.created_by),
  };
}

function fromHeadRow(row: HeadRow): TemplateHead {
  return {
    id: row.id,
    organizationId: row.organization_id,
    latestVersion: Number(row.latest_version),
    archived: Boolean(row.archived),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A template's head with one of its versions: what the API shows as one template. */
export interface TemplateState {
  head: TemplateHead;
  version: TemplateVersion;
}

/** A template just created: its head, as insert wrote it, with its version 1. */
export function createdState(version: TemplateVersion): TemplateState {
  return {
    head: {
      id: version.id,
      organizationId: version.organizationId,
      latestVersion: 1,
      archived: false,
      createdAt: version.createdAt,
      updatedAt: version.createdAt,
    },
    version,
  };
}

/** One entry of a template's list of versions. */
export interface VersionSummary {
  seq: number;
  version: number;
  name: string;
  createdAt: Date;
  createdBy: Actor | undefined;
  pageCount: number;
  fieldCount: number;
}

/** Why a template cannot take a new run, or the version it uses and what that assumed. */
export type RunTemplate =
  | { ok: true; template: Template; assumption: TemplateAssumption }
  | { ok: false; reason: 'unknown_template' | 'template_archived' | 'unknown_template_version' };

/** The outcome of saving a new version: it, or why not. */
export type SaveResult =
  | { ok: true; state: TemplateState }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'conflict'; latestVersion: number };

/** A template version's key in the cache and in maps of versions. */
export const versionKey = (id: string, version: number) => `${id}@${version}`;

const CACHE_LIMIT = 10_000;
const HEAD_CACHE_LIMIT = 10_000;

/** The answer a change makes, from the template as it stands after it (for its key). */
type AnswerOf = (state: TemplateState) => IdempotencyRecord | undefined;

export class TemplateStore {
  private readonly versions = new Map<string, TemplateVersion>();
  private readonly heads: Batcher<string, TemplateHead | undefined>;
  /** Heads as last read, for new runs: assumptions their transaction checks (see above). */
  private readonly cachedHeads = new Map<string, TemplateHead>();

  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs = 5000,
    /** Where the API's reads of templates go (src/db-replicas.ts); unset: this.db. */
    private readonly reader?: Reader,
  ) {
    this.heads = new Batcher((ids) => this.readHeads(ids), { maxBatch: 500, maxInFlight: 2 });
  }

  /**
   * A new template, as its version 1, with its audit entry (by `actor`: the admin CLI unless
   * said otherwise) and the request's Idempotency-Key, in one transaction.
   */
  async insert(
    organizationId: string,
    definition: TemplateDefinition,
    actor: Actor = ADMIN_CLI,
    answer?: AnswerOf,
  ): Promise<TemplateVersion> {
    const version: TemplateVersion = {
      id: newId(),
      organizationId,
      version: 1,
      name: definition.name,
      pages: definition.pages,
      createdAt: new Date(),
      createdBy: actor,
    };
    const { id, createdAt: now } = version;
    await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      await query(
        `INSERT INTO workflow_templates
           (id, organization_id, latest_version, archived, created_at, updated_at)
         VALUES (?, ?, 1, 0, ?, ?)`,
        [id, organizationId, now, now],
      );
      await insertVersion(query, version);
      await insertAuditEntries(query, [
        {
          organizationId,
          type: 'template.created',
          actor,
          targetId: id,
          data: { name: definition.name, version: 1 },
          at: now,
        },
      ]);
      const key = answer?.(createdState(version));
      if (key) await insertIdempotencyRecords(query, [key]);
    });
    return version;
  }

  /**
   * Saves `definition` as version expectedVersion + 1 of the organization's template, if its
   * latest version is still expectedVersion: the guarded UPDATE of the head decides, so of two
   * saves from the same version exactly one wins. The version row, the audit entry and the
   * Idempotency-Key commit with it, or nothing does. A name left out is the previous version's.
   */
  async saveVersion(
    organizationId: string,
    id: string,
    expectedVersion: number,
    definition: { name?: string; pages: TemplateDefinition['pages'] },
    actor: Actor,
    answer?: AnswerOf,
  ): Promise<SaveResult> {
    const now = new Date();
    const result = await writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query): Promise<SaveResult> => {
        const moved = await query(
          `UPDATE workflow_templates SET latest_version = latest_version + 1, updated_at = ?
          WHERE id = ? AND organization_id = ? AND latest_version = ?`,
          [now, id, organizationId, expectedVersion],
        );
        if (moved.affectedRows === 0) {
          // Nothing was written. This is the transaction's first read, so it sees the latest
          // committed head (the save that won), not an older snapshot.
          const head = await readHead(query, organizationId, id);
          return head
            ? { ok: false, reason: 'conflict', latestVersion: head.latestVersion }
            : { ok: false, reason: 'not_found' };
        }
        const head = (await readHead(query, organizationId, id))!;
        let name = definition.name;
        if (name === undefined) {
          const [previous] = (await query(
            'SELECT name FROM workflow_template_versions WHERE template_id = ? AND version = ?',
            [id, expectedVersion],
          )) as unknown as Array<{ name: string }>;
          name = previous!.name;
        }
        const version: TemplateVersion = {
          id,
          organizationId,
          version: expectedVersion + 1,
          name,
          pages: definition.pages,
          createdAt: now,
          createdBy: actor,
        };
        await insertVersion(query, version);
        await insertAuditEntries(query, [
          {
            organizationId,
            type: 'template.updated',
            actor,
            targetId: id,
            data: { name, version: version.version },
            at: now,
          },
        ]);
        const state = { head, version };
        const key = answer?.(state);
        if (key) await insertIdempotencyRecords(query, [key]);
        return { ok: true, state };
      },
    );
    // This process's new runs use the new version at once (others find out at their check).
    this.forget(id);
    return result;
  }

  /**
   * Archives (or restores) the organization's template. Only a change of state is written,
   * with its audit entry; a template already in that state is answered as it is. The
   * Idempotency-Key is stored either way, with the template as answered. Undefined: no such
   * template in this organization.
   */
  async setArchived(
    organizationId: string,
    id: string,
    archived: boolean,
    actor: Actor,
    answer?: AnswerOf,
  ): Promise<TemplateState | undefined> {
    const now = new Date();
    const result = await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const changed = await query(
        `UPDATE workflow_templates SET archived = ?, updated_at = ?
          WHERE id = ? AND organization_id = ? AND archived = ?`,
        [archived, now, id, organizationId, !archived],
      );
      const head = await readHead(query, organizationId, id);
      if (!head) return undefined;
      if (changed.affectedRows > 0) {
        await insertAuditEntries(query, [
          {
            organizationId,
            type: archived ? 'template.archived' : 'template.restored',
            actor,
            targetId: id,
            data: {},
            at: now,
          },
        ]);
      }
      const [row] = (await query(
        `SELECT ${VERSION_COLUMNS.join(', ')} FROM workflow_template_versions
          WHERE template_id = ? AND version = ?`,
        [id, head.latestVersion],
      )) as unknown as VersionRow[];
      const state = { head, version: this.remember(fromVersionRow(row!)) };
      const key = answer?.(state);
      if (key) await insertIdempotencyRecords(query, [key]);
      return state;
    });
    this.forget(id);
    return result;
  }

  /**
   * The organization's template's head, read now: concurrent callers share one SELECT, sent
   * after each of them asked, so a change committed before a call is always seen by it.
   */
  async head(organizationId: string, id: string): Promise<TemplateHead | undefined> {
    const head = await this.heads.submit(id);
    if (head) {
      if (this.cachedHeads.size >= HEAD_CACHE_LIMIT) this.cachedHeads.clear();
      this.cachedHeads.set(id, head);
    } else {
      this.cachedHeads.delete(id);
    }
    return head?.organizationId === organizationId ? head : undefined;
  }

  /** Drops a cached head: it was found changed, or this process changed it. */
  forget(id: string): void {
    this.cachedHeads.delete(id);
  }

  /**
   * The version a new run of the organization's template uses: the one asked for, or the
   * latest; refused when the template is not the organization's, is archived, or lacks the
   * version asked for. Answered from the cached head when it lets the run through (the run's
   * transaction checks the assumption); a refusal is always decided on a fresh read.
   */
  async forNewRun(organizationId: string, id: string, version?: number): Promise<RunTemplate> {
    const cached = this.cachedHeads.get(id);
    const usable =
      cached?.organizationId === organizationId &&
      !cached.archived &&
      (version === undefined || version <= cached.latestVersion);
    const head = usable ? cached : await this.head(organizationId, id);
    if (!head) return { ok: false, reason: 'unknown_template' };
    if (head.archived) return { ok: false, reason: 'template_archived' };
    const wanted = version ?? head.latestVersion;
    if (wanted > head.latestVersion) return { ok: false, reason: 'unknown_template_version' };
    const template = (await this.findVersions([{ id, version: wanted }])).get(
      versionKey(id, wanted),
    );
    if (!template) return { ok: false, reason: 'unknown_template_version' };
    // A pinned version stays valid as versions are added: only "not archived" is assumed.
    const assumption: TemplateAssumption = {
      templateId: id,
      latestVersion: version === undefined ? head.latestVersion : undefined,
    };
    return { ok: true, template, assumption };
  }

  /**
   * The organization's template at a version (the latest when none is given), archived or
   * not: undefined when the template is not the organization's, 'no_version' when it lacks
   * that version.
   */
  async find(
    organizationId: string,
    id: string,
    version?: number,
  ): Promise<TemplateState | 'no_version' | undefined> {
    const head = this.reader
      ? await this.reader(async (db) => (await readHeadsOn(db, [id]))[0])
      : await this.head(organizationId, id);
    if (head?.organizationId !== organizationId) return undefined;
    const wanted = version ?? head.latestVersion;
    if (wanted > head.latestVersion) return 'no_version';
    const found = (await this.findVersions([{ id, version: wanted }])).get(versionKey(id, wanted));
    return found ? { head, version: found } : 'no_version';
  }

  /**
   * Template versions by (id, version), whatever their organization (for reading runs, whose
   * rows name theirs): from the cache, and those not cached in one query. Keyed by versionKey.
   */
  async findVersions(
    refs: ReadonlyArray<{ id: string; version: number }>,
  ): Promise<Map<string, TemplateVersion>> {
    const found = new Map<string, TemplateVersion>();
    const missing = new Map<string, { id: string; version: number }>();
    for (const ref of refs) {
      const key = versionKey(ref.id, ref.version);
      const template = this.versions.get(key);
      if (template) found.set(key, template);
      else missing.set(key, ref);
    }
    if (missing.size === 0) return found;
    const rows = await this.db<VersionRow>('workflow_template_versions')
      .select(...VERSION_COLUMNS)
      .whereIn(
        ['template_id', 'version'],
        [...missing.values()].map((ref) => [ref.id, ref.version]),
      );
    for (const row of rows) {
      const template = this.remember(fromVersionRow(row));
      found.set(versionKey(template.id, template.version), template);
    }
    return found;
  }

  /**
   * A page of the organization's template's versions, newest first, before version
   * `beforeVersion` (the version number is the keyset position); undefined when the template
   * is not the organization's. The counts are made by MySQL, so no pages are sent.
   */
  async listVersions(
    organizationId: string,
    id: string,
    limit: number,
    beforeVersion: number | null,
  ): Promise<VersionSummary[] | undefined> {
    return (this.reader ?? onPool(this.db))((db) =>
      this.readVersions(db, organizationId, id, limit, beforeVersion),
    );
  }

  private async readVersions(
    db: Db,
    organizationId: string,
    id: string,
    limit: number,
    beforeVersion: number | null,
  ): Promise<VersionSummary[] | undefined> {
    const head = await db('workflow_templates')
      .select('id')
      .where({ id, organization_id: organizationId })
      .first();
    if (!head) return undefined;
    const query = db('workflow_template_versions')
      .select(
        'version',
        'name',
        'created_at',
        'created_by',
        db.raw('JSON_LENGTH(pages) AS page_count'),
        db.raw(
          `COALESCE(JSON_LENGTH(JSON_EXTRACT(pages, '$[*].inputFields[*]')), 0) AS field_count`,
        ),
      )
      .where({ template_id: id, organization_id: organizationId })
      .orderBy('version', 'desc')
      .limit(limit);
    if (beforeVersion !== null) query.andWhere('version', '<', beforeVersion);
    const rows = (await query) as Array<{
      version: number;
      name: string;
      created_at: Date;
      created_by: string | null;
      page_count: number | string;
      field_count: number | string;
    }>;
    return rows.map((row) => ({
      seq: Number(row.version),
      version: Number(row.version),
      name: row.name,
      createdAt: row.created_at,
      createdBy: parseActor(row.created_by),
      pageCount: Number(row.page_count),
      fieldCount: Number(row.field_count),
    }));
  }

  /**
   * A page of the organization's templates (each at its latest version), newest first: those
   * that take runs, or with `archived` the archived ones.
   */
  async list(
    organizationId: string,
    archived: boolean,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<Template & { seq: number }>> {
    return (this.reader ?? onPool(this.db))((db) =>
      this.readList(db, organizationId, archived, limit, beforeSeq),
    );
  }

  private async readList(
    db: Db,
    organizationId: string,
    archived: boolean,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<Template & { seq: number }>> {
    // FORCE INDEX keeps a deep page a range scan on (organization_id, archived, seq); see
    // RunStore.
    const query = db(
      db.raw('?? AS t FORCE INDEX (workflow_templates_org_archived_seq)', ['workflow_templates']),
    )
      .join('workflow_template_versions as v', (on) =>
        on.on('v.template_id', 't.id').andOn('v.version', 't.latest_version'),
      )
      .select('t.seq', ...VERSION_COLUMNS.map((c) => `v.${c}`))
      .where('t.organization_id', organizationId)
      .andWhere('t.archived', archived)
      .orderBy('t.seq', 'desc')
      .limit(limit);
    if (beforeSeq !== null) query.andWhere('t.seq', '<', beforeSeq);
    const rows = (await query) as Array<VersionRow & { seq: number }>;
    return rows.map((row) => ({ ...fromVersionRow(row), seq: Number(row.seq) }));
  }

  private remember(template: TemplateVersion): TemplateVersion {
    const key = versionKey(template.id, template.version);
    const known = this.versions.get(key);
    if (known) return known;
    if (this.versions.size >= CACHE_LIMIT) this.versions.clear();
    this.versions.set(key, template);
    return template;
  }

  /** The heads of the templates asked for, in one query; one entry per id, in order. */
  private readHeads(ids: string[]): Promise<Array<TemplateHead | undefined>> {
    return readHeadsOn(this.db, ids);
  }
}

async function readHeadsOn(db: Db, ids: string[]): Promise<Array<TemplateHead | undefined>> {
  const rows = (await db('workflow_templates')
    .select(...HEAD_COLUMNS)
    .whereIn('id', [...new Set(ids)])) as HeadRow[];
  const byId = new Map(rows.map((row) => [row.id, fromHeadRow(row)]));
  return ids.map((id) => byId.get(id));
}

async function readHead(
  query: TxQuery,
  organizationId: string,
  id: string,
): Promise<TemplateHead | undefined> {
  const [row] = (await query(
    `SELECT ${HEAD_COLUMNS.join(', ')} FROM workflow_templates WHERE id = ? AND organization_id = ?`,
    [id, organizationId],
  )) as unknown as HeadRow[];
  return row ? fromHeadRow(row) : undefined;
}

async function insertVersion(query: TxQuery, version: TemplateVersion): Promise<void> {
  await query(
    `INSERT INTO workflow_template_versions
       (template_id, version, organization_id, name, pages, created_at, created_by)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [
      version.id,
      version.version,
      version.organizationId,
      version.name,
      JSON.stringify(version.pages),
      version.createdAt,
      version.createdBy ? actorJson(version.createdBy) : null,
    ],
  );
}
