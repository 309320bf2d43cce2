// The audit log in MySQL. Entries are written only inside the transaction of the change they
// record (insertAuditEntries takes that transaction's query), never on their own; reads are
// the organization's, newest first, in keyset pages.
import type { Db, TxQuery } from '../db.js';
import { onPool, type Reader } from '../db-replicas.js';
import { newId } from '../lib/ids.js';
import { actorJson, actorRef, parseActor } from './actor.js';
import type { AuditEventType, NewAuditEntry } from './audit-events.js';
import type { AuditEntryView } from './audit-schemas.js';

/** Stores entries inside the transaction of the change they record. */
export async function insertAuditEntries(
  query: TxQuery,
  entries: readonly NewAuditEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  const values: unknown[] = [];
  for (const entry of entries) {
    values.push(
      newId(),
      entry.organizationId,
      entry.type,
      entry.at,
      actorRef(entry.actor),
      actorJson(entry.actor),
      entry.targetId,
      JSON.stringify(entry.data),
    );
  }
  await query(
    'INSERT INTO audit_log (id, organization_id, type, at, actor_ref, actor, target_id, data) VALUES ' +
      entries.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', '),
    values,
  );
}

/** Filters of the log; all optional, all combined. */
export interface AuditFilter {
  types?: AuditEventType[];
  /** A key's id, or 'system' / 'admin_cli' (audit_log.actor_ref). */
  actor?: string;
  after?: Date;
  before?: Date;
}

/** An entry as stored. */
export interface AuditRow {
  seq: number;
  id: string;
  organization_id: string;
  type: AuditEventType;
  at: Date;
  actor_ref: string;
  actor: string;
  target_id: string;
  data: string;
}

const LIST_COLUMNS = ['seq', 'id', 'type', 'at', 'actor', 'target_id', 'data'] as const;
type ListedRow = Pick<AuditRow, (typeof LIST_COLUMNS)[number]>;

/** An entry as clients read it. */
export function toAuditEntry(row: ListedRow): AuditEntryView {
  const actor = parseActor(row.actor);
  // Only insertAuditEntries writes the column, with actorJson: anything else is corruption.
  if (!actor) throw new Error(`audit entry ${row.id} has no valid actor`);
  return {
    id: row.id,
    type: row.type,
    at: row.at.toISOString(),
    actor,
    targetId: row.target_id,
    data: JSON.parse(row.data) as object,
  } as AuditEntryView;
}

/**
 * The index a page scans: the organization, then the actor or the type when filtered by one,
 * then seq (see migrations).
 */
function indexFor(filter: AuditFilter, type: AuditEventType | undefined): string {
  if (filter.actor !== undefined) return 'audit_log_org_actor_seq';
  if (type !== undefined) return 'audit_log_org_type_seq';
  return 'audit_log_org_seq';
}

export class AuditStore {
  constructor(
    private readonly db: Db,
    /** Where the API's reads of the log go (src/db-replicas.ts). */
    private readonly read: Reader = onPool(db),
  ) {}

  /**
   * A page of the organization's entries, newest first, before the given seq, filtered. As
   * the runs list does (run-list.ts): each page is a range scan of one index, FORCE INDEX so
   * that MariaDB does not read the index by its equality columns and filter seq row by row
   * (a page N entries deep would read N); several types are one scan each, merged, unless an
   * actor is given, whose index is scanned with the types checked on the rows it reads, as
   * are the times.
   */
  async list(
    organizationId: string,
    filter: AuditFilter,
    limit: number,
    beforeSeq: number | null,
  ): Promise<ListedRow[]> {
    return this.read((db) => this.readPage(db, organizationId, filter, limit, beforeSeq));
  }

  private async readPage(
    db: Db,
    organizationId: string,
    filter: AuditFilter,
    limit: number,
    beforeSeq: number | null,
  ): Promise<ListedRow[]> {
    const scan = (type: AuditEventType | undefined): Promise<ListedRow[]> => {
      const query = db<ListedRow>(
        db.raw(`?? FORCE INDEX (${indexFor(filter, type)})`, ['audit_log']),
      )
        .select(...LIST_COLUMNS)
        .where('organization_id', organizationId)
        .orderBy('seq', 'desc')
        .limit(limit);
      if (beforeSeq !== null) query.andWhere('seq', '<', beforeSeq);
      if (filter.actor !== undefined) query.andWhere('actor_ref', filter.actor);
      if (type !== undefined) query.andWhere('type', type);
      else if (filter.types?.length) query.whereIn('type', filter.types);
      if (filter.after) query.andWhere('at', '>', filter.after);
      if (filter.before) query.andWhere('at', '<', filter.before);
      return query as unknown as Promise<ListedRow[]>;
    };
    // By actor: one scan of its index, the types (if any) checked on the rows it reads.
    if (filter.actor !== undefined) return scan(undefined);
    const types = filter.types ?? [];
    if (types.length <= 1) return scan(types[0]);
    const pages = await Promise.all(types.map((type) => scan(type)));
    return pages
      .flat()
      .sort((a, b) => Number(b.seq) - Number(a.seq))
      .slice(0, limit);
  }
}
