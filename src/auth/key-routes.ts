// The API keys' endpoints, each stating its contract (http/contract.ts); handlers only translate
// between HTTP and the key service. Every one needs keys:manage, but the calling key's own
// description, which any key may read (a client learns what it may do before offering it).
import { defineRoute, pageResponse, type Route } from '../http/contract.js';
import { listPage } from '../http/pagination.js';
import { ApiKeySchema, ApiKeyWithSecretSchema, type keySchemas } from './key-schemas.js';
import type { KeyService } from './key-service.js';

export function keyRoutes(deps: {
  service: KeyService;
  schemas: ReturnType<typeof keySchemas>;
  defaultLimit: number;
}): Route[] {
  const { service, schemas } = deps;
  return [
    defineRoute({
      operationId: 'createApiKey',
      method: 'POST',
      path: '/create-api-key',
      summary: 'Make an API key with some of the scopes the calling key holds',
      description:
        'The key itself is in this answer only. A retry with the same Idempotency-Key makes no second key; it is answered 200 with the key made, without its secret.',
      scope: 'keys:manage',
      body: schemas.createBody,
      responses: {
        200: {
          description: 'the key, with its secret (without it in a replay)',
          schema: ApiKeyWithSecretSchema,
        },
      },
      refusals: ['expiry_in_past', 'scope_not_held', 'expiry_not_held'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.create(principal, body, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'getCurrentApiKey',
      method: 'GET',
      path: '/get-current-api-key',
      summary: 'The calling key: its name, prefix, scopes and expiry (never its secret)',
      description:
        'What a client such as the console reads at sign-in to know which operations the key may call.',
      scope: null,
      responses: { 200: { description: 'the calling key', schema: ApiKeySchema } },
      refusals: ['api_key_not_found'],
      async handle({ principal }) {
        return { status: 200, body: await service.current(principal) };
      },
    }),
    defineRoute({
      operationId: 'getApiKeys',
      method: 'GET',
      path: '/get-api-keys',
      summary: "The organization's API keys, newest first (never a secret)",
      scope: 'keys:manage',
      query: schemas.listQuery,
      responses: { 200: pageResponse('API keys', ApiKeySchema) },
      async handle({ principal, query }, ctx) {
        return listPage(
          ctx,
          query,
          deps.defaultLimit,
          (limit, beforeSeq) => service.list(principal, limit, beforeSeq),
          (row) => row.view,
        );
      },
    }),
    defineRoute({
      operationId: 'revokeApiKey',
      method: 'POST',
      path: '/revoke-api-key',
      summary: 'Revoke a key: every API process refuses it within KEY_CACHE_TTL_MS (2 s)',
      description: 'Revoking a key twice keeps the first time.',
      scope: 'keys:manage',
      body: schemas.idBody,
      responses: { 200: { description: 'the key, revoked', schema: ApiKeySchema } },
      refusals: ['api_key_not_found'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.revoke(principal, body.id, deadline, idempotency),
        };
      },
    }),
    defineRoute({
      operationId: 'rollApiKey',
      method: 'POST',
      path: '/roll-api-key',
      summary: 'Replace a key by a new one with the same name, scopes and expiry',
      description:
        'The old key keeps working for overlap_hours (default 24, at most 168), then is refused with api_key_expired. The new key is in this answer only.',
      scope: 'keys:manage',
      body: schemas.rollBody,
      responses: {
        200: {
          description: 'the new key, with its secret (without it in a replay)',
          schema: ApiKeyWithSecretSchema,
        },
      },
      refusals: ['api_key_not_found', 'api_key_inactive', 'scope_not_held'],
      async handle({ principal, body, deadline, idempotency }) {
        return {
          status: 200,
          body: await service.roll(principal, body, deadline, idempotency),
        };
      },
    }),
  ];
}
