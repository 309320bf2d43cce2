// An endpoint's turn, from a delivery job: takes the endpoint's deliveries that are due in
// batches (BATCH_DELIVERIES at a time, at most TURN_BATCHES batches; the first still owed of
// each run only: events of a run arrive in history order, other runs do not wait), signs and
// sends each batch WEBHOOK_CONCURRENCY at a time over kept-alive connections, records the
// batch's attempts and the endpoint's state in MySQL in one go, then asks for the endpoint's
// next turn: now when more is due (the next events of the runs just delivered, the rest of a
// backlog), else when its earliest owed delivery falls due (a retry).
// 2xx is delivered; 410 Gone disables the endpoint; anything else is tried again on the retry
// schedule until the attempts run out. A batch costs a few short trips to MySQL (its claim and
// its record), not a few per delivery, and they overlap the sending of the batch beside them.
import type { WebhookConfig } from '../config.js';
import type { Logger } from '../logger.js';
import {
  webhookAttemptDuration,
  webhookAttempts,
  webhookTurnDeliveries,
} from '../metrics/metrics.js';
import type { DeliveryJobs } from '../jobs/webhook-delivery.js';
import type { AttemptContext, AttemptRecord, TurnAttempt, TurnRecord } from './delivery-rows.js';
import type { DeliveryStore } from './delivery-store.js';
import { signingSecrets } from './endpoint-store.js';
import { postWebhook, type AttemptResult } from './http-sender.js';
import { deliveryBody, messageId, summaryAfter } from './payload.js';
import { retryDelayMs } from './retry-schedule.js';
import { signDelivery } from './signing.js';
import type { RunSummary } from '../runs/run-schemas.js';

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'gone';

/** What one turn did. */
export interface TurnSummary {
  /** Deliveries the turn attempted. */
  attempted: number;
  /** Stored attempts, by outcome. */
  outcomes: Partial<Record<AttemptOutcome, number>>;
  /** Set when the endpoint was disabled by this turn. */
  disabled?: string;
}

/**
 * The promise, marked as handled: a pipelined claim or record that fails while the turn awaits
 * something else would otherwise be an unhandled rejection (which ends the process). The turn
 * awaits it later and fails then.
 */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** A claimed batch, and until when its deliveries are held. */
interface Claim {
  contexts: AttemptContext[];
  until: Date;
}

/** The run's summary as it is now: for a run older than its history (see summaryAfter). */
export interface RunSummaryReader {
  summary(runId: string): Promise<RunSummary>;
}

/**
 * Deliveries one claim takes: enough that a claim's and a record's trips to MySQL are a small
 * part of sending them, few enough that a turn's batches keep both MySQL and the receiver busy.
 */
export const BATCH_DELIVERIES = 128;

/**
 * Batches one turn takes at most, while every attempt is delivered: then the endpoint's next
 * turn queues behind every other endpoint's already waiting.
 */
export const TURN_BATCHES = 8;

/**
 * A batch's attempts start within this long of its claim; what has not started by then goes
 * back unsent (a slow receiver, a batch claimed while the one before it was still sent). So a
 * claim's hold does not grow with the batch, and deliveries held by a worker that was killed
 * wait at most SEND_WINDOW_MS + WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS (25 s by default).
 */
const SEND_WINDOW_MS = 10_000;

/** Time after an attempt's timeout for recording it while its claim still holds. */
const CLAIM_MARGIN_MS = 5_000;

/** A batch sent: its attempts (in the order recorded), and what it claimed and did not send. */
interface SentBatch {
  attempts: TurnAttempt[];
  outcomes: AttemptOutcome[];
  unsent: string[];
}

export class Deliverer {
  constructor(
    private readonly store: DeliveryStore,
    private readonly runs: RunSummaryReader,
    private readonly jobs: DeliveryJobs,
    private readonly config: WebhookConfig,
    private readonly log: Logger,
  ) {}

  /**
   * Turns being worked in this process, by endpoint: each hears when this process's
   * dispatcher has just made deliveries for its endpoint (`more`).
   */
  private readonly working = new Map<string, Set<{ more: boolean }>>();

  /**
   * This process's dispatcher made deliveries for these endpoints (and asked for their turns):
   * a turn of one of them being worked here takes them after the batch it is sending, instead
   * of ending and leaving them to the next turn (which BullMQ starts only once this one ends).
   */
  dispatched(endpointIds: readonly string[]): void {
    for (const id of endpointIds) {
      for (const turn of this.working.get(id) ?? []) turn.more = true;
    }
  }

  /**
   * One turn of the endpoint's: batches in a pipeline, each claimed while the one before it is
   * sent and recorded while the one after it is sent, so MySQL's work and the receiver's
   * overlap. The next batch is claimed only while batches come back full (or more was
   * dispatched meanwhile) and all delivered; a receiver that fails waits out its backoff
   * instead. `stopping`: the process is shutting down; send no more.
   */
  async turn(endpointId: string, stopping: () => boolean = () => false): Promise<TurnSummary> {
    const state = { more: false };
    const working = this.working.get(endpointId) ?? new Set();
    this.working.set(endpointId, working.add(state));
    try {
      return await this.work(endpointId, state, stopping);
    } finally {
      working.delete(state);
      if (working.size === 0) this.working.delete(endpointId);
    }
  }

  private async work(
    endpointId: string,
    state: { more: boolean },
    stopping: () => boolean,
  ): Promise<TurnSummary> {
    const summary: TurnSummary = { attempted: 0, outcomes: {} };
    // A claim sees every delivery committed before it began: what was dispatched before now
    // needs no claim after this one.
    const claim = () => {
      state.more = false;
      return handled(this.claim(endpointId));
    };
    let claimed: Promise<Claim> | undefined = claim();
    let recording: Promise<TurnRecord> | undefined;
    for (let batch = 0; claimed; batch++) {
      const batchClaim: Claim = await claimed;
      const { contexts, until } = batchClaim;
      if (contexts.length === 0) break;
      const another = () => batch + 1 < TURN_BATCHES && !stopping();
      claimed = contexts.length === BATCH_DELIVERIES && another() ? claim() : undefined;
      const sent = await this.send(batchClaim, stopping);
      await this.store.release(sent.unsent, until);
      summary.attempted += sent.attempts.length;
      const clean = sent.unsent.length === 0 && sent.outcomes.every((o) => o === 'delivered');
      // Deliveries made while this batch went out: this turn takes them now.
      if (!claimed && clean && state.more && another()) claimed = claim();
      // Records go one at a time, in order: a batch's after the one before it. Only the last
      // one of the turn reads when the endpoint's next turn is due.
      await recording;
      recording = handled(this.record(endpointId, sent, summary, !claimed));
      if (claimed && !clean) {
        // A receiver that fails or is slow gets no more this turn: what was claimed goes back.
        const extra: Claim = await claimed;
        await this.store.release(
          extra.contexts.map((c) => c.delivery.id),
          extra.until,
        );
        claimed = undefined;
      }
    }
    const last = await recording;
    webhookTurnDeliveries.observe(summary.attempted);
    if (last?.disabled) {
      summary.disabled = last.disabled;
      this.log.warn('webhook endpoint disabled', { endpointId, reason: last.disabled });
      return summary;
    }
    const next =
      last?.next !== undefined ? last.next : await this.store.nextDue(endpointId, new Date());
    // Now when more is due (queued behind every other endpoint's turn already waiting), else
    // at the moment it falls due.
    if (next) await this.jobs.enqueue([{ endpointId, at: next }]);
    return summary;
  }

  /** Claims a batch of the endpoint's due deliveries, held for as long as sending them takes. */
  private async claim(endpointId: string): Promise<Claim> {
    const now = new Date();
    const until = new Date(
      now.getTime() + SEND_WINDOW_MS + this.config.timeoutMs + CLAIM_MARGIN_MS,
    );
    return {
      contexts: await this.store.claimTurn(endpointId, now, BATCH_DELIVERIES, until),
      until,
    };
  }

  /**
   * Sends a claimed batch, WEBHOOK_CONCURRENCY at a time; an attempt starts only while it can
   * end and be recorded within the claim.
   */
  private async send({ contexts, until }: Claim, stopping: () => boolean): Promise<SentBatch> {
    const sent: SentBatch = { attempts: [], outcomes: [], unsent: [] };
    const lastStart = until.getTime() - this.config.timeoutMs - CLAIM_MARGIN_MS;
    let next = 0;
    const sender = async () => {
      while (next < contexts.length) {
        const context = contexts[next++]!;
        if (stopping() || Date.now() > lastStart) {
          sent.unsent.push(context.delivery.id);
          continue;
        }
        const { outcome, record } = await this.attempt(context);
        sent.attempts.push({ delivery: context.delivery, record });
        sent.outcomes.push(outcome);
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.config.concurrency, contexts.length) }, sender),
    );
    return sent;
  }

  /**
   * Records a batch's attempts, and counts those stored into the turn's summary; `readNext`:
   * the batch is the turn's last, so the record also reads when the next turn is due.
   */
  private async record(
    endpointId: string,
    sent: SentBatch,
    summary: TurnSummary,
    readNext: boolean,
  ): Promise<TurnRecord> {
    if (sent.attempts.length === 0) return { stored: [] };
    const now = new Date();
    const record = await this.store.recordTurn(
      endpointId,
      sent.attempts,
      now,
      new Date(now.getTime() - this.config.disableAfterMs),
      { readNext },
    );
    const counted: Partial<Record<AttemptOutcome, number>> = {};
    record.stored.forEach((stored, i) => {
      if (!stored) return;
      const outcome = sent.outcomes[i]!;
      counted[outcome] = (counted[outcome] ?? 0) + 1;
    });
    // Counted once per outcome and batch: a labelled counter hashes its labels per call.
    for (const [outcome, n] of Object.entries(counted) as Array<[AttemptOutcome, number]>) {
      summary.outcomes[outcome] = (summary.outcomes[outcome] ?? 0) + n;
      webhookAttempts.inc({ outcome }, n);
    }
    return record;
  }

  /** Signs and sends one delivery, and says what came of it. */
  private async attempt(
    context: AttemptContext,
  ): Promise<{ outcome: AttemptOutcome; record: AttemptRecord }> {
    const { delivery } = context;
    const body = deliveryBody(context.event, {
      id: delivery.run_id,
      organizationId: delivery.organization_id,
      summary:
        summaryAfter(delivery.run_id, context.history) ??
        (await this.runs.summary(delivery.run_id)),
    });
    const at = new Date();
    const headers = signDelivery(
      signingSecrets(context.endpoint, at),
      messageId(delivery.event_id),
      at,
      body,
    );
    const result = await postWebhook(context.endpoint.url, { ...headers }, body, {
      timeoutMs: this.config.timeoutMs,
      policy: this.config,
    });
    webhookAttemptDuration.observe(result.latencyMs / 1000);
    return this.judge(context, result, at);
  }

  /** What an attempt's result means for the delivery (pure but for the retry's jitter). */
  private judge(
    context: AttemptContext,
    result: AttemptResult,
    at: Date,
  ): { outcome: AttemptOutcome; record: AttemptRecord } {
    const base = {
      at,
      statusCode: result.statusCode,
      latencyMs: result.latencyMs,
      responseBody: result.responseBody,
      error: result.error,
    };
    const code = result.statusCode;
    if (code !== undefined && code >= 200 && code < 300) {
      return {
        outcome: 'delivered',
        record: { ...base, status: 'delivered', nextAttemptAt: null },
      };
    }
    if (code === 410) {
      return {
        outcome: 'gone',
        record: {
          ...base,
          status: 'failed',
          nextAttemptAt: null,
          disable: 'the receiver answered 410 Gone',
        },
      };
    }
    const made = Number(context.delivery.attempts) + 1;
    const error = base.error ?? `the receiver answered ${code}`;
    if (made >= this.config.maxAttempts) {
      return {
        outcome: 'failed',
        record: { ...base, error, status: 'failed', nextAttemptAt: null },
      };
    }
    const nextAttemptAt = new Date(at.getTime() + retryDelayMs(made, this.config.backoffBaseMs));
    return { outcome: 'retry', record: { ...base, error, status: 'pending', nextAttemptAt } };
  }
}
