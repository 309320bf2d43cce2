// The template endpoints' logic, behind thin routes (and the admin CLI's import-template):
// creating a template, saving a new version of it guarded by the version the caller read,
// reading one version or the list of them, archiving and restoring. Every call is scoped to the
// caller's organization: another organization's template is not found.
import type { Principal } from '../auth/principal.js';
import { DomainError, pointer } from '../errors.js';
import { answered, type IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import { NO_DEADLINE, beginWrite, type WriteGate } from '../lib/deadline.js';
import type { TemplateDefinition } from './definition/definition-types.js';
import { checkDefinition } from './definition/template-definition.js';
import type { Template } from './template.js';
import type {
  CreateTemplateBody,
  UpdateTemplateBody,
  WorkflowTemplateDetail,
  WorkflowTemplateVersionView,
} from './template-schemas.js';
import type { VersionSummary } from './template-lists.js';
import type { TemplateStore } from './template-store.js';
import { createdState, type TemplateState } from './template-writes.js';

/** Who asks: an API key (its organization and actor), or an operator naming an organization. */
export type Caller = Pick<Principal, 'organizationId' | 'actor'>;

const notFound = (id: string) =>
  new DomainError('template_not_found', `workflow template '${id}' not found`);

/** One version of a template in full, with the template's own state. */
export function toDetail({ head, version }: TemplateState): WorkflowTemplateDetail {
  const detail: WorkflowTemplateDetail = {
    id: head.id,
    version: version.version,
    latestVersion: head.latestVersion,
    archived: head.archived,
    name: version.name,
    pages: version.pages,
    ...(version.rules ? { rules: version.rules } : {}),
    createdAt: head.createdAt.toISOString(),
    updatedAt: head.updatedAt.toISOString(),
    versionCreatedAt: version.createdAt.toISOString(),
  };
  if (version.createdBy) detail.versionCreatedBy = version.createdBy;
  return detail;
}

function toVersionView(summary: VersionSummary): WorkflowTemplateVersionView {
  const view: WorkflowTemplateVersionView = {
    version: summary.version,
    name: summary.name,
    createdAt: summary.createdAt.toISOString(),
    pageCount: summary.pageCount,
    fieldCount: summary.fieldCount,
  };
  if (summary.createdBy) view.createdBy = summary.createdBy;
  return view;
}

/** The key a request claimed, with the template as its answer (a 200). */
const detailAnswer = (claim: IdempotencyClaim | undefined) => (state: TemplateState) =>
  answered(claim, 200, () => JSON.stringify(toDetail(state)));

export class TemplateService {
  constructor(private readonly store: TemplateStore) {}

  async create(
    caller: Caller,
    body: CreateTemplateBody,
    gate: WriteGate = NO_DEADLINE,
    claim?: IdempotencyClaim,
  ): Promise<WorkflowTemplateDetail> {
    // The schema admits what the types say and a little more (definition-schema.ts), which
    // checkDefinition refuses.
    const definition = body as TemplateDefinition;
    checkDefinition(definition);
    beginWrite(gate);
    const version = await this.store.insert(
      caller.organizationId,
      definition,
      caller.actor,
      detailAnswer(claim),
    );
    return toDetail(createdState(version));
  }

  /**
   * Saves a new version, expected_version + 1; 409 when expected_version is not the latest
   * any more (someone else saved first), with the latest in the message. An archived template
   * takes new versions too: archiving stops new runs, not edits.
   */
  async update(
    caller: Caller,
    body: UpdateTemplateBody,
    gate: WriteGate = NO_DEADLINE,
    claim?: IdempotencyClaim,
  ): Promise<WorkflowTemplateDetail> {
    const { name, pages, rules } = body as UpdateTemplateBody & Omit<TemplateDefinition, 'name'>;
    checkDefinition({ name: name ?? '', pages, rules });
    beginWrite(gate);
    const saved = await this.store.saveVersion(
      caller.organizationId,
      body.id,
      body.expected_version,
      { name, pages, rules },
      caller.actor,
      detailAnswer(claim),
    );
    if (saved.ok) return toDetail(saved.state);
    if (saved.reason === 'not_found') throw notFound(body.id);
    throw new DomainError(
      'template_version_conflict',
      `expected_version is ${body.expected_version}, but the latest version is ${saved.latestVersion}: read it, then save from it`,
      pointer('expected_version'),
    );
  }

  /** The current latest version of the organization's template (for the CLI's import). */
  async latestVersion(caller: Pick<Caller, 'organizationId'>, id: string): Promise<number> {
    const found = await this.store.find(caller.organizationId, id);
    if (typeof found !== 'object') throw notFound(id);
    return found.head.latestVersion;
  }

  async get(
    caller: Pick<Caller, 'organizationId'>,
    id: string,
    version?: number,
  ): Promise<WorkflowTemplateDetail> {
    const found = await this.store.find(caller.organizationId, id, version);
    if (found === undefined) throw notFound(id);
    if (found === 'no_version') {
      throw new DomainError(
        'template_version_not_found',
        `workflow template '${id}' has no version ${version}`,
        pointer('version'),
      );
    }
    return toDetail(found);
  }

  async listVersions(
    caller: Pick<Caller, 'organizationId'>,
    id: string,
    limit: number,
    beforeVersion: number | null,
  ): Promise<Array<{ seq: number; view: WorkflowTemplateVersionView }>> {
    const page = await this.store.listVersions(caller.organizationId, id, limit, beforeVersion);
    if (!page) throw notFound(id);
    return page.map((summary) => ({ seq: summary.seq, view: toVersionView(summary) }));
  }

  /** Archives or restores; a template already so is answered as it is (nothing recorded). */
  async setArchived(
    caller: Caller,
    id: string,
    archived: boolean,
    gate: WriteGate = NO_DEADLINE,
    claim?: IdempotencyClaim,
  ): Promise<WorkflowTemplateDetail> {
    beginWrite(gate);
    const state = await this.store.setArchived(
      caller.organizationId,
      id,
      archived,
      caller.actor,
      detailAnswer(claim),
    );
    if (!state) throw notFound(id);
    return toDetail(state);
  }

  list(
    caller: Pick<Caller, 'organizationId'>,
    archived: boolean,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<Template & { seq: number }>> {
    return this.store.list(caller.organizationId, archived, limit, beforeSeq);
  }
}
