// The changes of templates, each one transaction with its audit entry and the request's
// Idempotency-Key: a new template (its version 1), a new version of one, archiving and
// restoring. What they change in a process's caches is the store's concern (template-store.ts).
import { ADMIN_CLI, type Actor } from '../audit/actor.js';
import { insertAuditEntries } from '../audit/audit-store.js';
import { writeTransaction, type Db } from '../db.js';
import {
  insertIdempotencyRecords,
  type IdempotencyRecord,
} from '../idempotency/idempotency-keys.js';
import { newId } from '../lib/ids.js';
import type { TemplateDefinition } from './definition/definition-types.js';
import { insertVersion, readHead, readVersion } from './template-rows.js';
import type { TemplateHead, TemplateVersion } from './template.js';

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

/** The outcome of saving a new version: it, or why not. */
export type SaveResult =
  | { ok: true; state: TemplateState }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'conflict'; latestVersion: number };

/** The answer a change makes, from the template as it stands after it (for its key). */
export type AnswerOf = (state: TemplateState) => IdempotencyRecord | undefined;

/** What a new version holds: a name left out is the previous version's. */
export type VersionDefinition = Omit<TemplateDefinition, 'name'> & { name?: string };

/** The definition's own parts of a version (its rules only when it has some). */
function definitionOf(definition: VersionDefinition): Pick<TemplateVersion, 'pages' | 'rules'> {
  return {
    pages: definition.pages,
    ...(definition.rules && definition.rules.length > 0 ? { rules: definition.rules } : {}),
  };
}

export class TemplateWrites {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
  ) {}

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
      ...definitionOf(definition),
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
   * Idempotency-Key commit with it, or nothing does.
   */
  async saveVersion(
    organizationId: string,
    id: string,
    expectedVersion: number,
    definition: VersionDefinition,
    actor: Actor,
    answer?: AnswerOf,
  ): Promise<SaveResult> {
    const now = new Date();
    return writeTransaction(this.db, this.writeTimeoutMs, async (query): Promise<SaveResult> => {
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
        ...definitionOf(definition),
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
    });
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
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
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
      const state = { head, version: (await readVersion(query, id, head.latestVersion))! };
      const key = answer?.(state);
      if (key) await insertIdempotencyRecords(query, [key]);
      return state;
    });
  }
}
