// A migration's plan, from the template versions it names: what a single migration and a bulk
// one both check before touching a run (a plan's refusals are the same for every run).
import { DomainError, pointer } from '../errors.js';
import { planMigration, type MigrationPlan, type PageMapInput } from '../runs/run-state.js';
import { versionKey } from '../templates/template-rows.js';
import type { TemplateStore } from '../templates/template-store.js';

export interface PlanRequest {
  templateId: string;
  fromVersion: number;
  toVersion: number;
  pageMap?: PageMapInput;
  dropIncompatible?: boolean;
  /** Where from_version sits in the request, for its refusal (a single run's is the run's own). */
  fromAt?: string;
}

/**
 * The plan between two versions of a template (versions are cached for good by the store);
 * 400 unknown_template_version when the template lacks one of them, and the plan's own
 * refusals (invalid_page_map).
 */
export async function loadPlan(
  templates: TemplateStore,
  request: PlanRequest,
): Promise<MigrationPlan> {
  const { templateId, fromVersion, toVersion } = request;
  const found = await templates.findVersions([
    { id: templateId, version: fromVersion },
    { id: templateId, version: toVersion },
  ]);
  const from = found.get(versionKey(templateId, fromVersion));
  const to = found.get(versionKey(templateId, toVersion));
  if (!to) {
    throw new DomainError(
      'unknown_template_version',
      `workflow template '${templateId}' has no version ${toVersion}`,
      pointer('to_version'),
    );
  }
  if (!from) {
    throw new DomainError(
      'unknown_template_version',
      `workflow template '${templateId}' has no version ${fromVersion}`,
      request.fromAt ?? pointer('from_version'),
    );
  }
  return planMigration(from, to, request.pageMap, request.dropIncompatible ?? false);
}
