// The client: each operation of the API (generated/operations.gen.ts) sent over fetch, with
// the Authorization header, an Idempotency-Key on every POST kept across retries, bounded retries
// with jitter, typed errors, pages that follow Link rel="next", and live streams that resume.
import { errorOf, WorkflowRunConnectionError, WorkflowRunError } from './errors.js';
import {
  OPERATIONS,
  Operations,
  type ListItem,
  type ListOperationId,
  type OperationId,
  type OperationParams,
  type OperationResults,
} from './generated/operations.gen.js';
import type { WebhookPayload } from './generated/types.gen.js';
import type { CallOptions, ClientOptions, StreamOptions } from './options.js';
import { isRetryable, retryDelayMs, type Failure } from './retries.js';
import { followEvents } from './streams.js';

type QueryValue = string | number | boolean | readonly string[] | null | undefined;

/** One page of a list, and the URL of the next (from its Link header), if there is one. */
export interface Page<T> {
  items: T[];
  /** The next page's cursor: pass it as `cursor` to get that page. */
  nextCursor: string | null;
  /** The next page's path and query, as the service wrote it in the Link header. */
  nextUrl: string | null;
}

/** An event of the live stream: the webhook payload, with the stream's event id. */
export type RunEvent = WebhookPayload & { id: string };

export class WorkflowRunClient extends Operations {
  private readonly base: URL;
  private readonly options: Required<Omit<ClientOptions, 'baseUrl' | 'fetch' | 'headers'>> &
    Pick<ClientOptions, 'headers'>;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions) {
    super();
    if (!options.apiKey) throw new TypeError('apiKey is required');
    // A trailing slash, so the operations' paths resolve under the base path.
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.options = {
      apiKey: options.apiKey,
      maxRetries: options.maxRetries ?? 3,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 8_000,
      headers: options.headers,
    };
    // Bound so that a global fetch is not called with this client as `this`.
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  protected async call<K extends OperationId>(
    id: K,
    params: OperationParams[K] | undefined,
    options: CallOptions | undefined,
  ): Promise<OperationResults[K]> {
    const { method, path } = OPERATIONS[id];
    const url =
      method === 'GET' ? this.url(path, params as Record<string, QueryValue>) : this.url(path);
    const res = await this.send(
      method,
      url,
      method === 'POST' ? (params ?? {}) : undefined,
      options,
    );
    return (await body(res)) as OperationResults[K];
  }

  /**
   * Every item of a list, page after page, following each page's Link rel="next" until the last.
   * The list's filters stay as given; a page is fetched when the previous one is used up.
   */
  async *list<K extends ListOperationId>(
    id: K,
    query?: OperationParams[K],
    options?: CallOptions,
  ): AsyncGenerator<ListItem<K>, void, undefined> {
    let page = await this.page(id, query, options);
    for (;;) {
      for (const item of page.items) yield item;
      if (page.nextUrl === null) return;
      page = await this.pageAt<K>(new URL(page.nextUrl, this.base), options);
    }
  }

  /** One page of a list, with the cursor of the next. */
  async page<K extends ListOperationId>(
    id: K,
    query?: OperationParams[K],
    options?: CallOptions,
  ): Promise<Page<ListItem<K>>> {
    return this.pageAt<K>(
      this.url(OPERATIONS[id].path, query as Record<string, QueryValue>),
      options,
    );
  }

  private async pageAt<K extends ListOperationId>(
    url: URL,
    options: CallOptions | undefined,
  ): Promise<Page<ListItem<K>>> {
    const res = await this.send('GET', url, undefined, options);
    const items = (await res.json()) as ListItem<K>[];
    const next = nextLink(res.headers.get('link'));
    if (next === null) return { items, nextCursor: null, nextUrl: null };
    const nextUrl = new URL(next, url);
    return {
      items,
      nextCursor: nextUrl.searchParams.get('cursor'),
      nextUrl: nextUrl.pathname + nextUrl.search,
    };
  }

  protected events(
    params: OperationParams['streamRunEvents'] | undefined,
    options: StreamOptions | undefined,
  ): AsyncIterable<RunEvent> {
    const url = this.url(OPERATIONS.streamRunEvents.path, params as Record<string, QueryValue>);
    return followEvents(
      (lastEventId, signal) =>
        this.fetch(url, {
          method: 'GET',
          headers: {
            ...this.headers(),
            accept: 'text/event-stream',
            ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
          },
          signal,
          cache: 'no-store',
        }),
      options ?? {},
    );
  }

  private url(path: string, query?: Record<string, QueryValue>): URL {
    const url = new URL(path.replace(/^\//, ''), this.base);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(name, String(v));
      else url.searchParams.append(name, String(value));
    }
    return url;
  }

  private headers(): Record<string, string> {
    return { ...this.options.headers, authorization: this.options.apiKey };
  }

  /**
   * Sends one call, retrying what may be retried (retries.ts). A POST's Idempotency-Key is made
   * once, here, and every attempt carries it: the service applies the call at most once.
   */
  private async send(
    method: 'GET' | 'POST',
    url: URL,
    json: unknown,
    options: CallOptions | undefined,
  ): Promise<Response> {
    const key = method === 'POST' ? (options?.idempotencyKey ?? newKey()) : undefined;
    const headers: Record<string, string> = {
      ...this.headers(),
      accept: 'application/json',
      ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(key !== undefined ? { 'idempotency-key': key } : {}),
    };
    const payload = json === undefined ? undefined : JSON.stringify(json);
    const maxRetries = options?.maxRetries ?? this.options.maxRetries;
    const timeoutMs = options?.timeoutMs ?? this.options.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      options?.signal?.throwIfAborted();
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options?.signal ? eitherSignal(options.signal, timeout) : timeout;
      let failure: Failure;
      let error: WorkflowRunError | WorkflowRunConnectionError;
      try {
        const res = await this.fetch(url, {
          method,
          headers,
          body: payload,
          signal,
          cache: 'no-store',
        });
        if (res.ok) return res;
        error = await errorOf(res, key);
        failure = {
          kind: 'status',
          status: res.status,
          code: error.code,
          retryAfterSeconds: error.retryAfterSeconds,
        };
      } catch (cause) {
        if (options?.signal?.aborted) throw options.signal.reason;
        failure = timeout.aborted ? { kind: 'timeout' } : { kind: 'connection' };
        error = new WorkflowRunConnectionError(
          timeout.aborted
            ? `no answer from the service within ${timeoutMs} ms`
            : `could not reach the service: ${cause instanceof Error ? cause.message : String(cause)}`,
          key,
          timeout.aborted,
          { cause },
        );
      }
      if (attempt >= maxRetries || !isRetryable(failure, attempt > 0)) throw error;
      const wait = retryDelayMs(attempt + 1, failure, this.options.maxRetryDelayMs, Math.random());
      // Only a Retry-After asks for more than the cap: the caller chose not to wait that long.
      if (wait > this.options.maxRetryDelayMs) throw error;
      await sleep(wait, options?.signal);
    }
  }
}

/** A body, parsed: JSON, or nothing for an empty answer. */
async function body(res: Response): Promise<unknown> {
  const text = await res.text();
  return text ? (JSON.parse(text) as unknown) : undefined;
}

/** The URL of a Link header's rel="next", as written. */
export function nextLink(link: string | null): string | null {
  if (link === null) return null;
  for (const part of link.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(^|;)\s*rel="?next"?\s*(;|$)/.test(match[2]!)) return match[1]!;
  }
  return null;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A new Idempotency-Key: a random UUID. crypto.randomUUID exists only in secure contexts (https,
 * localhost) in a browser; getRandomValues exists everywhere.
 */
export function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A signal that aborts when either does: AbortSignal.any where it exists (Node 20.3, Chrome 116,
 * Safari 17.4), else the same by hand for older browsers.
 */
function eitherSignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const controller = new AbortController();
  for (const signal of [a, b]) {
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}
