// The audit log in MySQL. Entries are written only inside the transaction of the change they
// record (insertAuditEntries takes that transaction's query), never on their own; reads are
// the organization's, newest first, in keyset pages.
import type { TxQuery } from '../db.js';
import { newId } from '../lib/ids.js';
import { actorJson, actorRef } from './actor.js';
import type { NewAuditEntry } from './audit-events.js';

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
