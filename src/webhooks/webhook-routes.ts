// The webhook endpoints, each stating its contract (http/contract.ts); handlers only translate
// between HTTP and the webhook service.
import { arrayOf, defineRoute, pageResponse, type Route } from '../http/contract.js';
import { listPage } from '../http/pagination.js';
import {
  WebhookDeliverySchema,
  WebhookEndpointDeletedSchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
  type webhookSchemas,
} from './webhook-schemas.js';
import type { WebhookService } from './webhook-service.js';

export function webhookRoutes(deps: {
  service: WebhookService;
  schemas: ReturnType<typeof webhookSchemas>;
  defaultLimit: number;
}): Route[] {
  const { service, schemas } = deps;
  return [
    defineRoute({
      operationId: 'createWebhookEndpoint',
      method: 'POST',
      path: '/create-webhook-endpoint',
      summary: 'Subscribe a URL to run events',
      description:
        'Events are POSTed to the URL, signed as Standard Webhooks lays out; the signing secret is in this answer only.',
      scope: 'webhooks:write',
      body: schemas.createBody,
      responses: {
        200: {
          description: 'the endpoint, with its secret',
          schema: WebhookEndpointWithSecretSchema,
        },
      },
      refusals: ['invalid_url', 'endpoint_limit_reached'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.createEndpoint(principal, body, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'getWebhookEndpoints',
      method: 'GET',
      path: '/get-webhook-endpoints',
      summary: "The organization's webhook endpoints (without secrets)",
      scope: 'webhooks:read',
      responses: {
        200: {
          description: 'every endpoint',
          schema: arrayOf(WebhookEndpointSchema),
        },
      },
      async handle({ principal }) {
        return { status: 200, body: await service.listEndpoints(principal) };
      },
    }),
    defineRoute({
      operationId: 'deleteWebhookEndpoint',
      method: 'POST',
      path: '/delete-webhook-endpoint',
      summary: 'Delete an endpoint, with its delivery log; nothing more is sent to it',
      scope: 'webhooks:write',
      body: schemas.idBody,
      responses: {
        200: { description: 'deleted', schema: WebhookEndpointDeletedSchema },
      },
      refusals: ['endpoint_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.deleteEndpoint(principal, body.id, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'rotateWebhookSecret',
      method: 'POST',
      path: '/rotate-webhook-secret',
      summary: "Replace an endpoint's signing secret",
      description:
        'The old secret keeps signing beside the new one for 24 hours: each delivery then carries both signatures.',
      scope: 'webhooks:write',
      body: schemas.idBody,
      responses: {
        200: {
          description: 'the endpoint, with its new secret',
          schema: WebhookEndpointWithSecretSchema,
        },
      },
      refusals: ['endpoint_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.rotateSecret(principal, body.id, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'getWebhookDeliveries',
      method: 'GET',
      path: '/get-webhook-deliveries',
      summary: 'The delivery log, newest first, optionally filtered, with every attempt',
      scope: 'webhooks:read',
      query: schemas.deliveriesQuery,
      responses: {
        200: pageResponse('deliveries', WebhookDeliverySchema),
      },
      async handle({ principal, query }, ctx) {
        const filter = { endpointId: query.endpoint_id, status: query.status, runId: query.run_id };
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeSeq) => service.listDeliveries(principal, filter, limit, beforeSeq),
          (row) => row.view,
        );
      },
    }),
    defineRoute({
      operationId: 'redeliverWebhook',
      method: 'POST',
      path: '/redeliver-webhook',
      summary: 'Send a delivery again now',
      description:
        'A delivered or failed delivery starts a new round of attempts; one still owed is tried now.',
      scope: 'webhooks:write',
      body: schemas.redeliverBody,
      responses: {
        202: { description: 'the delivery, owed now', schema: WebhookDeliverySchema },
      },
      refusals: ['delivery_not_found', 'endpoint_disabled'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 202,
          body: await service.redeliver(principal, body.delivery_id, deadline, idempotency),
        };
      },
    }),
  ];
}
