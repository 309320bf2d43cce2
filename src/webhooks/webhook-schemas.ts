// The webhook endpoints' schemas: requests and responses, each named; the request types are
// derived from them. Responses are camelCase like the run summaries; a field without a value
// is left out, never null.
import type { OutgoingRequest } from '../http/openapi.js';
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';
import { ActorSchema } from '../audit/actor.js';
import { RUN_EVENT_DATA, RUN_EVENT_TYPES, type RunEventType } from '../runs/run-events.js';
import { WorkflowRunSummarySchema } from '../runs/run-schemas.js';
import { DELIVERY_STATUSES } from './delivery-rows.js';

const ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

const endpointProperties = {
  id: { type: 'string' },
  url: { type: 'string' },
  description: { type: 'string' },
  events: {
    type: 'array',
    items: { type: 'string', enum: RUN_EVENT_TYPES },
    description: 'the event types delivered to this endpoint',
  },
  enabled: { type: 'boolean' },
  disabledReason: { type: 'string', description: 'why the endpoint was disabled' },
  disabledAt: dateTime,
  failingSince: {
    ...dateTime,
    description: 'since when every attempt has failed; 5 days of it disables the endpoint',
  },
  createdAt: dateTime,
  previousSecretExpiresAt: {
    ...dateTime,
    description: 'until when the secret replaced by a rotation still signs too',
  },
} as const;
const endpointRequired = ['id', 'url', 'events', 'enabled', 'createdAt'] as const;

export const WebhookEndpointSchema = {
  $id: 'WebhookEndpoint',
  type: 'object',
  additionalProperties: false,
  required: endpointRequired,
  properties: endpointProperties,
} as const;

export const WebhookEndpointWithSecretSchema = {
  $id: 'WebhookEndpointWithSecret',
  type: 'object',
  additionalProperties: false,
  required: [...endpointRequired, 'secret'],
  properties: {
    ...endpointProperties,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description: 'the signing secret (Standard Webhooks), shown only here',
    },
  },
} as const;

export const WebhookEndpointDeletedSchema = {
  $id: 'WebhookEndpointDeleted',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'deleted'],
  properties: { id: { type: 'string' }, deleted: { type: 'boolean', const: true } },
} as const;

export const WebhookDeliverySchema = {
  $id: 'WebhookDelivery',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'endpointId',
    'runId',
    'webhookId',
    'eventType',
    'eventSeq',
    'status',
    'round',
    'createdAt',
    'attempts',
  ],
  properties: {
    id: { type: 'string' },
    endpointId: { type: 'string' },
    runId: { type: 'string' },
    webhookId: { type: 'string', description: 'the webhook-id header of every attempt' },
    eventType: { type: 'string', enum: RUN_EVENT_TYPES },
    eventSeq: { type: 'integer', description: "the event's place in the run's history" },
    status: { type: 'string', enum: DELIVERY_STATUSES },
    round: { type: 'integer', description: '1, and one more per redelivery' },
    nextAttemptAt: dateTime,
    createdAt: dateTime,
    deliveredAt: dateTime,
    attempts: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['at', 'round', 'latencyMs'],
        properties: {
          at: dateTime,
          round: { type: 'integer' },
          statusCode: { type: 'integer', description: "the receiver's HTTP status" },
          latencyMs: { type: 'integer' },
          responseBody: { type: 'string', description: 'the first 1 KB of the answer' },
          error: { type: 'string', description: 'why the attempt failed' },
        },
      },
    },
  },
} as const;

/** The run's summary right after the event: WorkflowRunSummary, embedded (without its $id). */
const payloadSummary = Object.fromEntries(
  Object.entries(WorkflowRunSummarySchema).filter(([keyword]) => keyword !== '$id'),
) as Omit<typeof WorkflowRunSummarySchema, '$id'>;

/** A delivery of one type of event: its data is that type's, with what every delivery adds. */
const payloadOf = <const T extends RunEventType>(type: T) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { type: 'string', const: type },
      timestamp: { ...dateTime, description: 'when the change was made' },
      data: {
        type: 'object',
        description: RUN_EVENT_DATA[type].description,
        additionalProperties: false,
        required: [...RUN_EVENT_DATA[type].required, 'runId', 'organizationId', 'seq', 'run'],
        properties: {
          ...RUN_EVENT_DATA[type].properties,
          runId: { type: 'string' },
          organizationId: { type: 'string' },
          seq: {
            type: 'integer',
            minimum: 1,
            description: "the event's place in the run's history",
          },
          actor: {
            ...ActorSchema,
            description: `${ActorSchema.description}; absent for events recorded before actors were`,
          },
          run: payloadSummary,
        },
      },
    },
  }) as const;

/**
 * The body of a delivery (payload.ts), as docs/webhooks.md documents it: not an answer of the API, so
 * no route lists it; a receiver (and the tests) can check what it is sent against it.
 */
export const WebhookPayloadSchema = {
  $id: 'WebhookPayload',
  oneOf: RUN_EVENT_TYPES.map((type) => payloadOf(type)),
} as const;

/** What the service POSTs to a subscribed endpoint, for the API document's `webhooks`. */
export const RUN_EVENT_WEBHOOK: OutgoingRequest = {
  name: 'runEvent',
  summary: 'A run event, POSTed to each endpoint subscribed to its type',
  description:
    'Signed as Standard Webhooks lays out: verify webhook-signature over `${webhook-id}.${webhook-timestamp}.${body}` with the endpoint secret. At least once, in history order per run; de-duplicate on webhook-id.',
  body: WebhookPayloadSchema,
  headers: {
    'webhook-id': "the event's id (evt_<n>): the same for every attempt and endpoint",
    'webhook-timestamp': 'Unix seconds of the attempt',
    'webhook-signature': 'v1,<base64 HMAC-SHA256>, one per secret that signs (space-separated)',
  },
};

export function webhookSchemas(limits: Pick<Config, 'listDefaultLimit' | 'listMaxLimit'>) {
  return {
    createBody: {
      $id: 'CreateWebhookEndpointRequest',
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: {
          type: 'string',
          minLength: 1,
          maxLength: 2048,
          description: 'https URL the events are POSTed to',
        },
        events: {
          type: 'array',
          minItems: 1,
          maxItems: RUN_EVENT_TYPES.length,
          uniqueItems: true,
          items: { type: 'string', enum: RUN_EVENT_TYPES },
          description: 'event types to deliver; every type when left out',
        },
        description: { type: 'string', maxLength: 500 },
      },
    },
    idBody: {
      $id: 'WebhookEndpointIdRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: ID },
    },
    deliveriesQuery: {
      $id: 'GetWebhookDeliveriesQuery',
      type: 'object',
      additionalProperties: false,
      properties: {
        endpoint_id: ID,
        status: { type: 'string', enum: DELIVERY_STATUSES },
        run_id: ID,
        ...pageQueryProperties(limits),
      },
    },
    redeliverBody: {
      $id: 'RedeliverWebhookRequest',
      type: 'object',
      additionalProperties: false,
      required: ['delivery_id'],
      properties: { delivery_id: ID },
    },
  } as const;
}

type Schemas = ReturnType<typeof webhookSchemas>;
export type CreateEndpointBody = FromSchema<Schemas['createBody']>;
export type WebhookEndpointView = FromSchema<typeof WebhookEndpointSchema>;
export type WebhookEndpointWithSecret = FromSchema<typeof WebhookEndpointWithSecretSchema>;
export type WebhookDeliveryView = FromSchema<typeof WebhookDeliverySchema>;
