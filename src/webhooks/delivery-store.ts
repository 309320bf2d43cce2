// Webhook deliveries in MySQL, which decide what is owed: an attempt's claim and record, the
// order of one run's deliveries to one endpoint, and what the reconciler enqueues again. They
// are made from committed events by the outbox's relay (outbox-store.ts); the log clients read
// and steer is delivery-log-store.ts.
import type { Db, TxQuery } from '../db.js';
import { inlineSql, writeScript, writeTransaction } from '../db.js';
import { parseActor } from '../audit/actor.js';
import { storedEvent, type RunEvent, type RunEventType } from '../runs/run-events.js';
import { disableEndpoint, markFailing, clearFailingSql, type Endpoint } from './endpoint-store.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** What a delivery job needs to name an attempt. */
export interface DeliveryRef {
  id: string;
  round: number;
  attempts: number;
  nextAttemptAt: Date | null;
}

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
  /** An earlier event of the run is still owed to the endpoint, or not yet dispatched. */
  waits: boolean;
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
  earlier_owed: number;
  earlier_undispatched: number;
  history: string | HistoryJson[] | null;
};

const EXTRA_COLUMNS = new Set(['earlier_owed', 'earlier_undispatched', 'history']);

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
  /** Set when this attempt disables the endpoint (410 Gone, or failing too long). */
  disable?: string;
  /** An endpoint failing since before this is disabled by a failed attempt. */
  failingLimit: Date;
}

/** A delivery as a job names it. */
export const deliveryRef = (
  row: Pick<DeliveryRow, 'id' | 'round' | 'attempts' | 'next_attempt_at'>,
): DeliveryRef => ({
  id: row.id,
  round: Number(row.round),
  attempts: Number(row.attempts),
  nextAttemptAt: row.next_attempt_at,
});

/**
 * The statements that store an attempt, shared by both ways of recording one: the delivery's
 * state after it (guarded by the round and attempt read), then the attempt's log row, written
 * only if that UPDATE changed the delivery.
 */
function attemptStatements(
  delivery: DeliveryRow,
  record: Pick<
    AttemptRecord,
    'at' | 'statusCode' | 'latencyMs' | 'responseBody' | 'error' | 'status' | 'nextAttemptAt'
  >,
): [update: Statement, log: Statement] {
  const error = record.error?.slice(0, 255) ?? null;
  return [
    [
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
    ],
    [
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
    ],
  ];
}

type Statement = [sql: string, values: unknown[]];

/** The first delivery still owed to an endpoint for a run, in history order. */
const NEXT_OF_CHAIN = `SELECT id, round, attempts, next_attempt_at FROM webhook_deliveries
  WHERE endpoint_id = ? AND run_id = ? AND status = 'pending' ORDER BY event_seq LIMIT 1`;

type Rows<T> = [T[], unknown];

export class DeliveryStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
  ) {}

  /**
   * A delivery with its endpoint, its event, whether an earlier event of its run is still owed
   * to the endpoint (a pending delivery) or not yet dispatched (then it waits, and goes when
   * the earlier one is done), and the run's history up to its event: one round trip.
   */
  async forAttempt(id: string): Promise<AttemptContext | undefined> {
    const [rows] = (await this.db.raw(
      `SELECT d.*,
              e.organization_id AS e_organization_id, e.url AS e_url, e.secret AS e_secret,
              e.previous_secret AS e_previous_secret,
              e.previous_secret_expires_at AS e_previous_secret_expires_at,
              e.enabled AS e_enabled, e.from_event_id AS e_from_event_id,
              EXISTS(SELECT 1 FROM webhook_deliveries p
                      WHERE p.endpoint_id = d.endpoint_id AND p.run_id = d.run_id
                        AND p.event_seq < d.event_seq AND p.status = 'pending') AS earlier_owed,
              EXISTS(SELECT 1 FROM run_events u
                      WHERE u.run_id = d.run_id AND u.seq < d.event_seq AND u.dispatched = 0
                        AND u.id > e.from_event_id) AS earlier_undispatched,
              (SELECT JSON_ARRAYAGG(JSON_OBJECT(
                        'seq', h.seq, 'type', h.type,
                        'at', DATE_FORMAT(h.at, '%Y-%m-%dT%H:%i:%s.%fZ'),
                        'data', JSON_EXTRACT(h.data, '$'),
                        'actor', h.actor) ORDER BY h.seq)
                 FROM run_events h
                WHERE h.run_id = d.run_id AND h.seq <= d.event_seq) AS history
         FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = ?`,
      [id],
    )) as Rows<AttemptJoinRow>;
    const row = rows[0];
    if (!row) return undefined;
    // The driver hands a JSON value over parsed or as text, depending on the server.
    const raw =
      typeof row.history === 'string' ? (JSON.parse(row.history) as unknown) : row.history;
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
      Object.entries(row).filter(([key]) => !EXTRA_COLUMNS.has(key) && !key.startsWith('e_')),
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
      waits: Boolean(row.earlier_owed) || Boolean(row.earlier_undispatched),
    };
  }

  /** Takes the delivery for one attempt until `until`; false when it is not this one's to take. */
  async claim(delivery: DeliveryRow, now: Date, until: Date): Promise<boolean> {
    const taken = await this.db('webhook_deliveries')
      .where({
        id: delivery.id,
        status: 'pending',
        round: delivery.round,
        attempts: delivery.attempts,
      })
      .andWhere((q) => q.whereNull('locked_until').orWhere('locked_until', '<', now))
      .update({ locked_until: until });
    return taken === 1;
  }

  /**
   * Stores a failed attempt and the delivery's state after it, and the endpoint's (failing
   * since, or disabled, with every delivery still owed to it failed), in one transaction.
   * False when the delivery had moved on meanwhile (its claim ran out and another attempt was
   * recorded). A delivered attempt goes through recordDelivered.
   */
  async recordAttempt(
    context: AttemptContext,
    record: AttemptRecord,
  ): Promise<{ recorded: boolean; disabled?: string }> {
    const { delivery, endpoint } = context;
    return writeTransaction(this.db, this.writeTimeoutMs, async (query) => {
      const [[updateSql, updateValues], [logSql, logValues]] = attemptStatements(delivery, record);
      const updated = await query(updateSql, updateValues);
      if (updated.affectedRows !== 1) return { recorded: false };
      await query(logSql, logValues);
      const since = await markFailing(query, endpoint.id, record.at);
      const reason =
        record.disable ??
        (since && since < record.failingLimit
          ? `every attempt failed since ${since.toISOString()}`
          : undefined);
      if (reason) {
        await disableEndpoint(query, endpoint.id, reason, record.at);
        await failOwedTo(query, endpoint.id, reason);
      }
      return { recorded: true, disabled: reason };
    });
  }

  /**
   * Stores a delivered attempt and reads the next delivery owed to the endpoint for the run,
   * in one round trip (writeScript: on the worker's pool, which allows several statements).
   * The attempt is logged only if the delivery was still this attempt's (ROW_COUNT of the
   * guarded UPDATE).
   */
  async recordDelivered(
    context: AttemptContext,
    record: Pick<AttemptRecord, 'at' | 'statusCode' | 'latencyMs' | 'responseBody'>,
  ): Promise<DeliveryRef | undefined> {
    const { delivery, endpoint } = context;
    const delivered = { ...record, status: 'delivered' as const, nextAttemptAt: null };
    const results = await writeScript(
      this.db,
      this.writeTimeoutMs,
      [
        ...attemptStatements(delivery, delivered).map(([sql, values]) => inlineSql(sql, values)),
        clearFailingSql(endpoint.id),
      ],
      [inlineSql(NEXT_OF_CHAIN, [delivery.endpoint_id, delivery.run_id])],
    );
    const next = (results.at(-1) as DeliveryRow[] | undefined)?.[0];
    return next ? deliveryRef(next) : undefined;
  }

  /** The first delivery still owed to the endpoint for the run, in history order. */
  async nextOfChain(endpointId: string, runId: string): Promise<DeliveryRef | undefined> {
    const [rows] = (await this.db.raw(NEXT_OF_CHAIN, [endpointId, runId])) as Rows<DeliveryRow>;
    return rows[0] ? deliveryRef(rows[0]) : undefined;
  }

  /**
   * Deliveries owed, due before `before`, not held by an attempt, and first of their run to
   * their endpoint (the reconciler's look for what Redis may have lost).
   */
  async owed(before: Date, now: Date, limit: number): Promise<DeliveryRef[]> {
    const [rows] = (await this.db.raw(
      `SELECT d.id, d.round, d.attempts, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at < ?
          AND (d.locked_until IS NULL OR d.locked_until < ?)
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                           WHERE e.endpoint_id = d.endpoint_id AND e.run_id = d.run_id
                             AND e.event_seq < d.event_seq AND e.status = 'pending')
        ORDER BY d.next_attempt_at LIMIT ?`,
      [before, now, limit],
    )) as Rows<DeliveryRow>;
    return rows.map(deliveryRef);
  }
}

/** Fails every delivery still owed to an endpoint that was disabled: nothing is sent to it. */
async function failOwedTo(query: TxQuery, endpointId: string, reason: string): Promise<void> {
  await query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL,
            last_error = ? WHERE endpoint_id = ? AND status = 'pending'`,
    [`endpoint disabled: ${reason}`.slice(0, 255), endpointId],
  );
}
