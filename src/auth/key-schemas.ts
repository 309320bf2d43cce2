// The API keys' schemas: requests and responses, each named; the request types are derived
// from them. A key is shown by its id, name and prefix, never by its secret or hash, except in
// the one answer that makes it (create, roll). A field without a value is left out, never null.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';
import { ALL_SCOPES, SCOPES } from './scopes.js';

const ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

/** Most hours a rolled key may keep working beside its replacement: 7 days. */
export const MAX_OVERLAP_HOURS = 168;
export const DEFAULT_OVERLAP_HOURS = 24;

const scopeList = {
  type: 'array',
  items: { type: 'string', enum: ALL_SCOPES },
  description: `what the key may do: ${Object.entries(SCOPES)
    .map(([scope, allows]) => `${scope} (${allows})`)
    .join('; ')}`,
} as const;

const keyProperties = {
  id: { type: 'string' },
  name: { type: 'string' },
  prefix: {
    type: 'string',
    description:
      'the first characters of the key, to tell keys apart (the key is never shown again)',
  },
  scopes: scopeList,
  createdAt: dateTime,
  expiresAt: {
    ...dateTime,
    description: 'from this time on the key is refused (403 api_key_expired); none: never',
  },
  lastUsedAt: {
    ...dateTime,
    description: 'when a request last used the key; recorded in batches, at most a minute late',
  },
  revokedAt: dateTime,
  replacedBy: {
    type: 'string',
    description: 'the id of the key that a roll made to replace this one',
  },
} as const;
const keyRequired = ['id', 'prefix', 'scopes', 'createdAt'] as const;

export const ApiKeySchema = {
  $id: 'ApiKey',
  type: 'object',
  additionalProperties: false,
  required: keyRequired,
  properties: keyProperties,
} as const;

export const ApiKeyWithSecretSchema = {
  $id: 'ApiKeyWithSecret',
  type: 'object',
  additionalProperties: false,
  required: keyRequired,
  properties: {
    ...keyProperties,
    key: {
      type: 'string',
      pattern: '^wrs_[A-Za-z0-9_-]{32}$',
      description:
        'the key itself, shown only in the answer that made it: only its SHA-256 is stored, so a replay of the request (same Idempotency-Key) answers without it',
    },
  },
} as const;

export function keySchemas(limits: Pick<Config, 'listDefaultLimit' | 'listMaxLimit'>) {
  return {
    createBody: {
      $id: 'CreateApiKeyRequest',
      type: 'object',
      additionalProperties: false,
      required: ['name', 'scopes'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        scopes: {
          ...scopeList,
          minItems: 1,
          maxItems: ALL_SCOPES.length,
          uniqueItems: true,
          description: 'the scopes the new key holds: each one the calling key holds itself',
        },
        expires_at: {
          ...dateTime,
          description: 'when the key stops working (in the future); none: never',
        },
      },
    },
    listQuery: {
      $id: 'GetApiKeysQuery',
      type: 'object',
      additionalProperties: false,
      properties: pageQueryProperties(limits),
    },
    idBody: {
      $id: 'ApiKeyIdRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: ID },
    },
    rollBody: {
      $id: 'RollApiKeyRequest',
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: ID,
        overlap_hours: {
          type: 'number',
          minimum: 0,
          maximum: MAX_OVERLAP_HOURS,
          description: `how long the old key keeps working beside the new one (default ${DEFAULT_OVERLAP_HOURS}; fractions allowed; 0: it stops now)`,
        },
      },
    },
  } as const;
}

type Schemas = ReturnType<typeof keySchemas>;
export type CreateApiKeyBody = FromSchema<Schemas['createBody']>;
export type RollApiKeyBody = FromSchema<Schemas['rollBody']>;
export type ApiKeyView = FromSchema<typeof ApiKeySchema>;
export type ApiKeyWithSecret = FromSchema<typeof ApiKeyWithSecretSchema>;
