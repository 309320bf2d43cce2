// Webhook deliveries in MySQL, which decide what is owed: an endpoint turn's claim of what is
// due and its record of every attempt, the order of one run's deliveries to one endpoint, when
// the endpoint's next turn is due, and which endpoints the reconciler gives a turn. They are
// made from committed events by the outbox's relay (outbox-store.ts); the log clients read and
// steer is delivery-log-store.ts. The rows are delivery-rows.ts; the statements delivery-sql.ts.
import type { Db, TxQuery } from '../db.js';
import { claimScript, inlineSql, writeScript, writeTransaction } from '../db.js';
import { sqlLiteral } from '../lib/sql-literal.js';
import type {
  AttemptContext,
  ClaimedDelivery,
  HistoryRow,
  TurnAttempt,
  TurnRecord,
} from './delivery-rows.js';
import {
  ATTEMPTABLE,
  NEXT_DUE,
  byRun,
  historiesSql,
  recordStatements,
  storedOf,
  unmoved,
} from './delivery-sql.js';
import {
  clearFailingSql,
  disableEndpoint,
  fromEndpointRow,
  markFailing,
  type EndpointRow,
} from './endpoint-store.js';

type Rows<T> = [T[], unknown];

export class DeliveryStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
  ) {}

  /**
   * An endpoint's turn takes its deliveries: up to `limit` attemptable and due by `now`, the
   * earliest due first, each with its endpoint, its event and the run's history up to it, held
   * until `until` so that no other turn attempts them meanwhile. Three round trips: the
   * endpoint and the candidates (one read); then a short transaction that locks only rows no
   * other turn is locking and keeps those whose round and attempt are still the ones read,
   * holds them, and reads their runs' histories after its COMMIT. Only the first owed of each
   * run is taken, so a turn attempts at most one delivery per run, and a run's next waits for
   * the one before it.
   */
  async claimTurn(
    endpointId: string,
    now: Date,
    limit: number,
    until: Date,
  ): Promise<AttemptContext[]> {
    const [[endpoints, candidates]] = (await this.db.raw(
      `SELECT * FROM webhook_endpoints WHERE id = ?;
       SELECT d.seq, d.id, d.organization_id, d.event_id, d.run_id, d.event_seq, d.round,
              d.attempts
         FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.endpoint_id = ? AND d.next_attempt_at <= ? AND ${ATTEMPTABLE}
        ORDER BY d.next_attempt_at LIMIT ?`,
      [endpointId, endpointId, now, now, limit],
    )) as [[EndpointRow[], ClaimedDelivery[]], unknown];
    const endpointRow = endpoints[0];
    if (!endpointRow || candidates.length === 0) return [];

    let mine: ClaimedDelivery[] = [];
    const { after } = await claimScript(
      this.db,
      this.writeTimeoutMs,
      `SELECT seq, round, attempts FROM webhook_deliveries
        WHERE seq IN (${candidates.map((d) => Number(d.seq)).join(', ')}) AND status = 'pending'
          AND (locked_until IS NULL OR locked_until < ${sqlLiteral(now)})
          FOR UPDATE SKIP LOCKED`,
      (locked) => {
        const held = unmoved(candidates, locked);
        mine = candidates.filter((_, i) => held[i]);
        if (mine.length === 0) return { statements: [] };
        return {
          statements: [
            `UPDATE webhook_deliveries SET locked_until = ${sqlLiteral(until)}
              WHERE seq IN (${mine.map((d) => Number(d.seq)).join(', ')})`,
          ],
          after: [historiesSql(mine)],
        };
      },
    );
    if (mine.length === 0) return [];
    const endpoint = fromEndpointRow(endpointRow);
    const histories = byRun(after[0] as HistoryRow[]);
    return mine.flatMap((delivery) => {
      const history = (histories.get(delivery.run_id) ?? []).filter(
        (event) => event.seq <= Number(delivery.event_seq),
      );
      const event = history.find((h) => h.seq === Number(delivery.event_seq));
      return event ? [{ delivery, endpoint, event, history }] : [];
    });
  }

  /** Lets go of deliveries a turn claimed and did not attempt (it was stopping). */
  async release(ids: readonly string[], until: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.db('webhook_deliveries')
      .whereIn('id', ids)
      .andWhere({ status: 'pending', locked_until: until })
      .update({ locked_until: null });
  }

  /**
   * Stores a turn's attempts, each with the delivery's state after it (an attempt whose
   * delivery moved on meanwhile, by a redelivery or an expired claim, is not stored), and the
   * endpoint's: failing no more when any attempt was delivered; else failing since the
   * earliest, and disabled (with everything still owed to it failed) on a 410 Gone or when it
   * has been failing since before `failingLimit`. Then, when `readNext`, reads when the
   * endpoint's next turn is due. When every attempt was delivered (the common case), all of it
   * is one round trip.
   */
  async recordTurn(
    endpointId: string,
    attempts: readonly TurnAttempt[],
    now: Date,
    failingLimit: Date,
    { readNext }: { readNext: boolean },
  ): Promise<TurnRecord> {
    const statements = recordStatements(attempts);
    const failures = attempts.filter((a) => a.record.status !== 'delivered');

    if (failures.length === 0) {
      // Results: the SET and START TRANSACTION, the statements, the clear, the COMMIT, the read.
      const results = await writeScript(
        this.db,
        this.writeTimeoutMs,
        [...statements, clearFailingSql(endpointId)],
        readNext ? [inlineSql(NEXT_DUE, [endpointId, now])] : [],
      );
      const stored = storedOf(attempts, results[2]);
      if (!readNext) return { stored };
      const next = (results.at(-1) as Array<{ next_attempt_at: Date | null }>)[0];
      return { stored, next: next ? next.next_attempt_at : null };
    }

    const delivered = failures.length < attempts.length;
    const record = await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      // One result per statement (the worker's pool allows several statements a query).
      const results = (await query(statements.join('; '))) as unknown as unknown[];
      const stored = storedOf(attempts, results[0]);
      if (delivered) await query(clearFailingSql(endpointId));
      const earliest = failures.reduce(
        (at, a) => (a.record.at < at ? a.record.at : at),
        failures[0]!.record.at,
      );
      const since = delivered ? null : await markFailing(query, endpointId, earliest);
      const disabled =
        failures.find((a) => a.record.disable)?.record.disable ??
        (since && since < failingLimit
          ? `every attempt failed since ${since.toISOString()}`
          : undefined);
      if (disabled) {
        await disableEndpoint(query, endpointId, disabled, now);
        await failOwedTo(query, endpointId, disabled);
      }
      return { stored, disabled };
    });
    if (record.disabled || !readNext) return record;
    return { ...record, next: await this.nextDue(endpointId, now) };
  }

  /** When the endpoint's earliest attemptable delivery is due; null when none is owed. */
  async nextDue(endpointId: string, now: Date): Promise<Date | null> {
    const [rows] = (await this.db.raw(NEXT_DUE, [endpointId, now])) as Rows<{
      next_attempt_at: Date | null;
    }>;
    return rows[0]?.next_attempt_at ?? null;
  }

  /**
   * Endpoints owed a delivery that was due before `before` and is attemptable (the
   * reconciler's look for turns Redis may have lost): one short look per enabled endpoint.
   */
  async endpointsOwed(before: Date, now: Date, limit: number): Promise<string[]> {
    const [rows] = (await this.db.raw(
      `SELECT e.id FROM webhook_endpoints e
        WHERE e.enabled = 1
          AND EXISTS (SELECT 1 FROM webhook_deliveries d
                       WHERE d.endpoint_id = e.id AND d.next_attempt_at < ? AND ${ATTEMPTABLE})
        LIMIT ?`,
      [before, now, limit],
    )) as Rows<{ id: string }>;
    return rows.map((row) => row.id);
  }
}

/** Fails every delivery still owed to an endpoint that was disabled: nothing is sent to it. */
export async function failOwedTo(
  query: TxQuery,
  endpointId: string,
  reason: string,
): Promise<void> {
  await query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL,
            last_error = ? WHERE endpoint_id = ? AND status = 'pending'`,
    [`endpoint disabled: ${reason}`.slice(0, 255), endpointId],
  );
}
