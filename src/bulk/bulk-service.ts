// Bulk cancel, retry and migration by filter: the API's side. A request is checked (a filter of
// at least one parameter, valid values; a migration's plan), stored as a running bulk action with its audit entry in one
// transaction, answered 202, and handed to the workers (src/jobs/bulk-action.ts). The work is
// BulkRunner's; the reconciler gives a running action whose job Redis lost a job again.
import type { Principal } from '../auth/principal.js';
import { DomainError, pointer } from '../errors.js';
import { answered, type IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import type { BulkActionJobs } from '../jobs/bulk-action.js';
import { beginWrite, type WriteGate } from '../lib/deadline.js';
import { newId } from '../lib/ids.js';
import {
  filterInput,
  isEmptyFilter,
  toRunFilter,
  type FilterSource,
  type RunFilterInput,
} from '../runs/run-filter.js';
import { loadPlan } from '../run-migration/migration-plans.js';
import type { TemplateStore } from '../templates/template-store.js';
import type {
  BulkActionBody,
  BulkActionKind,
  BulkActionView,
  BulkMigrateBody,
} from './bulk-schemas.js';
import type { BulkActionRow, BulkStore, NewBulkAction, StoredPlan } from './bulk-store.js';

/** A bulk action's filter sits in its body's `filter`. */
const BODY_FILTER: FilterSource = { code: 'invalid_body', at: ['filter'] };

/** A bulk action as clients read it. */
export function toBulkView(row: BulkActionRow): BulkActionView {
  const plan = row.plan === null ? undefined : (JSON.parse(row.plan) as StoredPlan);
  return {
    id: row.id,
    action: row.action,
    status: row.status,
    filter: JSON.parse(row.filter) as Record<string, unknown>,
    ...(row.reason !== null ? { reason: row.reason } : {}),
    ...(plan ? { migration: migrationView(plan) } : {}),
    ...(plan?.dryRun ? { dryRun: true as const } : {}),
    matched: Number(row.matched),
    done: Number(row.done),
    skipped: JSON.parse(row.skipped) as Record<string, number>,
    startedAt: row.started_at.toISOString(),
    ...(row.finished_at ? { finishedAt: row.finished_at.toISOString() } : {}),
  };
}

/** The plan as get-bulk-action shows it (without dryRun, which the view shows beside it). */
function migrationView({ dryRun: _dryRun, ...plan }: StoredPlan): BulkActionView['migration'] {
  return plan;
}

export class BulkService {
  constructor(
    private readonly store: BulkStore,
    private readonly jobs: BulkActionJobs,
    private readonly templates: TemplateStore,
  ) {}

  /** A bulk cancel or retry. */
  start(
    principal: Principal,
    action: Exclude<BulkActionKind, 'migrate'>,
    body: BulkActionBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<BulkActionView> {
    return this.begin(
      principal,
      action,
      checkedFilter(body.filter),
      body.reason,
      undefined,
      gate,
      claim,
    );
  }

  /**
   * A bulk migration: the runs of one template (filter.template_id, the organization's) at
   * from_version, moved by one plan, checked now (a plan's refusals are the same for every run).
   */
  async startMigration(
    principal: Principal,
    body: BulkMigrateBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<BulkActionView> {
    const filter = checkedFilter(body.filter);
    const templateId = filter.template_id;
    if (templateId === undefined) {
      throw new DomainError(
        'filter_required',
        'a bulk migration moves the runs of one template: give filter.template_id',
        pointer('filter', 'template_id'),
      );
    }
    if (filter.template_version !== undefined && filter.template_version !== body.from_version) {
      throw new DomainError(
        'invalid_body',
        'filter.template_version, when given, must be from_version',
        pointer('filter', 'template_version'),
      );
    }
    if (!(await this.templates.head(principal.organizationId, templateId))) {
      // The same answer for another organization's template as for none.
      throw new DomainError(
        'unknown_template',
        `workflow template '${templateId}' not found`,
        pointer('filter', 'template_id'),
      );
    }
    await loadPlan(this.templates, {
      templateId,
      fromVersion: body.from_version,
      toVersion: body.to_version,
      pageMap: body.page_map,
      dropIncompatible: body.drop_incompatible,
    });
    const plan: StoredPlan = {
      fromVersion: body.from_version,
      toVersion: body.to_version,
      ...(body.page_map !== undefined ? { pageMap: body.page_map } : {}),
      ...(body.drop_incompatible !== undefined ? { dropIncompatible: body.drop_incompatible } : {}),
      ...(body.dry_run ? { dryRun: true } : {}),
    };
    return this.begin(principal, 'migrate', filter, undefined, plan, gate, claim);
  }

  private async begin(
    principal: Principal,
    action: BulkActionKind,
    filter: RunFilterInput,
    reason: string | undefined,
    plan: StoredPlan | undefined,
    gate: WriteGate,
    claim: IdempotencyClaim | undefined,
  ): Promise<BulkActionView> {
    const made: NewBulkAction = {
      id: newId(),
      organizationId: principal.organizationId,
      action,
      filter,
      reason,
      actor: principal.actor,
      startedAt: new Date(),
      plan,
    };
    const view: BulkActionView = {
      id: made.id,
      action,
      status: 'running',
      filter,
      ...(made.reason !== undefined ? { reason: made.reason } : {}),
      ...(plan ? { migration: migrationView(plan) } : {}),
      ...(plan?.dryRun ? { dryRun: true as const } : {}),
      matched: 0,
      done: 0,
      skipped: {},
      startedAt: made.startedAt.toISOString(),
    };
    beginWrite(gate);
    await this.store.create(
      made,
      {
        organizationId: made.organizationId,
        type: 'bulk_action.created',
        actor: principal.actor,
        targetId: made.id,
        data: {
          action,
          filter,
          ...(made.reason !== undefined ? { reason: made.reason } : {}),
          ...(plan ? { migration: { ...plan } } : {}),
        },
        at: made.startedAt,
      },
      answered(claim, 202, () => JSON.stringify(view)),
    );
    // Best effort: the reconciler gives a running action a job if Redis did not take this one.
    await this.jobs.enqueue([made.id]);
    return view;
  }

  /** The organization's bulk action; 404 for another organization's, or none. */
  async get(principal: Principal, id: string): Promise<BulkActionView> {
    const row = await this.store.find(principal.organizationId, id);
    if (!row) {
      throw new DomainError('bulk_action_not_found', `bulk action '${id}' not found`);
    }
    return toBulkView(row);
  }
}

/** A bulk action's filter, checked: at least one parameter, each value valid (not later, by a worker). */
function checkedFilter(given: RunFilterInput | undefined): RunFilterInput {
  const filter = filterInput(given ?? {});
  if (isEmptyFilter(filter)) {
    throw new DomainError(
      'filter_required',
      'a bulk action needs a filter: give at least one of the list filters in `filter`',
      pointer('filter'),
    );
  }
  toRunFilter(filter, BODY_FILTER);
  return filter;
}
