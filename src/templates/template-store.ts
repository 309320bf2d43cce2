// Templates in MySQL. Templates never change once imported, so a looked-up template is cached
// by id; the organization check is done on every use, never cached away.
import type { Db } from '../db.js';
import { newId } from '../lib/ids.js';
import type { Template, TemplateDefinition } from './template.js';

interface TemplateRow {
  seq: number;
  id: string;
  organization_id: string;
  name: string;
  pages: string;
}

function fromRow(row: TemplateRow): Template {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    pages: JSON.parse(row.pages) as Template['pages'],
  };
}

const CACHE_LIMIT = 10_000;

export class TemplateStore {
  private readonly cache = new Map<string, Template>();

  constructor(private readonly db: Db) {}

  async insert(organizationId: string, definition: TemplateDefinition): Promise<Template> {
    const template: Template = { id: newId(), organizationId, ...definition };
    await this.db('workflow_templates').insert({
      id: template.id,
      organization_id: organizationId,
      name: definition.name,
      pages: JSON.stringify(definition.pages),
      created_at: new Date(),
    });
    return template;
  }

  /** The template if it exists and belongs to the organization; undefined otherwise. */
  async findForOrganization(organizationId: string, id: string): Promise<Template | undefined> {
    const template = (await this.findByIds([id])).get(id);
    return template?.organizationId === organizationId ? template : undefined;
  }

  /**
   * Templates by id, whatever their organization (for reading runs, whose rows name theirs):
   * from the cache, and those not cached in one query.
   */
  async findByIds(ids: readonly string[]): Promise<Map<string, Template>> {
    const found = new Map<string, Template>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const template = this.cache.get(id);
      if (template) found.set(id, template);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const rows = await this.db<TemplateRow>('workflow_templates').whereIn('id', missing);
    if (this.cache.size + rows.length > CACHE_LIMIT) this.cache.clear();
    for (const row of rows) {
      const template = fromRow(row);
      this.cache.set(template.id, template);
      found.set(template.id, template);
    }
    return found;
  }

  /** A page of the organization's templates, newest first, after the given seq. */
  async list(
    organizationId: string,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<Template & { seq: number }>> {
    // FORCE INDEX keeps a deep page a range scan on (organization_id, seq); see RunStore.
    const query = this.db<TemplateRow>(
      this.db.raw('?? FORCE INDEX (workflow_templates_org_seq)', ['workflow_templates']),
    )
      .select('seq', 'id', 'organization_id', 'name', 'pages')
      .where('organization_id', organizationId)
      .orderBy('seq', 'desc')
      .limit(limit);
    if (beforeSeq !== null) query.andWhere('seq', '<', beforeSeq);
    const rows = await query;
    return rows.map((row) => ({ ...fromRow(row), seq: Number(row.seq) }));
  }
}
