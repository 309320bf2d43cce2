// The statements of webhook deliveries, as text: pure functions and constants, the only
// webhooks module that writes the turns' literal SQL (every value a sqlLiteral). DeliveryStore
// sends them.
import { sqlLiteral, sqlRow, valuesTable } from '../lib/sql-literal.js';
import { fromEventRow, type RunEvent } from '../runs/run-events.js';
import type { ClaimedDelivery, DeliveryRow, HistoryRow, TurnAttempt } from './delivery-rows.js';

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
export function recordStatements(attempts: readonly TurnAttempt[]): string[] {
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
export function unmoved(deliveries: readonly ClaimedDelivery[], locked: unknown): boolean[] {
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
export function storedOf(attempts: readonly TurnAttempt[], locked: unknown): boolean[] {
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
export const ATTEMPTABLE = `d.status = 'pending' AND e.enabled = 1
  AND (d.locked_until IS NULL OR d.locked_until < ?)
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p FORCE INDEX (webhook_deliveries_chain)
                   WHERE p.endpoint_id = d.endpoint_id AND p.run_id = d.run_id
                     AND p.event_seq < d.event_seq AND p.status = 'pending')
  AND NOT EXISTS (SELECT 1 FROM run_events u
                   WHERE u.run_id = d.run_id AND u.seq < d.event_seq AND u.dispatched = 0
                     AND u.id > e.from_event_id)`;

/** When the endpoint's earliest attemptable delivery is due (values: endpoint, now). */
export const NEXT_DUE = `SELECT d.next_attempt_at FROM webhook_deliveries d
  JOIN webhook_endpoints e ON e.id = d.endpoint_id
 WHERE d.endpoint_id = ? AND ${ATTEMPTABLE}
 ORDER BY d.next_attempt_at LIMIT 1`;

/**
 * The read of the claimed deliveries' runs' histories, each from its first event to the
 * delivery's: ranges of the (run_id, seq) index, in that order.
 */
export function historiesSql(deliveries: readonly ClaimedDelivery[]): string {
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
export function byRun(rows: readonly HistoryRow[]): Map<string, RunEvent[]> {
  const runs = new Map<string, RunEvent[]>();
  for (const row of rows) {
    const events = runs.get(row.run_id);
    if (events) events.push(fromEventRow(row));
    else runs.set(row.run_id, [fromEventRow(row)]);
  }
  return runs;
}
