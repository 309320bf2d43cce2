// Webhook deliveries in MySQL, which decide what is owed: an endpoint turn's claim of what is
// due and its record of every attempt, the order of one run's deliveries to one endpoint, when
// the endpoint's next turn is due, and which endpoints the reconciler gives a turn. They are
// made from committed events by the outbox's relay (outbox-store.ts); the log clients read and
// steer is delivery-log-store.ts.
import type { Db, TxQuery } from '../db.js';
import { inlineSql, writeScript, writeTransaction } from '../db.js';
import { parseActor } from '../audit/actor.js';
import { storedEvent, type RunEvent, type RunEventType } from '../runs/run-events.js';
import { disableEndpoint, markFailing, clearFailingSql, type Endpoint } from './endpoint-store.js';

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

/** A delivery with what an attempt of it needs. */
export interface AttemptContext {
  delivery: DeliveryRow;
  endpoint: AttemptEndpoint;
  event: RunEvent;
  /** The run's history from its first event to this one. */
  history: RunEvent[];
}

interface HistoryJson {
  seq: number;
  type: RunEventType;
  at: string;
  data: unknown;
  /** The actor's JSON text (run_events.actor), null for events from before actors. */
  actor: string | null;
}

type AttemptJoinRow = DeliveryRow & {
  e_organization_id: string;
  e_url: string;
  e_secret: string;
  e_previous_secret: string | null;
  e_previous_secret_expires_at: Date | null;
  e_enabled: number;
  e_from_event_id: number | string;
  history: string | HistoryJson[] | null;
};

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
  delivery: DeliveryRow;
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
   * after the record; undefined when the endpoint was disabled.
   */
  next?: Date | null;
}

/**
 * The statements that store an attempt: the delivery's state after it (guarded by the round
 * and attempt the turn claimed), then the attempt's log row, written only if that UPDATE
 * changed the delivery.
 */
function attemptStatements(delivery: DeliveryRow, record: AttemptRecord): [string, string] {
  const error = record.error?.slice(0, 255) ?? null;
  return [
    inlineSql(
      `UPDATE webhook_deliveries
          SET attempts = attempts + 1, status = ?, next_attempt_at = ?, locked_until = NULL,
              last_attempt_at = ?, last_status_code = ?, last_error = ?, delivered_at = ?
        WHERE id = ? AND round = ? AND attempts = ?`,
      [
        record.status,
        record.nextAttemptAt,
        record.at,
        record.statusCode ?? null,
        error,
        record.status === 'delivered' ? record.at : null,
        delivery.id,
        delivery.round,
        delivery.attempts,
      ],
    ),
    inlineSql(
      `INSERT INTO webhook_attempts
         (delivery_id, round, attempted_at, status_code, latency_ms, response_body, error)
       SELECT ?, ?, ?, ?, ?, ?, ? FROM DUAL WHERE ROW_COUNT() = 1`,
      [
        delivery.id,
        delivery.round,
        record.at,
        record.statusCode ?? null,
        record.latencyMs,
        record.responseBody ?? null,
        error,
      ],
    ),
  ];
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
   * earliest due first, each with its endpoint, its event and the run's history up to it (one
   * read), then held until `until` so that no other turn attempts them meanwhile (one short
   * transaction that locks only rows no other turn is locking, and keeps those whose round and
   * attempt are still the ones read). Only the first owed of each run is taken, so a turn
   * attempts at most one delivery per run, and a run's next waits for the one before it.
   */
  async claimTurn(
    endpointId: string,
    now: Date,
    limit: number,
    until: Date,
  ): Promise<AttemptContext[]> {
    const [rows] = (await this.db.raw(
      `SELECT d.*,
              e.organization_id AS e_organization_id, e.url AS e_url, e.secret AS e_secret,
              e.previous_secret AS e_previous_secret,
              e.previous_secret_expires_at AS e_previous_secret_expires_at,
              e.enabled AS e_enabled, e.from_event_id AS e_from_event_id,
              (SELECT JSON_ARRAYAGG(JSON_OBJECT(
                        'seq', h.seq, 'type', h.type,
                        'at', DATE_FORMAT(h.at, '%Y-%m-%dT%H:%i:%s.%fZ'),
                        'data', JSON_EXTRACT(h.data, '$'),
                        'actor', h.actor) ORDER BY h.seq)
                 FROM run_events h
                WHERE h.run_id = d.run_id AND h.seq <= d.event_seq) AS history
         FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.endpoint_id = ? AND d.next_attempt_at <= ? AND ${ATTEMPTABLE}
        ORDER BY d.next_attempt_at LIMIT ?`,
      [endpointId, now, now, limit],
    )) as Rows<AttemptJoinRow>;
    if (rows.length === 0) return [];
    const read = new Map(rows.map((row) => [row.id, row]));

    const taken = await writeTransaction(
      this.db,
      this.writeTimeoutMs,
      async (query) => {
        const locked = (await query(
          `SELECT id, round, attempts FROM webhook_deliveries
            WHERE id IN (?) AND status = 'pending' AND (locked_until IS NULL OR locked_until < ?)
            FOR UPDATE SKIP LOCKED`,
          [[...read.keys()], now],
        )) as unknown as Array<Pick<DeliveryRow, 'id' | 'round' | 'attempts'>>;
        const mine = locked
          .filter((row) => {
            const seen = read.get(row.id);
            return (
              seen &&
              Number(seen.round) === Number(row.round) &&
              Number(seen.attempts) === Number(row.attempts)
            );
          })
          .map((row) => row.id);
        if (mine.length > 0) {
          await query('UPDATE webhook_deliveries SET locked_until = ? WHERE id IN (?)', [
            until,
            mine,
          ]);
        }
        return mine;
      },
      { readCommitted: true },
    );
    return taken.flatMap((id) => {
      const context = toContext(read.get(id)!);
      return context ? [context] : [];
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
   * has been failing since before `failingLimit`. Then reads when the endpoint's next turn is
   * due. When every attempt was delivered (the common case), all of it is one round trip.
   */
  async recordTurn(
    endpointId: string,
    attempts: readonly TurnAttempt[],
    now: Date,
    failingLimit: Date,
  ): Promise<TurnRecord> {
    const statements = attempts.flatMap((a) => attemptStatements(a.delivery, a.record));
    const nextDue = inlineSql(NEXT_DUE, [endpointId, now]);
    const failures = attempts.filter((a) => a.record.status !== 'delivered');
    const stored = (results: unknown[]) =>
      attempts.map((_, i) => (results[2 * i] as { affectedRows?: number }).affectedRows === 1);

    if (failures.length === 0) {
      // Results: the SET and START TRANSACTION, the statements, the clear, the COMMIT, the read.
      const results = await writeScript(
        this.db,
        this.writeTimeoutMs,
        [...statements, clearFailingSql(endpointId)],
        [nextDue],
      );
      const next = (results.at(-1) as Array<{ next_attempt_at: Date | null }>)[0];
      return { stored: stored(results.slice(2)), next: next ? next.next_attempt_at : null };
    }

    const delivered = failures.length < attempts.length;
    const record = await writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      // One result per statement (the worker's pool allows several statements a query).
      const done = stored((await query(statements.join('; '))) as unknown as unknown[]);
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
      return { stored: done, disabled };
    });
    if (record.disabled) return record;
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

/** A claimed row as an attempt's context; undefined when its event is not in its history. */
function toContext(row: AttemptJoinRow): AttemptContext | undefined {
  // The driver hands a JSON value over parsed or as text, depending on the server.
  const raw = typeof row.history === 'string' ? (JSON.parse(row.history) as unknown) : row.history;
  const history = ((raw ?? []) as HistoryJson[]).map((h) =>
    storedEvent(
      Number(h.seq),
      h.type,
      new Date(h.at).toISOString(),
      typeof h.data === 'string' ? JSON.parse(h.data) : h.data,
      parseActor(h.actor ?? null),
    ),
  );
  const event = history.find((h) => h.seq === Number(row.event_seq));
  if (!event) return undefined;
  const delivery = Object.fromEntries(
    Object.entries(row).filter(([key]) => key !== 'history' && !key.startsWith('e_')),
  ) as unknown as DeliveryRow;
  return {
    delivery,
    endpoint: {
      id: row.endpoint_id,
      organizationId: row.e_organization_id,
      url: row.e_url,
      secret: row.e_secret,
      previousSecret: row.e_previous_secret,
      previousSecretExpiresAt: row.e_previous_secret_expires_at,
      enabled: Boolean(row.e_enabled),
      fromEventId: Number(row.e_from_event_id),
    },
    event,
    history,
  };
}

/** Fails every delivery still owed to an endpoint that was disabled: nothing is sent to it. */
async function failOwedTo(query: TxQuery, endpointId: string, reason: string): Promise<void> {
  await query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL,
            last_error = ? WHERE endpoint_id = ? AND status = 'pending'`,
    [`endpoint disabled: ${reason}`.slice(0, 255), endpointId],
  );
}
