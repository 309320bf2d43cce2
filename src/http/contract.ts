// A route states its contract: method, path, whether it needs an API key, the JSON Schemas of
// its query and body, and its responses by status. mountRoutes builds the Koa chain from that
// (key check and rate limit, body reader, validation, deadline, handler), so a handler receives
// typed, validated values and stays short; the same list of routes can be enumerated to
// describe the API. Schemas are named ($id) and registered once in the one Ajv.
import type { Router } from '@koa/router';
import type { Middleware } from 'koa';
import type { Principal } from '../auth/key-store.js';
import { DomainError, pointer } from '../errors.js';
import type { IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import { NO_DEADLINE, type WriteGate } from '../lib/deadline.js';
import { compileValidator, registerSchemas, type NamedSchema } from '../lib/validation.js';
import type { AppContext, AppState } from './context.js';

export interface ResponseContract {
  description: string;
  /** The body's schema: a named schema's $id, or an inline schema that refers to named ones. */
  schema?: string | Record<string, unknown>;
  /** Response headers worth describing (Link, Idempotent-Replayed, Retry-After). */
  headers?: Record<string, string>;
}

/** What a handler receives: values already checked against the route's schemas. */
export interface RouteInput<Q, B> {
  query: Q;
  body: B;
  /** Set on every route with auth 'apiKey'. */
  principal: Principal;
  /** Asked just before the route's write is sent (see lib/deadline.ts). */
  deadline: WriteGate;
  /** A new Idempotency-Key the request carries: the route's write stores it with its effect. */
  idempotency?: IdempotencyClaim;
}

export interface RouteReply {
  status: number;
  /** A value to send as JSON, or JSON text already made. */
  body: unknown;
  headers?: Record<string, string>;
}

export interface Route<Q = unknown, B = unknown> {
  /** A stable name for the operation (the API document's operationId). */
  operationId: string;
  method: 'GET' | 'POST';
  /** Relative to BASE_PATH. */
  path: string;
  summary: string;
  description?: string;
  auth: 'apiKey' | 'none';
  query?: NamedSchema;
  body?: NamedSchema;
  /** Responses particular to the route; those every route of its kind shares are added. */
  responses: Record<number, ResponseContract>;
  handle(input: RouteInput<Q, B>, ctx: AppContext): Promise<RouteReply>;
}

/** Declares a route; Q and B are the types of its query and body, derived from their schemas. */
export function defineRoute<Q = Record<string, never>, B = undefined>(
  route: Route<Q, B>,
): Route<Q, B> {
  return route;
}

const error = (description: string): ResponseContract => ({ description, schema: 'Error' });

/** Every response a route can give: its own, and those of the machinery in front of it. */
export function responsesOf(route: Route): Record<number, ResponseContract> {
  const all: Record<number, ResponseContract> = {};
  if (route.query || route.body) all[400] = error('the request is not valid; nothing was done');
  if (route.auth === 'apiKey') {
    all[400] ??= error('more than one Authorization header');
    all[403] = error('missing, unknown or revoked API key');
    all[429] = {
      ...error('too many requests for this API key'),
      headers: { 'Retry-After': 'seconds until the window resets' },
    };
  }
  if (route.body) {
    all[408] = error('the body did not arrive within BODY_TIMEOUT_MS; nothing was done');
    all[413] = error('the body is larger than BODY_LIMIT_BYTES');
    all[415] = error('the body is not JSON in UTF-8');
  }
  all[503] = error('the service could not finish in time or reach MySQL; nothing was done');
  if (route.method === 'POST') {
    all[409] = error('a request with the same Idempotency-Key is still being handled');
    all[422] = error('the Idempotency-Key was used with another endpoint or body');
    all[500] = error(
      'code outcome_unknown: the commit was sent and not confirmed, so the change may have been made',
    );
  }
  return { ...all, ...route.responses };
}

/**
 * Query values arrive as strings: each is turned into the type its schema gives (an integer,
 * a boolean) before validation, so the handler gets what the schema says. A parameter given
 * twice is refused rather than one of its values guessed at.
 */
function coerceQuery(schema: NamedSchema | undefined, raw: AppContext['query']): unknown {
  const properties = (schema?.properties ?? {}) as Record<string, { type?: string }>;
  // No prototype: a parameter named __proto__ is data, and is refused as unknown.
  const query: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) {
      throw new DomainError('invalid_query', `${name} may be given only once`, pointer(name));
    }
    const type = Object.hasOwn(properties, name) ? properties[name]?.type : undefined;
    if (type === 'integer' && value !== undefined && /^-?\d{1,15}$/.test(value)) {
      query[name] = Number(value);
    } else if (type === 'boolean' && (value === 'true' || value === 'false')) {
      query[name] = value === 'true';
    } else {
      query[name] = value;
    }
  }
  return query;
}

/** The query as the route's schema reads it, or a 400 (exported for unit tests). */
export function parseQuery(schema: NamedSchema | undefined, raw: AppContext['query']): unknown {
  const query = coerceQuery(schema, raw);
  const names = Object.keys(query as object);
  if (!schema) {
    if (names[0] !== undefined) {
      throw new DomainError(
        'invalid_query',
        `unknown query parameter '${names[0]}'`,
        pointer(names[0]),
      );
    }
    return {};
  }
  let check = queryValidators.get(schema);
  if (!check) {
    check = compileValidator(schema, 'query');
    queryValidators.set(schema, check);
  }
  return check(query);
}

const queryValidators = new WeakMap<NamedSchema, (value: unknown) => unknown>();

/** The machinery in front of every handler, built once by the app. */
export interface RouteMiddleware {
  /** Key check and rate limit. */
  apiKey: Middleware<AppState>[];
  /** Reads and parses the JSON body. */
  body: Middleware<AppState>;
  /** Starts the service's clock (after the body has arrived). */
  timeout: Middleware<AppState>;
  /** Idempotency-Key handling for a POST route, by its operationId. */
  idempotency: (endpoint: string) => Middleware<AppState>;
}

/** Registers each route's schemas and mounts it on the router. */
export function mountRoutes(
  router: Router<AppState>,
  routes: readonly Route[],
  middleware: RouteMiddleware,
): void {
  for (const route of routes) {
    const schemas = [route.query, route.body].filter((s): s is NamedSchema => s !== undefined);
    registerSchemas(schemas);
    const checkBody = route.body ? compileValidator(route.body) : undefined;

    const validate: Middleware<AppState> = async (ctx, next) => {
      ctx.state.input = {
        query: parseQuery(route.query, ctx.query),
        body: checkBody ? checkBody(ctx.state.body) : undefined,
      };
      await next();
    };
    const handler: Middleware<AppState> = async (ctx) => {
      const reply = await route.handle(
        {
          query: ctx.state.input?.query,
          body: ctx.state.input?.body,
          principal: ctx.state.principal!,
          deadline: ctx.state.deadline ?? NO_DEADLINE,
          idempotency: ctx.state.idempotency,
        },
        ctx,
      );
      ctx.status = reply.status;
      if (reply.headers) ctx.set(reply.headers);
      if (typeof reply.body === 'string') ctx.type = 'application/json';
      ctx.body = reply.body;
    };

    const chain: Middleware<AppState>[] = [
      ...(route.auth === 'apiKey' ? middleware.apiKey : []),
      ...(route.body ? [middleware.body] : []),
      validate,
      middleware.timeout,
      ...(route.method === 'POST' ? [middleware.idempotency(route.operationId)] : []),
      handler,
    ];
    if (route.method === 'GET') router.get(route.path, ...chain);
    else router.post(route.path, ...chain);
  }
}
