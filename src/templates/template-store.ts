// Templates as a process holds them: the one object the API, the workers and the CLI ask for
// templates, over their rows (template-rows.ts), their changes (template-writes.ts) and the
// API's lists (template-lists.ts). A version never changes once written, so versions are
// cached by (id, version) for good.
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
import type { Actor } from '../audit/actor.js';
import type { Db } from '../db.js';
import { onPool, type Reader } from '../db-replicas.js';
import { Batcher } from '../lib/batcher.js';
import type { TemplateAssumption } from '../runs/run-sql.js';
import type { TemplateDefinition } from './definition/definition-types.js';
import {
  VERSION_COLUMNS,
  fromVersionRow,
  readHeadsOn,
  versionKey,
  type VersionRow,
} from './template-rows.js';
import { readTemplateList, readVersionList, type VersionSummary } from './template-lists.js';
import {
  TemplateWrites,
  type AnswerOf,
  type SaveResult,
  type TemplateState,
  type VersionDefinition,
} from './template-writes.js';
import type { Template, TemplateHead, TemplateVersion } from './template.js';

/** Why a template cannot take a new run, or the version it uses and what that assumed. */
export type RunTemplate =
  | { ok: true; template: Template; assumption: TemplateAssumption }
  | { ok: false; reason: 'unknown_template' | 'template_archived' | 'unknown_template_version' };

const CACHE_LIMIT = 10_000;
const HEAD_CACHE_LIMIT = 10_000;

export class TemplateStore {
  private readonly versions = new Map<string, TemplateVersion>();
  private readonly heads: Batcher<string, TemplateHead | undefined>;
  /** Heads as last read, for new runs: assumptions their transaction checks (see above). */
  private readonly cachedHeads = new Map<string, TemplateHead>();
  private readonly writes: TemplateWrites;

  constructor(
    private readonly db: Db,
    writeTimeoutMs = 5000,
    /** Where the API's reads of templates go (src/db-replicas.ts); unset: this.db. */
    private readonly reader?: Reader,
  ) {
    this.heads = new Batcher((ids) => readHeadsOn(this.db, ids), { maxBatch: 500, maxInFlight: 2 });
    this.writes = new TemplateWrites(db, writeTimeoutMs);
  }

  /** A new template, as its version 1 (TemplateWrites.insert). */
  insert(
    organizationId: string,
    definition: TemplateDefinition,
    actor?: Actor,
    answer?: AnswerOf,
  ): Promise<TemplateVersion> {
    return this.writes.insert(organizationId, definition, actor, answer);
  }

  /** A new version of the organization's template, if its latest is still expectedVersion. */
  async saveVersion(
    organizationId: string,
    id: string,
    expectedVersion: number,
    definition: VersionDefinition,
    actor: Actor,
    answer?: AnswerOf,
  ): Promise<SaveResult> {
    const result = await this.writes.saveVersion(
      organizationId,
      id,
      expectedVersion,
      definition,
      actor,
      answer,
    );
    // This process's new runs use the new version at once (others find out at their check).
    this.forget(id);
    return result;
  }

  /** Archives (or restores) the organization's template (TemplateWrites.setArchived). */
  async setArchived(
    organizationId: string,
    id: string,
    archived: boolean,
    actor: Actor,
    answer?: AnswerOf,
  ): Promise<TemplateState | undefined> {
    const state = await this.writes.setArchived(organizationId, id, archived, actor, answer);
    this.forget(id);
    return state && { head: state.head, version: this.remember(state.version) };
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

  /** A page of the organization's template's versions, newest first (template-lists.ts). */
  async listVersions(
    organizationId: string,
    id: string,
    limit: number,
    beforeVersion: number | null,
  ): Promise<VersionSummary[] | undefined> {
    return (this.reader ?? onPool(this.db))((db) =>
      readVersionList(db, organizationId, id, limit, beforeVersion),
    );
  }

  /** A page of the organization's templates at their latest versions (template-lists.ts). */
  async list(
    organizationId: string,
    archived: boolean,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<Template & { seq: number }>> {
    return (this.reader ?? onPool(this.db))((db) =>
      readTemplateList(db, organizationId, archived, limit, beforeSeq),
    );
  }

  private remember(template: TemplateVersion): TemplateVersion {
    const key = versionKey(template.id, template.version);
    const known = this.versions.get(key);
    if (known) return known;
    if (this.versions.size >= CACHE_LIMIT) this.versions.clear();
    this.versions.set(key, template);
    return template;
  }
}
