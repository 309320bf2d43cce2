// What the live event stream reads in MySQL: the ids committed after the watermark (every
// organization's: the watermark is the process's), the locking read that waits for what is
// in flight in a gap of ids, and an organization's events in a range of ids with the history
// their webhook payloads are folded from. Reads only.
import { writeTransaction, type Db } from '../db.js';
import type { RunSummary } from '../runs/run-schemas.js';
import {
  fromEventRow,
  type RunEvent,
  type RunEventTableRow,
  type RunEventType,
} from '../runs/run-events.js';
import { SUMMARY_COLUMNS, type RunSummaryRow } from '../runs/run-list.js';
import { toSummary } from '../runs/run-views.js';

/** A gap of ids: every id strictly between `after` and `before` is missing. */
export interface IdGap {
  after: number;
  before: number;
}

/** What a stream lets through: one run, some types, or everything of its organization. */
export interface StreamFilter {
  runId?: string;
  types?: readonly RunEventType[];
}

/** One event as a stream sends it: its id, its type and its webhook payload's parts. */
export interface StreamedEvent {
  id: number;
  runId: string;
  event: RunEvent;
}

/** More gaps than this are probed as one range. */
const MAX_PROBED_GAPS = 100;

const EVENT_COLUMNS = ['id', 'run_id', 'organization_id', 'seq', 'type', 'at', 'data', 'actor'];

export class StreamStore {
  constructor(
    private readonly db: Db,
    /** Bound on a probe: longer than any writer's transaction may stay open. */
    private readonly probeTimeoutMs: number,
  ) {}

  /** The highest id committed, 0 for none. */
  async maxId(): Promise<number> {
    const row = (await this.db('run_events').max('id as id').first()) as
      { id: number | string | null } | undefined;
    return Number(row?.id ?? 0);
  }

  /** Committed ids after `after`, ascending (a range of the primary key). */
  async idsAfter(after: number, limit: number): Promise<number[]> {
    const rows = (await this.db('run_events')
      .select('id')
      .where('id', '>', after)
      .orderBy('id', 'asc')
      .limit(limit)) as Array<{ id: number | string }>;
    return rows.map((row) => Number(row.id));
  }

  /**
   * Waits until no transaction holds an uncommitted event in the gaps: a locking read of the
   * gaps' ranges, READ COMMITTED (no gap locks, so no writer is held up by it), which waits
   * on every row inserted there and not yet committed or rolled back. When it returns, every
   * id of the gaps that was inserted is committed or gone for good.
   */
  async probe(given: readonly IdGap[]): Promise<void> {
    let gaps = given;
    if (gaps.length === 0) return;
    if (gaps.length > MAX_PROBED_GAPS) {
      // Many gaps (a process starting over old ones): one range over them all, which locks
      // the committed rows between them too, for as long as the probe lasts.
      gaps = [{ after: gaps[0]!.after, before: gaps[gaps.length - 1]!.before }];
    }
    const where = gaps.map(() => '(id > ? AND id < ?)').join(' OR ');
    const values = gaps.flatMap((gap) => [gap.after, gap.before]);
    await writeTransaction(
      this.db,
      this.probeTimeoutMs,
      async (query) => {
        await query(`SELECT id FROM run_events WHERE ${where} LOCK IN SHARE MODE`, values);
      },
      { readCommitted: true },
    );
  }

  /**
   * The organization's events with ids in (after, upTo], in id order, filtered: one range
   * scan of (organization_id, id).
   */
  async events(
    organizationId: string,
    after: number,
    upTo: number,
    filter: StreamFilter,
    limit: number,
  ): Promise<Array<RunEventTableRow & { id: number }>> {
    const query = this.db('run_events')
      .select(EVENT_COLUMNS)
      .where('organization_id', organizationId)
      .andWhere('id', '>', after)
      .andWhere('id', '<=', upTo)
      .orderBy('id', 'asc')
      .limit(limit);
    if (filter.runId !== undefined) query.andWhere('run_id', filter.runId);
    if (filter.types !== undefined) query.whereIn('type', [...filter.types]);
    const rows = (await query) as unknown as Array<RunEventTableRow & { id: number | string }>;
    return rows.map((row) => ({ ...row, id: Number(row.id) }));
  }

  /** The runs' histories up to the given seq each, in order (one query). */
  async histories(upToSeq: ReadonlyMap<string, number>): Promise<Map<string, RunEvent[]>> {
    const out = new Map<string, RunEvent[]>();
    if (upToSeq.size === 0) return out;
    const rows = (await this.db('run_events')
      .select(EVENT_COLUMNS)
      .whereIn('run_id', [...upToSeq.keys()])
      .orderBy([
        { column: 'run_id', order: 'asc' },
        { column: 'seq', order: 'asc' },
      ])) as RunEventTableRow[];
    for (const row of rows) {
      if (Number(row.seq) > (upToSeq.get(row.run_id) ?? 0)) continue;
      const list = out.get(row.run_id) ?? [];
      list.push(fromEventRow(row));
      out.set(row.run_id, list);
    }
    return out;
  }

  /** The runs' summaries as they are now (for runs older than their history). */
  async currentSummaries(runIds: readonly string[]): Promise<Map<string, RunSummary>> {
    if (runIds.length === 0) return new Map();
    const rows = (await this.db('workflow_runs')
      .select(...SUMMARY_COLUMNS)
      .whereIn('id', [...runIds])) as RunSummaryRow[];
    return new Map(rows.map((row) => [row.id, toSummary(row)]));
  }

  /** Whether the organization has the run. */
  async hasRun(organizationId: string, runId: string): Promise<boolean> {
    const row = (await this.db('workflow_runs')
      .select('id')
      .where({ id: runId, organization_id: organizationId })
      .first()) as { id: string } | undefined;
    return row !== undefined;
  }
}
