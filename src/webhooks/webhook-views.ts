// How endpoints and deliveries are shown: camelCase, absent values left out, never a secret
// except in the answer that makes one.
import { RUN_EVENT_TYPES } from '../runs/run-events.js';
import { messageId } from './payload.js';
import type { AttemptRow, DeliveryRow } from './delivery-rows.js';
import type { Endpoint } from './endpoint-store.js';
import type { WebhookDeliveryView, WebhookEndpointView } from './webhook-schemas.js';

export function toEndpointView(endpoint: Endpoint, now = new Date()): WebhookEndpointView {
  const view: WebhookEndpointView = {
    id: endpoint.id,
    url: endpoint.url,
    events: [...(endpoint.eventTypes ?? RUN_EVENT_TYPES)],
    enabled: endpoint.enabled,
    createdAt: endpoint.createdAt.toISOString(),
  };
  if (endpoint.description !== null) view.description = endpoint.description;
  if (endpoint.disabledReason !== null) view.disabledReason = endpoint.disabledReason;
  if (endpoint.disabledAt !== null) view.disabledAt = endpoint.disabledAt.toISOString();
  if (endpoint.failingSince !== null) view.failingSince = endpoint.failingSince.toISOString();
  if (endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now) {
    view.previousSecretExpiresAt = endpoint.previousSecretExpiresAt.toISOString();
  }
  return view;
}

export function toDeliveryView(delivery: DeliveryRow, attempts: AttemptRow[]): WebhookDeliveryView {
  const view: WebhookDeliveryView = {
    id: delivery.id,
    endpointId: delivery.endpoint_id,
    runId: delivery.run_id,
    webhookId: messageId(delivery.event_id),
    eventType: delivery.event_type,
    eventSeq: Number(delivery.event_seq),
    status: delivery.status,
    round: Number(delivery.round),
    createdAt: delivery.created_at.toISOString(),
    attempts: attempts.map((a) => {
      const attempt: WebhookDeliveryView['attempts'][number] = {
        at: a.attempted_at.toISOString(),
        round: Number(a.round),
        latencyMs: Number(a.latency_ms),
      };
      if (a.status_code !== null) attempt.statusCode = Number(a.status_code);
      if (a.response_body !== null) attempt.responseBody = a.response_body;
      if (a.error !== null) attempt.error = a.error;
      return attempt;
    }),
  };
  if (delivery.status === 'pending' && delivery.next_attempt_at !== null) {
    view.nextAttemptAt = delivery.next_attempt_at.toISOString();
  }
  if (delivery.delivered_at !== null) view.deliveredAt = delivery.delivered_at.toISOString();
  return view;
}
