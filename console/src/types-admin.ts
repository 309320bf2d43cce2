// The shapes of the webhook and API key answers the admin screens read (the API document's
// WebhookEndpoint, WebhookEndpointWithSecret, WebhookDelivery; ApiKey is in types.ts).

export const EVENT_TYPES = [
  'run.created',
  'run.started',
  'step.completed',
  'step.skipped',
  'step.overdue',
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.retried',
  'run.deleted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface WebhookEndpoint {
  id: string;
  url: string;
  description?: string;
  events: EventType[];
  enabled: boolean;
  disabledReason?: string;
  disabledAt?: string;
  failingSince?: string;
  createdAt: string;
  previousSecretExpiresAt?: string;
}

export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  secret: string;
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryAttempt {
  at: string;
  round: number;
  statusCode?: number;
  latencyMs: number;
  responseBody?: string;
  error?: string;
}

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  runId: string;
  webhookId: string;
  eventType: EventType;
  eventSeq: number;
  status: DeliveryStatus;
  round: number;
  nextAttemptAt?: string;
  createdAt: string;
  deliveredAt?: string;
  attempts: DeliveryAttempt[];
}
