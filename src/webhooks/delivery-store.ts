// Webhook deliveries in MySQL, which decide what is owed: an endpoint turn's claim of what is
// due and its record of every attempt, the order of one run's deliveries to one endpoint, when
// the endpoint's next turn is due, and which endpoints the reconciler gives a turn. They are
// made from committed events by the outbox's relay (outbox-store.ts); the log clients read and
// steer is delivery-log-store.ts.
import type { Db, TxQuery } from '../db.js';
import { claimScript, inlineSql, writeScript, writeTransaction } from '../db.js';
import { sqlLiteral, sqlRow, valuesTable } from '../lib/sql-literal.js';
import {
  fromEventRow,
  type RunEvent,
  type RunEventTableRow,
  type RunEventType,
} from '../runs/run-events.js';
import {
  clearFailingSql,
  disableEndpoint,
  fromEndpointRow,
  markFailing,
  type Endpoint,
  type EndpointRow,
} from './endpoint-store.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRow {
  seq: number;
  id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: number | string;
  run_id: string;
  event_seq: number;
  event_type: RunEventType;
  status: DeliveryStatus;
  round: number;
  attempts: number;
  next_attempt_at: Date | null;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

export interface AttemptRow {
  id: number;
  delivery_id: string;
  round: number;
  attempted_at: Date;
  status_code: number | null;
  latency_ms: number;
  response_body: string | null;
  error: string | null;
}

/** What an attempt needs of an endpoint. */
export type AttemptEndpoint = Pick<
  Endpoint,
  | 'id'
  | 'organizationId'
  | 'url'
  | 'secret'
  | 'previousSecret'
  | 'previousSecretExpiresAt'
  | 'enabled'
  | 'fromEventId'
>;

/** A delivery as a turn claims it: what its attempt and the record of that attempt need. */
export type ClaimedDelivery = Pick<
  DeliveryRow,
  'seq' | 'id' | 'organization_id' | 'event_id' | 'run_id' | 'event_seq' | 'round' | 'attempts'
>;

/** A delivery with what an attempt of it needs. */
export interface AttemptContext {
  delivery: ClaimedDelivery;
  endpoint: AttemptEndpoint;
  event: RunEvent;
  /** The run's history from its first event to this one. */
  history: RunEvent[];
}

/** The columns of a history read. */
type HistoryRow = Pick<RunEventTableRow, 'run_id' | 'seq' | 'type' | 'at' | 'data' | 'actor'>;

/** What an attempt came to, as stored. */
export interface AttemptRecord {
  at: Date;
  statusCode?: number;
  latencyMs: number;
  responseBody?: string;
  error?: string;
  /** The delivery's state after it. */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  /** Set when this attempt disables the endpoint (the receiver answered 410 Gone). */
  disable?: string;
}

/** One attempt of a turn, to record: the delivery as the turn claimed it, and what came of it. */
export interface TurnAttempt {
  delivery: ClaimedDelivery;
  record: AttemptRecord;
}

/** What recording a turn's attempts came to. */
export interface TurnRecord {
  /** Per attempt, in order: whether it was stored (false: the delivery had moved on). */
  stored: boolean[];
  /** Why the endpoint was disabled by these attempts, if it was. */
  disabled?: string;
  /**
   * When the endpoint's earliest delivery owed and held by no turn is due (null: none), read
   * after the record when asked; undefined when not asked, or when the endpoint was disabled.
   */
  next?: Date | null;
}

/** The columns of recordStatements' table of the deliveries' new state. */
const RECORDED_COLUMNS = [
  'seq',
  'round',
  'attempts',
  'status',
  'next_attempt_at',
  'at',
  'status_code',
  'error',
  'delivered_at',
];

/** The columns of recordStatements' table of the attempts' log rows. */
const LOGGED_COLUMNS = [
  'seq',
  'round',
  'attempts',
  'at',
  'status_code',
  'latency_ms',
  'response_body',
  'error',
];

/**
 * The statements that store a batch of attempts, whatever their number: the deliveries are
 * locked and read (seq, round, attempts: the first statement's result tells which attempts
 * are stored), each attempt's log row is written, then each delivery's state after it, both
 * only where the delivery is still in the round and at the attempt the turn claimed (a
 * redelivery, or a claim that ran out and was taken by another turn, moved it on). One
 * statement of each kind joined to a table of values, not two statements per attempt: MySQL
 * parses and plans three statements for a batch of 128. Each names the deliveries by primary
 * key as well: joined only to the table of values, MariaDB may read the whole deliveries table
 * instead (it did on a table of a few rows), and that UPDATE locked every row it read, so a
 * claim running beside the record skipped deliveries that were not the record's.
 */
function recordStatements(attempts: readonly TurnAttempt[]): string[] {
  const seqs = attempts.map((a) => sqlLiteral(Number(a.delivery.seq))).join(', ');
  const recorded: string[] = [];
  const logged: string[] = [];
  for (const { delivery, record } of attempts) {
    const error = record.error?.slice(0, 255) ?? null;
    const guard = [Number(delivery.seq), Number(delivery.round), Number(delivery.attempts)];
    const code = record.statusCode ?? null;
    recorded.push(
      sqlRow([
        ...guard,
        record.status,
        record.nextAttemptAt,
        record.at,
        code,
        error,
        record.status === 'delivered' ? record.at : null,
      ]),
    );
    logged.push(
      sqlRow([...guard, record.at, code, record.latencyMs, record.responseBody ?? null, error]),
    );
  }
  const claimed = 'd.seq = v.seq AND d.round = v.round AND d.attempts = v.attempts';
  return [
    `SELECT seq, round, attempts FROM webhook_deliveries WHERE seq IN (${seqs}) FOR UPDATE`,
    `INSERT INTO webhook_attempts
       (delivery_id, round, attempted_at, status_code, latency_ms, response_body, error)
     SELECT d.id, d.round, v.at, v.status_code, v.latency_ms, v.response_body, v.error
       FROM ${valuesTable(LOGGED_COLUMNS, logged)} AS v
       JOIN webhook_deliveries d ON ${claimed}
      WHERE d.seq IN (${seqs})`,
    `UPDATE webhook_deliveries d JOIN ${valuesTable(RECORDED_COLUMNS, recorded)} AS v ON ${claimed}
        SET d.attempts = d.attempts + 1, d.status = v.status,
            d.next_attempt_at = v.next_attempt_at, d.locked_until = NULL,
            d.last_attempt_at = v.at, d.last_status_code = v.status_code,
            d.last_error = v.error, d.delivered_at = v.delivered_at
      WHERE d.seq IN (${seqs})`,
  ];
}

/**
 * Per delivery, whether the row a locking read found for it is still in the round and at the
 * attempt it was read with (false: not found, or moved on by a redelivery or another turn).
 */
function unmoved(deliveries: readonly ClaimedDelivery[], locked: unknown): boolean[] {
  const now = new Map(
    (locked as Array<Pick<DeliveryRow, 'seq' | 'round' | 'attempts'>>).map((row) => [
      Number(row.seq),
      row,
    ]),
  );
  return deliveries.map((delivery) => {
    const row = now.get(Number(delivery.seq));
    return (
      row !== undefined &&
      Number(row.round) === Number(delivery.round) &&
      Number(row.attempts) === Number(delivery.attempts)
    );
  });
}

/** Per attempt, whether recordStatements stores it, from its first statement's result. */
function storedOf(attempts: readonly TurnAttempt[], locked: unknown): boolean[] {
  return unmoved(
    attempts.map((a) => a.delivery),
    locked,
  );
}

/**
 * When a delivery `d` of endpoint `e` is a turn's to attempt: owed, to an enabled endpoint,
 * held by no turn (its claim, if any, ran out before `?`), the first still owed of its run to
 * the endpoint, and no earlier event of its run left to dispatch (that one's delivery would
 * come first; the dispatcher asks for a turn once it is made).
 * The look for an earlier delivery of the run goes by the run (webhook_deliveries_chain): on
 * statistics of a table just filled, MariaDB chose the endpoint's unique index instead and read
 * the endpoint's whole backlog for each delivery (256,000 rows for a claim of 128).
 */
const ATTEMPTABLE = `d.status = 'pending' AND e.enabled = 1
  AND (d.locked_until IS NULL OR d.locked_until < ?)
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p FORCE INDEX (webhook_deliveries_chain)
                   WHERE p.endpoint_id = d.endpoint_id AND p.run_id = d.run_id
                     AND p.event_seq < d.event_seq AND p.status = 'pending')
  AND NOT EXISTS (SELECT 1 FROM run_events u
                   WHERE u.run_id = d.run_id AND u.seq < d.event_seq AND u.dispatched = 0
                     AND u.id > e.from_event_id)`;

/** When the endpoint's earliest attemptable delivery is due (values: endpoint, now). */
const NEXT_DUE = `SELECT d.next_attempt_at FROM webhook_deliveries d
  JOIN webhook_endpoints e ON e.id = d.endpoint_id
 WHERE d.endpoint_id = ? AND ${ATTEMPTABLE}
 ORDER BY d.next_attempt_at LIMIT 1`;

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

/**
 * The read of the claimed deliveries' runs' histories, each from its first event to the
 * delivery's: ranges of the (run_id, seq) index, in that order.
 */
function historiesSql(deliveries: readonly ClaimedDelivery[]): string {
  const upTo = new Map<string, number>();
  for (const d of deliveries) {
    upTo.set(d.run_id, Math.max(upTo.get(d.run_id) ?? 0, Number(d.event_seq)));
  }
  const ranges = [...upTo].map(
    ([runId, seq]) => `(run_id = ${sqlLiteral(runId)} AND seq <= ${seq})`,
  );
  return `SELECT run_id, seq, type, at, data, actor FROM run_events
           WHERE ${ranges.join(' OR ')} ORDER BY run_id, seq`;
}

/** History rows (in seq order) as each run's events. */
function byRun(rows: readonly HistoryRow[]): Map<string, RunEvent[]> {
  const runs = new Map<string, RunEvent[]>();
  for (const row of rows) {
    const events = runs.get(row.run_id);
    if (events) events.push(fromEventRow(row));
    else runs.set(row.run_id, [fromEventRow(row)]);
  }
  return runs;
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
