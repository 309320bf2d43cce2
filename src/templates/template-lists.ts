// The API's lists of templates, read where its reads go (a replica, or the primary): a page of
// an organization's templates at their latest versions, and a page of one template's versions.
// Keyset pages, newest first.
import type { Db } from '../db.js';
import { parseActor, type Actor } from '../audit/actor.js';
import { VERSION_COLUMNS, fromVersionRow, type VersionRow } from './template-rows.js';
import type { Template } from './template.js';

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

/**
 * A page of the organization's template's versions, newest first, before version
 * `beforeVersion` (the version number is the keyset position); undefined when the template
 * is not the organization's. The counts are made by MySQL, so no pages are sent.
 */
export async function readVersionList(
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
      db.raw(`COALESCE(JSON_LENGTH(JSON_EXTRACT(pages, '$[*].inputFields[*]')), 0) AS field_count`),
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
export async function readTemplateList(
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
