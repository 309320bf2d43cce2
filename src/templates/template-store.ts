// Templates in MySQL: each template's head (workflow_templates: its latest version, whether it
// is archived) and its versions (workflow_template_versions: name and pages, never changed once
// written). A version is immutable, so versions are cached by (id, version) for good; a head
// changes, so it is read on every use. The organization check is made on every use, never
// cached away.
import type { Db } from '../db.js';
import { newId } from '../lib/ids.js';
import type { Template, TemplateDefinition } from './template.js';

interface VersionRow {
  template_id: string;
  version: number;
  organization_id: string;
  name: string;
  pages: string;
}

function fromVersionRow(row: VersionRow): Template {
  return {
    id: row.template_id,
    organizationId: row.organization_id,
    version: Number(row.version),
    name: row.name,
    pages: JSON.parse(row.pages) as Template['pages'],
  };
}

/** A template version's key in the cache and in maps of versions. */
export const versionKey = (id: string, version: number) => `${id}@${version}`;

const CACHE_LIMIT = 10_000;

export class TemplateStore {
  private readonly versions = new Map<string, Template>();

  constructor(private readonly db: Db) {}

  /** A new template, as its version 1. */
  async insert(organizationId: string, definition: TemplateDefinition): Promise<Template> {
    const template: Template = { id: newId(), organizationId, version: 1, ...definition };
    const now = new Date();
    await this.db.transaction(async (trx) => {
      await trx('workflow_templates').insert({
        id: template.id,
        organization_id: organizationId,
        latest_version: 1,
        archived: false,
        created_at: now,
        updated_at: now,
      });
      await trx('workflow_template_versions').insert({
        template_id: template.id,
        version: 1,
        organization_id: organizationId,
        name: definition.name,
        pages: JSON.stringify(definition.pages),
        created_at: now,
      });
    });
    return template;
  }

  /**
   * The version a new run of the organization's template uses: the one asked for, or the
   * latest; undefined when the template is not the organization's or has no such version.
   */
  async findForOrganization(
    organizationId: string,
    id: string,
    version?: number,
  ): Promise<Template | undefined> {
    const head = (await this.db('workflow_templates')
      .select('latest_version')
      .where({ id, organization_id: organizationId })
      .first()) as { latest_version: number } | undefined;
    if (!head) return undefined;
    const wanted = version ?? Number(head.latest_version);
    if (wanted > Number(head.latest_version)) return undefined;
    const found = await this.findVersions([{ id, version: wanted }]);
    return found.get(versionKey(id, wanted));
  }

  /**
   * Template versions by (id, version), whatever their organization (for reading runs, whose
   * rows name theirs): from the cache, and those not cached in one query. Keyed by versionKey.
   */
  async findVersions(
    refs: ReadonlyArray<{ id: string; version: number }>,
  ): Promise<Map<string, Template>> {
    const found = new Map<string, Template>();
    const missing = new Map<string, { id: string; version: number }>();
    for (const ref of refs) {
      const key = versionKey(ref.id, ref.version);
      const template = this.versions.get(key);
      if (template) found.set(key, template);
      else missing.set(key, ref);
    }
    if (missing.size === 0) return found;
    const rows = await this.db<VersionRow>('workflow_template_versions')
      .select('template_id', 'version', 'organization_id', 'name', 'pages')
      .whereIn(
        ['template_id', 'version'],
        [...missing.values()].map((ref) => [ref.id, ref.version]),
      );
    if (this.versions.size + rows.length > CACHE_LIMIT) this.versions.clear();
    for (const row of rows) {
      const template = fromVersionRow(row);
      const key = versionKey(template.id, template.version);
      this.versions.set(key, template);
      found.set(key, template);
    }
    return found;
  }

  /** A page of the organization's templates (each at its latest version), newest first. */
  async list(
    organizationId: string,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<Template & { seq: number }>> {
    // FORCE INDEX keeps a deep page a range scan on (organization_id, seq); see RunStore.
    const query = this.db(
      this.db.raw('?? AS t FORCE INDEX (workflow_templates_org_seq)', ['workflow_templates']),
    )
      .join('workflow_template_versions as v', (on) =>
        on.on('v.template_id', 't.id').andOn('v.version', 't.latest_version'),
      )
      .select('t.seq', 'v.template_id', 'v.version', 'v.organization_id', 'v.name', 'v.pages')
      .where('t.organization_id', organizationId)
      .orderBy('t.seq', 'desc')
      .limit(limit);
    if (beforeSeq !== null) query.andWhere('t.seq', '<', beforeSeq);
    const rows = (await query) as Array<VersionRow & { seq: number }>;
    return rows.map((row) => ({ ...fromVersionRow(row), seq: Number(row.seq) }));
  }
}
