// A small HTTP client for tests: every answer is read whole and its JSON parsed.
import { WorkflowRunDetailSchema } from '../../src/runs/run-schemas.js';
import { assertDescribed } from './api-document.js';
import { assertServiceSchema, assertSpec, type SpecSchema } from './spec-schemas.js';
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

/**
 * Checks a reply as a strict client generated from the spec would parse it: a success body
 * against the spec's schema for it, any error body against the spec's Error.
 */
export function checkReply<T>(reply: Reply<T>, success: SpecSchema, what: string): Reply<T> {
  if (reply.status >= 200 && reply.status < 300) assertSpec(success, reply.body, what);
  else assertSpec('Error', reply.body, `${what} (${reply.status})`);
  return reply;
}

/**
 * The service's client, bound to one API and one key. Every answer it receives is checked
 * against the spec's schemas and against the API's own OpenAPI document, so every test that
 * uses it is also a contract test.
 */
export class Client {
  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}

  /** A POST that answers a WorkflowRun, checked as such (or as an Error). */
  private async postRun(path: string, body: unknown, headers: Record<string, string> = {}) {
    const reply = await request<Record<string, unknown>>(`${this.baseUrl}/${path}`, {
      key: this.key,
      body,
      headers,
    });
    await assertDescribed(this.baseUrl, 'POST', `/${path}`, reply.status, reply.body);
    return checkReply(reply, 'WorkflowRun', path);
  }

  createRun(body: unknown) {
    return this.postRun('create-workflow-run', body);
  }

  completeStep(body: unknown) {
    return this.postRun('complete-workflow-step', body);
  }

  cancelRun(body: unknown, headers: Record<string, string> = {}) {
    return this.postRun('cancel-workflow-run', body, headers);
  }

  retryRun(body: unknown, headers: Record<string, string> = {}) {
    return this.postRun('retry-workflow-run', body, headers);
  }

  async listRuns(query = '') {
    const reply = await request<Array<Record<string, unknown>>>(
      `${this.baseUrl}/get-workflow-runs${query}`,
      { key: this.key },
    );
    await assertDescribed(this.baseUrl, 'GET', '/get-workflow-runs', reply.status, reply.body);
    return checkReply(reply, 'WorkflowRunSummaryList', 'get-workflow-runs');
  }

  async getRun(id: string) {
    const reply = await request<Record<string, unknown>>(
      `${this.baseUrl}/get-workflow-run?id=${encodeURIComponent(id)}`,
      { key: this.key },
    );
    await assertDescribed(this.baseUrl, 'GET', '/get-workflow-run', reply.status, reply.body);
    if (reply.status === 200) assertServiceSchema(WorkflowRunDetailSchema, reply.body);
    else assertSpec('Error', reply.body, `get-workflow-run (${reply.status})`);
    return reply;
  }

  /** Any other endpoint: the answer is checked against the served API document. */
  async call<T = unknown>(path: string, body?: unknown, headers: Record<string, string> = {}) {
    const reply = await request<T>(`${this.baseUrl}${path}`, { key: this.key, body, headers });
    const method = body === undefined ? 'GET' : 'POST';
    await assertDescribed(this.baseUrl, method, path.split('?')[0]!, reply.status, reply.body);
    return reply;
  }

  async listTemplates(query = '') {
    const reply = await request<Array<Record<string, unknown>>>(
      `${this.baseUrl}/get-workflow-templates${query}`,
      { key: this.key },
    );
    await assertDescribed(this.baseUrl, 'GET', '/get-workflow-templates', reply.status, reply.body);
    return checkReply(reply, 'WorkflowTemplateList', 'get-workflow-templates');
  }
}

/** The path and query of the Link rel="next" header, if any. */
export function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link');
  const match = link ? /<([^>]+)>;\s*rel="next"/.exec(link) : null;
  return match ? match[1] : undefined;
}
