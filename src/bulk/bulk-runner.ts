// The work of a bulk action, batch after batch (the job kind src/jobs/bulk-action.ts; its
// processor is workers/processors/bulk-action.ts). A batch is the next runs the action's filter
// matches below its cursor, newest first, read with the list's own query (run-list.ts), then
// changed as a single cancel, retry or migration changes a run (run-state.ts: the same
// transition, event and actor) in one transaction with the action's cursor and counts
// (bulk-store.ts). A dry run decides the same, and writes only its cursor and counts.
import { parseActor, SYSTEM } from '../audit/actor.js';
import { DomainError, isTransientError } from '../errors.js';
import type { Logger } from '../logger.js';
import { countChange } from '../metrics/metrics.js';
import { fromRow, type RunRow } from '../runs/run-columns.js';
import { toRunFilter, type RunFilterInput } from '../runs/run-filter.js';
import { RunStateError, type RunRecord } from '../runs/run-record.js';
import { cancelRun, migrateRun, retryRun, type MigrationPlan } from '../runs/run-state.js';
import { loadPlan } from '../run-migration/migration-plans.js';
import { needsTimeZone } from '../templates/definition/template-definition.js';
import type { TemplateStore } from '../templates/template-store.js';
import type { RunStore } from '../runs/run-store.js';
import type { BulkActionKind } from './bulk-schemas.js';
import {
  batchStart,
  type BatchDecision,
  type BulkActionRow,
  type BulkStore,
  type StoredPlan,
} from './bulk-store.js';

/** Runs changed per transaction. */
export const BULK_BATCH = 200;

/** What a bulk action's job did. */
export interface BulkRunResult {
  batches: number;
  changed: number;
  /** True when the action is completed (or gone); false when stopped for a shutdown. */
  finished: boolean;
}

/** Told after each batch is committed: the runs it changed. */
export type AfterBatch = (action: BulkActionKind, changed: readonly RunRecord[]) => Promise<void>;

/** How long to wait before trying a batch again after a deadlock or a lost connection. */
const TRANSIENT_PAUSE_MS = 200;
const TRANSIENT_ATTEMPTS = 20;

export interface BulkRunnerDeps {
  actions: BulkStore;
  runs: RunStore;
  /** A migration's template versions. */
  templates: TemplateStore;
  /** The organization's time zone, for a migration onto a version that counts days. */
  timeZoneOf: (organizationId: string) => Promise<string>;
  afterBatch: AfterBatch;
  log: Logger;
  batchSize?: number;
}

export class BulkRunner {
  private readonly actions: BulkStore;
  private readonly runs: RunStore;
  private readonly afterBatch: AfterBatch;
  private readonly log: Logger;
  private readonly batchSize: number;

  constructor(private readonly deps: BulkRunnerDeps) {
    this.actions = deps.actions;
    this.runs = deps.runs;
    this.afterBatch = deps.afterBatch;
    this.log = deps.log;
    this.batchSize = deps.batchSize ?? BULK_BATCH;
  }

  /** Works the action until it is completed, or until `stopping` says to stop (between batches). */
  async run(id: string, stopping: () => boolean = () => false): Promise<BulkRunResult> {
    const result: BulkRunResult = { batches: 0, changed: 0, finished: false };
    let transient = 0;
    while (!stopping()) {
      try {
        const read = await this.actions.findById(id);
        if (!read || read.status !== 'running') return { ...result, finished: true };
        const changed = await this.batch(read);
        if (changed === undefined) return { ...result, finished: true };
        result.batches++;
        result.changed += changed;
        transient = 0;
      } catch (err) {
        if (!isTransientError(err) || ++transient >= TRANSIENT_ATTEMPTS) throw err;
        this.log.warn('bulk action batch failed; trying again', { err, bulkActionId: id });
        await new Promise((resolve) => setTimeout(resolve, TRANSIENT_PAUSE_MS));
      }
    }
    return result;
  }

  /** One batch; undefined once nothing is left to match (the action is then completed). */
  private async batch(read: BulkActionRow): Promise<number | undefined> {
    const plan = read.plan === null ? undefined : (JSON.parse(read.plan) as StoredPlan);
    const filter = {
      ...toRunFilter(JSON.parse(read.filter) as RunFilterInput),
      // A migration moves the runs at its source version only.
      ...(plan ? { templateVersion: plan.fromVersion } : {}),
    };
    const candidates = await this.runs.listSummaries(
      read.organization_id,
      this.batchSize,
      batchStart(read),
      filter,
    );
    if (candidates.length === 0) {
      await this.actions.complete(read, new Date());
      return undefined;
    }
    const lowest = Math.min(...candidates.map((c) => Number(c.seq)));
    const outcome = await this.actions.applyBatch(
      read,
      candidates.map((c) => c.id),
      lowest,
      (rows) => this.decide(read, rows, plan),
    );
    if (!outcome.written) return 0; // another worker moved it on: read it again
    const changed = outcome.decision.changes.map((c) => c.after);
    for (const run of changed) countChange(read.action, run.events);
    await this.afterBatch(read.action, changed);
    return changed.length;
  }

  /**
   * Each locked run's change, as a single cancel, retry or migration would make it, or why it
   * is left; a dry run's changes are counted, not written.
   */
  private async decide(
    read: BulkActionRow,
    rows: RunRow[],
    stored: StoredPlan | undefined,
  ): Promise<BatchDecision> {
    const decision: BatchDecision = { changes: [], skipped: {} };
    const skip = (code: string) => (decision.skipped[code] = (decision.skipped[code] ?? 0) + 1);
    const pages = await this.runs.templatesFor(rows);
    const actor = parseActor(read.actor) ?? SYSTEM;
    const now = new Date();
    const plan = stored && (await this.plan(read, stored));
    const timeZone =
      plan && needsTimeZone(plan.to) ? await this.deps.timeZoneOf(read.organization_id) : undefined;
    for (const row of rows) {
      let before: RunRecord;
      try {
        before = fromRow(row, pages);
      } catch (err) {
        if (!(err instanceof RunStateError)) throw err;
        skip('run_unreadable');
        continue;
      }
      try {
        const after =
          read.action === 'cancel'
            ? cancelRun(before, read.reason ?? undefined, now, actor)
            : read.action === 'retry'
              ? retryRun(before, now, actor)
              : migrateRun(before, plan!, now, actor, timeZone).after;
        decision.changes.push({ before, after });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        skip(err.code);
      }
    }
    if (stored?.dryRun) {
      decision.wouldChange = decision.changes.length;
      decision.changes = [];
    }
    return decision;
  }

  /** The action's plan, checked when it was asked for: its versions never change. */
  private plan(read: BulkActionRow, stored: StoredPlan): Promise<MigrationPlan> {
    const filter = JSON.parse(read.filter) as RunFilterInput;
    return loadPlan(this.deps.templates, {
      templateId: filter.template_id!,
      fromVersion: stored.fromVersion,
      toVersion: stored.toVersion,
      pageMap: stored.pageMap,
      dropIncompatible: stored.dropIncompatible,
    });
  }
}
