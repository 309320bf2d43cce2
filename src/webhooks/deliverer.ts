// One attempt of one delivery, from a delivery job: checks it is still owed and that no
// earlier event of its run is still owed to the same endpoint (events of a run arrive in
// history order; other runs do not wait), claims it, signs and sends it, records the outcome
// in MySQL, then enqueues what follows: its own retry, or the run's next delivery to the
// endpoint. 2xx is delivered; 410 Gone disables the endpoint; anything else is tried again on
// the retry schedule until the attempts run out.
import type { WebhookConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { webhookAttemptDuration, webhookAttempts } from '../metrics/metrics.js';
import type { DeliveryJobs } from '../jobs/webhook-delivery.js';
import {
  deliveryRef,
  type AttemptContext,
  type AttemptRecord,
  type DeliveryStore,
} from './delivery-store.js';
import { signingSecrets } from './endpoint-store.js';
import { postWebhook, type AttemptResult } from './http-sender.js';
import { deliveryBody, messageId, summaryAfter } from './payload.js';
import { retryDelayMs } from './retry-schedule.js';
import { signDelivery } from './signing.js';
import type { RunSummary } from '../runs/run-schemas.js';

export type AttemptOutcome =
  'not_owed' | 'later' | 'waiting' | 'busy' | 'delivered' | 'retry' | 'failed' | 'gone';

/** The run's summary as it is now: for a run older than its history (see summaryAfter). */
export interface RunSummaryReader {
  summary(runId: string): Promise<RunSummary>;
}

// Held longer than an attempt can take, so a claim outlives its attempt.
const CLAIM_MARGIN_MS = 5_000;

export class Deliverer {
  constructor(
    private readonly store: DeliveryStore,
    private readonly runs: RunSummaryReader,
    private readonly jobs: DeliveryJobs,
    private readonly config: WebhookConfig,
    private readonly log: Logger,
  ) {}

  async attempt(deliveryId: string, now = new Date()): Promise<AttemptOutcome> {
    const context = await this.store.forAttempt(deliveryId);
    if (!context || context.delivery.status !== 'pending' || !context.endpoint.enabled) {
      return 'not_owed';
    }
    const { delivery } = context;
    const due = delivery.next_attempt_at?.getTime() ?? 0;
    if (due > now.getTime() + 100) {
      // Early (a nudge while it waits out its backoff): come back when it is due.
      await this.jobs.enqueue([deliveryRef(delivery)], { now: now.getTime() });
      return 'later';
    }
    if (context.waits) return 'waiting';
    if (
      !(await this.store.claim(
        delivery,
        now,
        new Date(now.getTime() + this.config.timeoutMs + CLAIM_MARGIN_MS),
      ))
    ) {
      return 'busy';
    }

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

    const { outcome, record } = this.judge(context, result, at);
    if (outcome === 'delivered') {
      // The common case, in one round trip with the read of what follows it.
      const next = await this.store.recordDelivered(context, record);
      webhookAttempts.inc({ outcome });
      if (next) await this.jobs.enqueue([next]);
      return outcome;
    }
    const stored = await this.store.recordAttempt(context, record);
    if (!stored.recorded) return 'busy';
    webhookAttempts.inc({ outcome });
    if (stored.disabled) {
      this.log.warn('webhook endpoint disabled', {
        endpointId: context.endpoint.id,
        organizationId: context.endpoint.organizationId,
        reason: stored.disabled,
      });
      return outcome;
    }
    if (outcome === 'retry') {
      const retry = { ...delivery, attempts: Number(delivery.attempts) + 1 };
      await this.jobs.enqueue([{ ...deliveryRef(retry), nextAttemptAt: record.nextAttemptAt }]);
    } else {
      const next = await this.store.nextOfChain(delivery.endpoint_id, delivery.run_id);
      if (next) await this.jobs.enqueue([next]);
    }
    return outcome;
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
      failingLimit: new Date(at.getTime() - this.config.disableAfterMs),
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
    const made = context.delivery.attempts + 1;
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
