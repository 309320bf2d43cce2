// A small HTTP client for tests: every answer is read whole and its JSON parsed.
export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function request<T = unknown>(
  url: string,
  options: {
    method?: string;
    key?: string;
    body?: unknown;
    raw?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = options.key;
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** The Service's client, bound to one API and one key. */
export class Client {
  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}

  createRun(body: unknown) {
    return request<Record<string, unknown>>(`${this.baseUrl}/create-workflow-run`, {
      key: this.key,
      body,
    });
  }

  completeStep(body: unknown) {
    return request<Record<string, unknown>>(`${this.baseUrl}/complete-workflow-step`, {
      key: this.key,
      body,
    });
  }

  listRuns(query = '') {
    return request<Array<Record<string, unknown>>>(`${this.baseUrl}/get-workflow-runs${query}`, {
      key: this.key,
    });
  }

  listTemplates(query = '') {
    return request<Array<Record<string, unknown>>>(
      `${this.baseUrl}/get-workflow-templates${query}`,
      { key: this.key },
    );
  }
}

/** The path and query of the Link rel="next" header, if any. */
export function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link');
  const match = link ? /<([^>]+)>;\s*rel="next"/.exec(link) : null;
  return match ? match[1] : undefined;
}
