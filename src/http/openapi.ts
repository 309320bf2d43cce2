// The OpenAPI 3.1 document of the API, generated from the routes' own contracts and the named
// schemas they use: nothing here describes an endpoint a second time. Served at /openapi.json.
import type { NamedSchema } from '../lib/validation.js';
import { namedSchemas, responsesOf, type ResponseSchema, type Route } from './contract.js';
import { ERRORS, type ErrorCode } from './errors.js';

type Json = Record<string, unknown>;

/**
 * A schema as the document holds it: no $id. Schemas hold no $ref: a body refers to a named
 * schema by the object itself (contract.ts), which becomes a reference here (ref).
 */
function forDocument(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forDocument);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (key === '$id') continue;
    if (key === 'example') {
      out.examples = [value]; // JSON Schema 2020-12 spells it so
    } else {
      out[key] = forDocument(value);
    }
  }
  return out;
}

/** A reference to the named schema's entry in components. */
function ref(schema: NamedSchema): Json {
  return { $ref: `#/components/schemas/${schema.$id}` };
}

function bodySchema(schema: ResponseSchema): Json {
  return '$id' in schema ? ref(schema) : { type: 'array', items: ref(schema.items) };
}

/** One example body per code an error status can carry, named by the code. */
function codeExamples(codes: readonly ErrorCode[]): Json {
  return Object.fromEntries(
    codes.map((code) => [
      code,
      { summary: ERRORS[code].meaning, value: { message: ERRORS[code].meaning, code } },
    ]),
  );
}

function operation(route: Route): Json {
  const parameters: Json[] = [];
  const query = route.query as
    { properties?: Record<string, Json>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    const { description, ...rest } = schema;
    parameters.push({
      name,
      in: 'query',
      required: query?.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: forDocument(rest),
    });
  }
  if (route.method === 'POST') {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes the request safe to retry: the same key with the same body gets the first answer again.',
      schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
    });
  }
  const responses: Json = {};
  for (const [status, response] of Object.entries(responsesOf(route))) {
    const headers: Json = {};
    for (const [name, description] of Object.entries(response.headers ?? {})) {
      headers[name] = { description, schema: { type: 'string' } };
    }
    if (route.method === 'POST' && Number(status) < 300) {
      headers['Idempotent-Replayed'] = {
        description: '"true" when this is the stored answer to an earlier request with the key',
        schema: { type: 'string', enum: ['true'] },
      };
    }
    responses[status] = {
      description: response.description,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(response.schema
        ? {
            content: {
              [response.mediaType ?? 'application/json']: {
                schema: bodySchema(response.schema),
                ...(response.codes ? { examples: codeExamples(response.codes) } : {}),
              },
            },
          }
        : {}),
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `${route.description ? `${route.description} ` : ''}${route.scope ? `Scope: \`${route.scope}\`.` : 'Any key, whatever its scopes.'}`,
    // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs: here its scope.
    security: [{ apiKey: route.scope ? [route.scope] : [] }],
    ...(route.scope ? { 'x-scope': route.scope } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: ref(route.body) } },
          },
        }
      : {}),
    responses,
  };
}

/** A request the service sends (OpenAPI 3.1's `webhooks`): what a receiver is sent. */
export interface OutgoingRequest {
  name: string;
  summary: string;
  description: string;
  /** The body's named schema. */
  body: NamedSchema;
  /** Request headers, by name: what each says. */
  headers: Record<string, string>;
}

function outgoing(request: OutgoingRequest): Json {
  return {
    post: {
      operationId: request.name,
      summary: request.summary,
      description: request.description,
      parameters: Object.entries(request.headers).map(([name, description]) => ({
        name,
        in: 'header',
        required: true,
        description,
        schema: { type: 'string' },
      })),
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref(request.body) } },
      },
      responses: {
        '2XX': { description: 'received: any 2xx ends the delivery' },
        default: { description: 'anything else (or no answer in time) is retried' },
      },
    },
  };
}

export function openApiDocument(
  routes: readonly Route[],
  basePath: string,
  sent: readonly OutgoingRequest[] = [],
): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  const schemas: Json = {};
  for (const schema of [...namedSchemas(routes), ...sent.map((request) => request.body)]) {
    schemas[schema.$id] = forDocument(schema);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Workflow run service',
      version: '1.0.0',
      description:
        'Create workflow runs from templates, follow them (one run in full, its history, filtered lists) and steer them (complete a step, cancel, retry). Every request but this document carries the API key in Authorization.',
    },
    servers: [{ url: basePath || '/' }],
    security: [{ apiKey: [] }],
    paths,
    ...(sent.length > 0
      ? { webhooks: Object.fromEntries(sent.map((request) => [request.name, outgoing(request)])) }
      : {}),
    components: {
      schemas,
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'The API key itself, or "Bearer <key>".',
        },
      },
    },
  };
}
