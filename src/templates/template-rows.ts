// The two tables of templates as rows: each template's head (workflow_templates: its latest
// version, whether it is archived) and its versions (workflow_template_versions: name, pages
// and rules, never changed once written). The row types, the mapping to what the service
// holds, and the few statements every reader and writer of templates shares.
import { actorJson, parseActor } from '../audit/actor.js';
import type { TxQuery } from '../db.js';
import type { Db } from '../db.js';
import type { Rule, TemplatePage } from './definition/definition-types.js';
import type { TemplateHead, TemplateVersion } from './template.js';

export interface VersionRow {
  template_id: string;
  version: number;
  organization_id: string;
  name: string;
  pages: string;
  /** NULL for a version without rules (every version saved before rules existed). */
  rules: string | null;
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

export const VERSION_COLUMNS = [
  'template_id',
  'version',
  'organization_id',
  'name',
  'pages',
  'rules',
  'created_at',
  'created_by',
] as const;

/** A template version's key in the cache and in maps of versions. */
export const versionKey = (id: string, version: number) => `${id}@${version}`;

export function fromVersionRow(row: VersionRow): TemplateVersion {
  return {
    id: row.template_id,
    organizationId: row.organization_id,
    version: Number(row.version),
    name: row.name,
    pages: JSON.parse(row.pages) as TemplatePage[],
    // Left out when there are none, so a version without rules reads exactly as before.
    ...(row.rules === null ? {} : { rules: JSON.parse(row.rules) as Rule[] }),
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

/** The heads of the templates asked for, in one query; one entry per id, in order. */
export async function readHeadsOn(db: Db, ids: string[]): Promise<Array<TemplateHead | undefined>> {
  const rows = (await db('workflow_templates')
    .select(...HEAD_COLUMNS)
    .whereIn('id', [...new Set(ids)])) as HeadRow[];
  const byId = new Map(rows.map((row) => [row.id, fromHeadRow(row)]));
  return ids.map((id) => byId.get(id));
}

/** The organization's template's head, read in a transaction. */
export async function readHead(
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

/** A template's version, read in a transaction. */
export async function readVersion(
  query: TxQuery,
  id: string,
  version: number,
): Promise<TemplateVersion | undefined> {
  const [row] = (await query(
    `SELECT ${VERSION_COLUMNS.join(', ')} FROM workflow_template_versions
      WHERE template_id = ? AND version = ?`,
    [id, version],
  )) as unknown as VersionRow[];
  return row ? fromVersionRow(row) : undefined;
}

export async function insertVersion(query: TxQuery, version: TemplateVersion): Promise<void> {
  const rules = version.rules && version.rules.length > 0 ? JSON.stringify(version.rules) : null;
  await query(
    `INSERT INTO workflow_template_versions
       (template_id, version, organization_id, name, pages, rules, created_at, created_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      version.id,
      version.version,
      version.organizationId,
      version.name,
      JSON.stringify(version.pages),
      rules,
      version.createdAt,
      version.createdBy ? actorJson(version.createdBy) : null,
    ],
  );
}
