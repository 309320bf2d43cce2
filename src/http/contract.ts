// A route states its contract: method, path, the scope its API key must hold, the JSON Schemas of
// its query and body, and its responses by status. mountRoutes builds the Koa chain from that
// (key check and rate limit, body reader, validation, deadline, handler), so a handler receives
// typed, validated values and stays short; the same list of routes can be enumerated to
// describe the API. Schemas are named ($id) objects: a route holds the very objects it uses,
// and mountRoutes registers every one it finds in the one Ajv, so no list of them is kept.
import type { Router } from '@koa/router';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Middleware } from 'koa';
import type { Principal } from '../auth/principal.js';
import { requireScope } from '../auth/require-api-key.js';
import type { Scope } from '../auth/scopes.js';
import { DomainError, pointer, type DomainErrorCode } from '../errors.js';
import type { IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import { NO_DEADLINE, type WriteGate } from '../lib/deadline.js';
import { compileValidator, registerSchemas, type NamedSchema } from '../lib/validation.js';
import { ErrorSchema } from './common-schemas.js';
import type { AppContext, AppState } from './context.js';
import { ERRORS, type ErrorCode } from './errors.js';

/** A body that is a JSON array of a named schema (the lists); see arrayOf. */
export interface ArrayOf {
  type: 'array';
  items: NamedSchema;
}

/** A response body's schema: a named schema, or an array of one. */
export type ResponseSchema = NamedSchema | ArrayOf;

/** The schema of a body that is a JSON array of `items`. */
export function arrayOf(items: NamedSchema): ArrayOf {
  return { type: 'array', items };
}

/** The answer of a list: a page of `items`, the next page's URL in the Link header. */
export function pageResponse(what: string, items: NamedSchema): ResponseContract {
  return {
    description: `a page of ${what}; the next page is in the Link header`,
    schema: arrayOf(items),
    headers: { Link: '<next page URL>; rel="next", when there is one' },
  };
}

/** The named schema a response body refers to (an array's items). */
function namedIn(schema: ResponseSchema): NamedSchema {
  return '$id' in schema ? schema : schema.items;
}

export interface ResponseContract {
  description: string;
  /** The body's schema: the named schema object itself, or arrayOf(one). */
  schema?: ResponseSchema;
  /** The body's media type, when not JSON (the event stream's text/event-stream). */
  mediaType?: string;
  /** Response headers worth describing (Link, Idempotent-Replayed, Retry-After). */
  headers?: Record<string, string>;
  /** For an error status: the codes the route can answer with there. */
  codes?: readonly ErrorCode[];
}

/** What a handler receives: values already checked against the route's schemas. */
export interface RouteInput<Q, B> {
  query: Q;
  body: B;
  /** The caller's key (every route takes one), already checked to hold the route's scope. */
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

/** A route as mounted and enumerated: its handler takes the values its schemas checked. */
export interface Route {
  /** A stable name for the operation (the API document's operationId). */
  operationId: string;
  method: 'GET' | 'POST';
  /** Relative to BASE_PATH. */
  path: string;
  summary: string;
  description?: string;
  /**
   * The one scope an API key must hold to call the route. Every route takes a key, and a
   * route cannot be declared without its scope: least privilege by construction. `null` only
   * for what any key may read of itself (GET /get-current-api-key), stated as such.
   */
  scope: Scope | null;
  query?: NamedSchema;
  body?: NamedSchema;
  /** The route's own answers (its successes); its error answers are derived (responsesOf). */
  responses: Record<number, ResponseContract>;
  /** The domain's refusals the route's handler can make, beyond those of every route. */
  refusals?: readonly DomainErrorCode[];
  handle(input: RouteInput<unknown, unknown>, ctx: AppContext): Promise<RouteReply>;
}

/** The type of the values a schema admits, or `Absent` for a route without that schema. */
type InputOf<S, Absent> = S extends JSONSchema ? FromSchema<S> : Absent;

/** A route as declared: the handler's query and body types are those of QS and BS. */
interface RouteDefinition<QS, BS> extends Omit<Route, 'query' | 'body' | 'handle'> {
  query?: QS;
  body?: BS;
  handle(
    input: RouteInput<InputOf<QS, Record<string, never>>, InputOf<BS, undefined>>,
    ctx: AppContext,
  ): Promise<RouteReply>;
}

/**
 * Declares a route. The types of the handler's query and body are inferred from the schema
 * objects given (`as const`), never written beside them, so a handler cannot be typed against
 * another schema than the one that checks its input. A route without a query gets an empty
 * one (an unknown parameter is a 400), without a body `undefined`.
 */
export function defineRoute<
  QS extends NamedSchema | undefined = undefined,
  BS extends NamedSchema | undefined = undefined,
>(route: RouteDefinition<QS, BS>): Route {
  // handle is a method, so its narrower input is accepted where Route's takes unknown:
  // mountRoutes only ever passes it values checked against these same schemas.
  return route;
}

/** The codes every route of its kind can answer with, whatever its handler does. */
function machineryCodes(route: Route): ErrorCode[] {
  const codes: ErrorCode[] = [
    'invalid_query',
    'timed_out',
    'unavailable',
    'internal',
    'duplicate_header',
    'forbidden',
    'api_key_expired',
    ...(route.scope ? (['insufficient_scope'] as const) : []),
    'rate_limited',
  ];
  const parameters = (route.query?.properties ?? {}) as Record<string, unknown>;
  if (Object.hasOwn(parameters, 'cursor')) codes.push('invalid_cursor');
  if (route.body) {
    codes.push(
      'invalid_body',
      'invalid_json',
      'invalid_utf8',
      'invalid_unicode',
      'aborted',
      'body_timeout',
      'payload_too_large',
      'unsupported_media_type',
      'unsupported_charset',
    );
  }
  if (route.method === 'POST') {
    codes.push(
      'invalid_idempotency_key',
      'idempotency_key_in_flight',
      'idempotency_key_reused',
      'outcome_unknown',
    );
  }
  return codes;
}

/**
 * Every response a route can give: its own answers, and one per error status, listing the
 * codes it can answer with there (those of the machinery in front of every route of its
 * kind, and the route's own refusals), each with its meaning.
 */
export function responsesOf(route: Route): Record<number, ResponseContract> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...machineryCodes(route), ...(route.refusals ?? [])])) {
    const { status } = ERRORS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const all: Record<number, ResponseContract> = { ...route.responses };
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    all[status] = {
      description: codes.map((code) => `${code}: ${ERRORS[code].meaning}`).join('; '),
      schema: ErrorSchema,
      codes,
      ...(status === 429 ? { headers: { 'Retry-After': 'seconds until the window resets' } } : {}),
    };
  }
  return all;
}

/**
 * Every named schema the routes use, once each, in the order they first appear: each route's
 * query, body and response bodies (the Error body among them, from responsesOf).
 */
export function namedSchemas(routes: readonly Route[]): NamedSchema[] {
  const found = new Set<NamedSchema>();
  for (const route of routes) {
    if (route.query) found.add(route.query);
    if (route.body) found.add(route.body);
    for (const response of Object.values(responsesOf(route))) {
      if (response.schema) found.add(namedIn(response.schema));
    }
  }
  return [...found];
}

/**
 * Query values arrive as strings: each is turned into the type its schema gives (an integer,
 * a boolean, an array of the repeated values) before validation, so the handler gets what the
 * schema says. Any other parameter given twice is refused rather than one of its values guessed at.
 */
function coerceQuery(schema: NamedSchema | undefined, raw: AppContext['query']): unknown {
  const properties = (schema?.properties ?? {}) as Record<string, { type?: string }>;
  // No prototype: a parameter named __proto__ is data, and is refused as unknown.
  const query: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of Object.entries(raw)) {
    const type = Object.hasOwn(properties, name) ? properties[name]?.type : undefined;
    // A parameter whose schema is an array is repeated (`label=a:1&label=b:2`), once or more.
    if (type === 'array') {
      query[name] = Array.isArray(value) ? value : [value];
      continue;
    }
    if (Array.isArray(value)) {
      throw new DomainError('invalid_query', `${name} may be given only once`, pointer(name));
    }
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

/** Registers the routes' schemas and mounts each route on the router. */
export function mountRoutes(
  router: Router<AppState>,
  routes: readonly Route[],
  middleware: RouteMiddleware,
): void {
  registerSchemas(namedSchemas(routes));
  for (const route of routes) {
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
      ...middleware.apiKey,
      ...(route.scope ? [requireScope(route.scope)] : []),
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
