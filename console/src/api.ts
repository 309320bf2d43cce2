// The console's one way to the API: the typed client (workflow-run-client), with the signed-in
// key in the Authorization header and nowhere else. Every POST carries an Idempotency-Key the
// client makes per call (so per user action) and keeps across its retries. A refusal is a
// WorkflowRunError carrying the API's own {message, code, field}, so screens show the service's
// words next to the field it names; no answer at all is a WorkflowRunConnectionError.
import {
  WorkflowRunClient,
  WorkflowRunConnectionError,
  WorkflowRunError,
} from 'workflow-run-client';

/** Where the API lives: the page's <meta name="base-path"> (the service's BASE_PATH). */
export const BASE_PATH =
  document.querySelector<HTMLMetaElement>('meta[name="base-path"]')?.content ?? '';

/**
 * The client of a key. A person is waiting on every call, so it gives up sooner than the
 * client's defaults: one retry (of what may be retried: no answer, 429, 503, 500
 * outcome_unknown), after at most 2 s (a 429 asking for longer is shown at once, with its
 * message), each attempt within 15 s. Screens that poll (a bulk action's progress, the delivery
 * log) try again on their own; the live stream reconnects by itself.
 */
export function clientOf(key: string): WorkflowRunClient {
  return new WorkflowRunClient({
    baseUrl: new URL(`${BASE_PATH}/`, location.origin).href,
    apiKey: key,
    maxRetries: 1,
    maxRetryDelayMs: 2_000,
    timeoutMs: 15_000,
    // No cookie goes with a call: the key is the only credential.
    fetch: (input, init) => fetch(input, { ...init, credentials: 'omit' }),
  });
}

/**
 * A refusal the console makes itself before calling (a form left incomplete), shown as the
 * API's are: next to the field it names.
 */
export class FormError extends Error {
  constructor(
    message: string,
    /** A JSON Pointer into the request, as the API's `field`. */
    readonly field: string,
  ) {
    super(message);
  }
}

/** The request field an error names (a JSON Pointer: `/pages/0/name`, `/labels/env`), if any. */
export function fieldOf(error: unknown): string | undefined {
  if (error instanceof WorkflowRunError || error instanceof FormError) return error.field;
  return undefined;
}

/** Whether the service answered with a refusal (4xx): asking again gets the same answer. */
export function isRefusal(error: unknown): boolean {
  return error instanceof WorkflowRunError && error.status >= 400 && error.status < 500;
}

/** A message for anything thrown: the API's own words when it gave some. */
export function messageOf(error: unknown): string {
  if (error instanceof WorkflowRunConnectionError) {
    // A POST that got no answer may or may not have been applied.
    return error.idempotencyKey === undefined
      ? 'The service could not be reached. Check the connection and retry.'
      : 'The service could not be reached, so the change may or may not have been made. Check the connection, then look before you retry.';
  }
  if (error instanceof Error) return error.message;
  return String(error);
}
