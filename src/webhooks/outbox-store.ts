// The outbox's relay: committed run events not yet dispatched become webhook deliveries, one
// per enabled endpoint that subscribed to the event's type, in the transaction that marks the
// events dispatched. The Dispatcher (dispatcher.ts) runs it; deliveries are then the
// DeliveryStore's.
import { scriptTransaction, type Db } from '../db.js';
import { newId } from '../lib/ids.js';
import { sqlLiteral, sqlRow } from '../lib/sql-literal.js';
import type { RunEventType } from '../runs/run-events.js';
import { fromEndpointRow, subscribes, type Endpoint, type EndpointRow } from './endpoint-store.js';

/** What one dispatch pass did. */
export interface DispatchPass {
  /** Whether any endpoint is enabled at all. */
  subscribed: boolean;
  /** Events taken (and marked dispatched). */
  events: number;
  /** Deliveries made of them. */
  made: number;
  /** The endpoints deliveries were made for: each is owed a turn. */
  endpoints: string[];
}

/** An event as a dispatch pass reads it. */
interface EventRow {
  id: number;
  run_id: string;
  organization_id: string;
  seq: number;
  type: RunEventType;
}

/**
 * The first event any enabled endpoint is owed after (NULL: no endpoint anywhere; then nothing
 * is owed, and events are left as they are: an endpoint made later is owed only what comes
 * after it).
 */
const FLOOR = 'SELECT MIN(from_event_id) FROM webhook_endpoints WHERE enabled = 1';

export class OutboxStore {
  constructor(
    private readonly db: Db,
    private readonly writeTimeoutMs: number,
  ) {}

  /**
   * Turns up to `batch` committed events not yet dispatched into deliveries, one per enabled
   * endpoint of the event's organization that subscribed to its type and was made before it,
   * and marks the events dispatched, all in one transaction of three round trips (two when
   * nothing is owed): the floor and the events, the endpoints, the writes and the COMMIT.
   * Events are locked as they are read and skipped when another dispatcher holds them, so any
   * number of workers dispatch at once. A pass whose COMMIT went unanswered may or may not
   * have stored: either way the next pass finds what is left, and a delivery already made is
   * kept as it is. Returns how many events it took, how many deliveries it made and for which
   * endpoints.
   */
  async dispatch(batch: number, now: Date): Promise<DispatchPass> {
    return scriptTransaction(
      this.db,
      this.writeTimeoutMs,
      [
        // The floor read once, kept in a variable of the connection for the events' read.
        `SELECT @wrs_dispatch_floor := (${FLOOR}) AS floor`,
        `SELECT id, run_id, organization_id, seq, type FROM run_events
          WHERE dispatched = 0 AND id > @wrs_dispatch_floor ORDER BY id LIMIT ${Number(batch)}
            FOR UPDATE SKIP LOCKED`,
      ],
      async ([floorRows, eventRows], script) => {
        const subscribed = (floorRows as Array<{ floor: unknown }>)[0]?.floor != null;
        const events = eventRows as EventRow[];
        if (events.length === 0) {
          await script.commit([]);
          return { subscribed, events: 0, made: 0, endpoints: [] };
        }

        const orgs = [...new Set(events.map((e) => e.organization_id))];
        // Locking the endpoints read: a turn disabling one (a 410, or failing too long) fails
        // what is owed to it in the same transaction. Read unlocked, an endpoint being disabled
        // still reads enabled, and its new delivery, inserted after that transaction failed
        // the owed ones, would stay pending for good. Locked, the pass waits for the disable
        // and sees it, or the disable waits for the pass and fails its deliveries too.
        const [endpointRows] = (await script.run([
          `SELECT * FROM webhook_endpoints WHERE enabled = 1
              AND organization_id IN (${orgs.map(sqlLiteral).join(', ')}) LOCK IN SHARE MODE`,
        ])) as [EndpointRow[]];
        const byOrg = new Map<string, Endpoint[]>();
        for (const endpoint of endpointRows.map(fromEndpointRow)) {
          byOrg.set(endpoint.organizationId, [
            ...(byOrg.get(endpoint.organizationId) ?? []),
            endpoint,
          ]);
        }

        // Rows of SQL literals: the driver's formatting of `VALUES ?` escaped each of a
        // thousand rows' values one by one.
        const values: string[] = [];
        const endpoints = new Set<string>();
        for (const event of events) {
          for (const endpoint of byOrg.get(event.organization_id) ?? []) {
            if (Number(event.id) <= endpoint.fromEventId || !subscribes(endpoint, event.type))
              continue;
            values.push(
              sqlRow([
                newId(now.getTime()),
                event.organization_id,
                endpoint.id,
                event.id,
                event.run_id,
                event.seq,
                event.type,
                'pending',
                now,
                now,
              ]),
            );
            endpoints.add(endpoint.id);
          }
        }
        // A delivery already made for an endpoint and event is kept as it is.
        const insert = `INSERT INTO webhook_deliveries
             (id, organization_id, endpoint_id, event_id, run_id, event_seq, event_type, status,
              next_attempt_at, created_at)
           VALUES ${values.join(', ')} ON DUPLICATE KEY UPDATE seq = seq`;
        await script.commit([
          ...(values.length > 0 ? [insert] : []),
          `UPDATE run_events SET dispatched = 1
            WHERE id IN (${events.map((e) => Number(e.id)).join(', ')})`,
        ]);
        return {
          subscribed,
          events: events.length,
          made: values.length,
          endpoints: [...endpoints],
        };
      },
    );
  }
}
