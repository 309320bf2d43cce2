// What webhook deliveries and their attempts are as rows of MySQL, and what a turn claims and
// records of them: the types the delivery store, its statements and the deliverer share.
import type { RunEvent, RunEventTableRow, RunEventType } from '../runs/run-events.js';
import type { Endpoint } from './endpoint-store.js';

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
export type HistoryRow = Pick<
  RunEventTableRow,
  'run_id' | 'seq' | 'type' | 'at' | 'data' | 'actor'
>;

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
