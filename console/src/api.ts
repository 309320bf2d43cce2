// The console's one way to the API: the documented endpoints, with the signed-in key in the
// Authorization header and nowhere else. Every failure becomes an ApiError carrying the API's
// own {message, code, field}, so screens show the service's words, next to the field it names.

/** Where the API lives: the page's <meta name="base-path"> (the service's BASE_PATH). */
export const BASE_PATH =
  document.querySelector<HTMLMetaElement>('meta[name="base-path"]')?.content ?? '';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    /** A JSON Pointer into the request (`/pages/0/name`, `/labels/env`), when the API named one. */
    readonly field?: string,
  ) {
    super(message);
  }
}

export type Query = Record<string, string | number | boolean | string[] | undefined | null>;

export function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const v of value) params.append(name, v);
    else params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** A page of a list, and the cursor of the next one (from the Link header), if there is one. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

export class Api {
  constructor(private readonly key: string) {}

  private async send(method: 'GET' | 'POST', path: string, init: RequestInit): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(BASE_PATH + path, {
        ...init,
        method,
        cache: 'no-store',
        credentials: 'omit',
        headers: { authorization: this.key, ...(init.headers as Record<string, string>) },
      });
    } catch {
      throw new ApiError(0, 'The service could not be reached. Check the connection and retry.');
    }
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  async get<T>(path: string, query?: Query): Promise<T> {
    const res = await this.send('GET', path + queryString(query), {});
    return (await res.json()) as T;
  }

  /** A page of a list: the body's items and the next page's cursor, read from its Link header. */
  async page<T>(path: string, query?: Query): Promise<Page<T>> {
    const res = await this.send('GET', path + queryString(query), {});
    return { items: (await res.json()) as T[], next: nextCursor(res.headers.get('link')) };
  }

  /**
   * A POST with a fresh Idempotency-Key: a click sent twice (a double click, a retry after a
   * dropped answer with the same key) changes nothing twice.
   */
  async post<T>(path: string, body: unknown, idempotencyKey = crypto.randomUUID()): Promise<T> {
    const res = await this.send('POST', path, {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    });
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** An open response for the event stream (read by stream.ts). */
  stream(path: string, query: Query, lastEventId: string | null, signal: AbortSignal) {
    return this.send('GET', path + queryString(query), {
      signal,
      headers: {
        accept: 'text/event-stream',
        ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      },
    });
  }
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { message?: unknown; code?: unknown; field?: unknown };
    if (typeof body.message === 'string') {
      return new ApiError(
        res.status,
        body.message,
        typeof body.code === 'string' ? body.code : undefined,
        typeof body.field === 'string' ? body.field : undefined,
      );
    }
  } catch {
    // not JSON: described below by its status
  }
  return new ApiError(res.status, `The service answered ${res.status} ${res.statusText}.`);
}

/** The `cursor` of a Link header's rel="next" URL. */
export function nextCursor(link: string | null): string | null {
  const match = link?.match(/<([^>]*)>\s*;\s*rel="next"/);
  if (!match) return null;
  return new URL(match[1]!, location.origin).searchParams.get('cursor');
}

/** A message for anything thrown: the API's own words when it gave some. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
