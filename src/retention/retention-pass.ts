// One pass of the retention (the run-retention job): for every organization whose finished
// runs expire, delete those that finished more than its retention ago, a batch per
// transaction with a pause between batches (so requests keep the database: see
// docs/performance.md, Retention), then its delivery log and audit entries older than that. A
// batch has the effects of a deletion by the API except the run.deleted event
// (docs/retention.md). A stopped worker ends its pass between two batches; the next pass goes on.
import type { RetentionConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { RunDeletionStore } from './deletion-store.js';
import type { SettingsStore } from './settings-store.js';

const DAY_MS = 86_400_000;

export interface RetentionOutcome {
  runs: number;
  deliveries: number;
  auditEntries: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class RetentionPass {
  constructor(
    private readonly deletions: RunDeletionStore,
    private readonly settings: SettingsStore,
    private readonly config: RetentionConfig,
    private readonly log: Logger,
    /** True once the process is stopping: the pass ends after the batch in hand. */
    private readonly stopping: () => boolean = () => false,
  ) {}

  async run(now = new Date()): Promise<RetentionOutcome> {
    const done: RetentionOutcome = { runs: 0, deliveries: 0, auditEntries: 0 };
    const { batch, pauseMs } = this.config;
    for (const { organizationId, days } of await this.settings.retentions(
      this.config.defaultDays,
    )) {
      const before = new Date(now.getTime() - days * DAY_MS);
      for (;;) {
        if (this.stopping()) return done;
        const deleted = await this.deletions.deleteExpired(organizationId, before, batch);
        done.runs += deleted;
        if (deleted < batch) break;
        if (pauseMs > 0) await sleep(pauseMs);
      }
      for (;;) {
        if (this.stopping()) return done;
        const purged = await this.deletions.purgeLogs(organizationId, before, batch);
        done.deliveries += purged.deliveries;
        done.auditEntries += purged.auditEntries;
        if (!purged.more) break;
        if (pauseMs > 0) await sleep(pauseMs);
      }
    }
    if (done.runs + done.deliveries + done.auditEntries > 0) {
      this.log.info('retention pass', { ...done });
    }
    return done;
  }
}
