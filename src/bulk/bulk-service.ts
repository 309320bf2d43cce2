// Bulk cancel and retry by filter: the API's side. A request is checked (a filter of at least
// one parameter, valid values), stored as a running bulk action with its audit entry in one
// transaction, answered 202, and handed to the workers (src/jobs/bulk-action.ts). The work is
// BulkRunner's; the reconciler gives a running action whose job Redis lost a job again.
import type { Principal } from '../auth/principal.js';
import { DomainError, pointer } from '../errors.js';
import { answered, type IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import type { BulkActionJobs } from '../jobs/bulk-action.js';
import { beginWrite, type WriteGate } from '../lib/deadline.js';
import { newId } from '../lib/ids.js';
import { filterInput, isEmptyFilter, toRunFilter, type FilterSource } from '../runs/run-filter.js';
import type { BulkActionBody, BulkActionKind, BulkActionView } from './bulk-schemas.js';
import type { BulkActionRow, BulkStore, NewBulkAction } from './bulk-store.js';

/** A bulk action's filter sits in its body's `filter`. */
const BODY_FILTER: FilterSource = { code: 'invalid_body', at: ['filter'] };

/** A bulk action as clients read it. */
export function toBulkView(row: BulkActionRow): BulkActionView {
  return {
    id: row.id,
    action: row.action,
    status: row.status,
    filter: JSON.parse(row.filter) as Record<string, unknown>,
    ...(row.reason !== null ? { reason: row.reason } : {}),
    matched: Number(row.matched),
    done: Number(row.done),
    skipped: JSON.parse(row.skipped) as Record<string, number>,
    startedAt: row.started_at.toISOString(),
    ...(row.finished_at ? { finishedAt: row.finished_at.toISOString() } : {}),
  };
}

export class BulkService {
  constructor(
    private readonly store: BulkStore,
    private readonly jobs: BulkActionJobs,
  ) {}

  async start(
    principal: Principal,
    action: BulkActionKind,
    body: BulkActionBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<BulkActionView> {
    const filter = filterInput(body.filter ?? {});
    if (isEmptyFilter(filter)) {
      throw new DomainError(
        'filter_required',
        'a bulk action needs a filter: give at least one of the list filters in `filter`',
        pointer('filter'),
      );
    }
    toRunFilter(filter, BODY_FILTER); // its values checked now, not by a worker later
    const made: NewBulkAction = {
      id: newId(),
      organizationId: principal.organizationId,
      action,
      filter,
      reason: body.reason,
      actor: principal.actor,
      startedAt: new Date(),
    };
    const view: BulkActionView = {
      id: made.id,
      action,
      status: 'running',
      filter,
      ...(made.reason !== undefined ? { reason: made.reason } : {}),
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
        data: { action, filter, ...(made.reason !== undefined ? { reason: made.reason } : {}) },
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
