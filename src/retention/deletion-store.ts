// Deleting runs in MySQL: a run asked for by the API, or a batch of runs whose retention ended.
// Either is one transaction that removes the runs with everything they left: their history
// (run_events), their webhook deliveries with their attempts (sent or not: an attempt keeps the
// receiver's answer, which may echo inputs), and the Idempotency-Key answers that show them.
// A deletion by the API leaves one row behind: the run's run.deleted event, with nothing
// personal in it, for the webhooks (and any reader of run_events) to see.
//
// Lock order, the same as every writer of runs: the run's row first (FOR UPDATE), then its
// events, then its deliveries. A worker applying a change to the run waits for the row and then
// finds nothing: its guarded UPDATE matches no row, and its events are inserted only where the
// run's row holds the change (run-sql.ts), so nothing is made again.
import { deleteTermsSql } from '../tasks/task-terms.js';
import { writeTransaction, type Db, type TxQuery } from '../db.js';
import { actorJson, type Actor } from '../audit/actor.js';
import { insertIdempotencySql, type IdempotencyRecord } from '../idempotency/idempotency-keys.js';
import type { RunEventData } from '../runs/run-events.js';
import type { RunStatus } from '../runs/run-status.js';

/** What is left of a run deleted by the API: what its run.deleted event says. */
export interface DeletedRun {
  id: string;
  organizationId: string;
  status: RunStatus;
  workflowName: string;
  /** The run.deleted event's place in the run's history. */
  seq: number;
  at: Date;
}

type Rows<T> = T[];

/**
 * Removes the runs (their rows locked by the caller) and everything they left. Every statement
 * names its index (the multi-table form of DELETE, the one that takes index hints): each is a
 * range of the runs' ids, whatever the optimizer guesses from its statistics. Left to itself,
 * on an organization with few deliveries or keys MariaDB read the deliveries through
 * (organization_id, seq) and the keys through (organization_id, idem_key), every one of the
 * organization's, and webhook_attempts from end to end.
 */
async function removeRuns(query: TxQuery, organizationId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await query('DELETE e FROM run_events e FORCE INDEX (run_events_run_seq) WHERE e.run_id IN (?)', [
    ids,
  ]);
  await query(
    `DELETE a FROM webhook_deliveries d FORCE INDEX (webhook_deliveries_org_run_seq)
      STRAIGHT_JOIN webhook_attempts a FORCE INDEX (webhook_attempts_delivery) ON a.delivery_id = d.id
      WHERE d.organization_id = ? AND d.run_id IN (?)`,
    [organizationId, ids],
  );
  await query(
    `DELETE d FROM webhook_deliveries d FORCE INDEX (webhook_deliveries_org_run_seq)
      WHERE d.organization_id = ? AND d.run_id IN (?)`,
    [organizationId, ids],
  );
  await query(
    `DELETE k FROM idempotency_keys k FORCE INDEX (idempotency_keys_org_run)
      WHERE k.organization_id = ? AND k.run_id IN (?)`,
    [organizationId, ids],
  );
  // Labels are the caller's own identifiers (a customer, an order): they go with the run.
  await query(
    `DELETE l FROM workflow_runs r FORCE INDEX (workflow_runs_id_unique)
      STRAIGHT_JOIN run_labels l FORCE INDEX (run_labels_run_seq) ON l.run_seq = r.seq
      WHERE r.id IN (?)`,
    [ids],
  );
  // The inbox's terms of a run deleted while active (a label is one).
  await query(deleteTermsSql('r.id IN (?)'), [ids]);
  await query(
    'DELETE r FROM workflow_runs r FORCE INDEX (workflow_runs_id_unique) WHERE r.id IN (?)',
    [ids],
  );
}

export class RunDeletionStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
    /** Told the organization after a run.deleted event commits (src/streams/). */
    private readonly onEventsCommitted: (organizationIds: readonly string[]) => void = () =>
      undefined,
  ) {}

  /**
   * Deletes the organization's run and everything it left, and writes its run.deleted event
   * and the request's Idempotency-Key (made from what was deleted), in one transaction.
   * Undefined when the organization has no such run (nothing is written then).
   */
  async deleteRun(
    organizationId: string,
    runId: string,
    actor: Actor,
    now: Date,
    key: (deleted: DeletedRun) => IdempotencyRecord | undefined,
  ): Promise<DeletedRun | undefined> {
    const deleted = await this.writeDeletion(organizationId, runId, actor, now, key);
    if (deleted) this.onEventsCommitted([deleted.organizationId]);
    return deleted;
  }

  private writeDeletion(
    organizationId: string,
    runId: string,
    actor: Actor,
    now: Date,
    key: (deleted: DeletedRun) => IdempotencyRecord | undefined,
  ): Promise<DeletedRun | undefined> {
    return writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query) => {
        const [row] = (await query(
          `SELECT id, status, workflow_name, event_seq, last_activity FROM workflow_runs
            WHERE id = ? AND organization_id = ? FOR UPDATE`,
          [runId, organizationId],
        )) as unknown as Rows<{
          id: string;
          status: RunStatus;
          workflow_name: string;
          event_seq: number;
          last_activity: Date;
        }>;
        if (!row) return undefined;
        await removeRuns(query, organizationId, [row.id]);
        // Never before the run's last change: its history stays in order of time.
        const at = new Date(Math.max(now.getTime(), row.last_activity.getTime()));
        const deleted: DeletedRun = {
          id: row.id,
          organizationId,
          status: row.status,
          workflowName: row.workflow_name,
          seq: Number(row.event_seq) + 1,
          at,
        };
        const data: RunEventData<'run.deleted'> = {
          workflowName: deleted.workflowName,
          status: deleted.status,
        };
        await query(
          `INSERT INTO run_events (run_id, organization_id, seq, type, at, data, actor)
           VALUES (?, ?, ?, 'run.deleted', ?, ?, ?)`,
          [deleted.id, organizationId, deleted.seq, at, JSON.stringify(data), actorJson(actor)],
        );
        const keySql = insertIdempotencySql(
          [key(deleted)].filter((k): k is IdempotencyRecord => k !== undefined),
          now,
        );
        if (keySql) await query(keySql);
        return deleted;
      },
      // Only the rows named are locked, not the gaps beside them: inserts go on.
      { readCommitted: true },
    );
  }

  /**
   * Deletes up to `limit` of the organization's runs that finished before `before`, with
   * everything they left, in one transaction; returns how many. Runs another writer holds at
   * the moment (a retry of a failed run) are skipped, and left for the next batch. No
   * run.deleted event: a retention is known to every client (docs/retention.md).
   */
  async deleteExpired(organizationId: string, before: Date, limit: number): Promise<number> {
    return writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query) => {
        // One range scan of (organization_id, finished_at): finished_at is NULL until a run
        // finishes (see the retention migration), so unfinished runs are never read.
        const rows = (await query(
          `SELECT id FROM workflow_runs FORCE INDEX (workflow_runs_org_finished)
            WHERE organization_id = ? AND finished_at < ?
            ORDER BY finished_at LIMIT ? FOR UPDATE SKIP LOCKED`,
          [organizationId, before, limit],
        )) as unknown as Rows<{ id: string }>;
        const ids = rows.map((r) => r.id);
        await removeRuns(query, organizationId, ids);
        // What the insights' fold keeps of a run that may still change (its labels among it):
        // a deletion by the API leaves it to the fold, which takes the run out of the open runs
        // when it folds the run.deleted event; retention writes none, and its runs are finished.
        await query('DELETE FROM insight_runs WHERE run_id IN (?)', [ids]);
        return ids.length;
      },
      { readCommitted: true },
    );
  }

  /**
   * Deletes up to `limit` entries of the organization's delivery log (sent or failed: never
   * one still owed) and up to `limit` of its audit entries made before `before`; returns how
   * many of each, and whether more may be due. The logs follow the runs' retention.
   */
  async purgeLogs(
    organizationId: string,
    before: Date,
    limit: number,
  ): Promise<{ deliveries: number; auditEntries: number; more: boolean }> {
    return writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query) => {
        // Each log is read oldest first, `limit` entries at most, and only up to its first entry
        // as new as the cutoff: entries are written in time order, so what follows is newer.
        // Without that bound, a pass with nothing left to purge would read the organization's
        // whole log looking for old entries.
        const deliveries = (await query(
          `SELECT id, status, created_at FROM webhook_deliveries FORCE INDEX (webhook_deliveries_org_seq)
            WHERE organization_id = ? ORDER BY seq LIMIT ?`,
          [organizationId, limit],
        )) as unknown as Rows<{ id: string; status: string; created_at: Date }>;
        const oldDeliveries = oldest(deliveries, (d) => d.created_at, before);
        // A delivery still owed stays, however old: it is not yet a log entry.
        const ids = oldDeliveries.filter((d) => d.status !== 'pending').map((d) => d.id);
        if (ids.length > 0) {
          await query(
            'DELETE a FROM webhook_attempts a FORCE INDEX (webhook_attempts_delivery) WHERE a.delivery_id IN (?)',
            [ids],
          );
          await query('DELETE FROM webhook_deliveries WHERE id IN (?)', [ids]);
        }
        const entries = (await query(
          `SELECT seq, at FROM audit_log FORCE INDEX (audit_log_org_seq)
            WHERE organization_id = ? ORDER BY seq LIMIT ?`,
          [organizationId, limit],
        )) as unknown as Rows<{ seq: number; at: Date }>;
        const oldEntries = oldest(entries, (e) => e.at, before);
        if (oldEntries.length > 0) {
          await query('DELETE FROM audit_log WHERE seq IN (?)', [oldEntries.map((e) => e.seq)]);
        }
        return {
          deliveries: ids.length,
          auditEntries: oldEntries.length,
          // More may be due where a log's whole read was old (a delivery still owed at the
          // front of the log is read again next time, and is never purged while owed).
          more: (oldDeliveries.length === limit && ids.length > 0) || oldEntries.length === limit,
        };
      },
      { readCommitted: true },
    );
  }
}

/** The leading entries older than `before`, up to the first that is not. */
function oldest<T>(rows: readonly T[], at: (row: T) => Date, before: Date): T[] {
  const end = rows.findIndex((row) => at(row).getTime() >= before.getTime());
  return end === -1 ? [...rows] : rows.slice(0, end);
}
