// The live event stream (GET /stream-run-events) as an async iterator. Read with fetch, as an
// EventSource cannot send the Authorization header. After a drop it reconnects with backoff and
// resumes after the last event id it saw (Last-Event-ID), so nothing is missed or seen twice.
//
// The Server-Sent Events reader is written here rather than taken from eventsource-parser: that
// library passes on only messages with data, and drops the id of a message without any, while
// the service's opening message is exactly that (`retry: 1000` and `id: <position>`): the place
// to resume from if the connection drops before the first event.
import { errorOf, WorkflowRunConnectionError, WorkflowRunError } from './errors.js';
import type { WebhookPayload } from './generated/types.gen.js';
import type { StreamOptions } from './options.js';
import { isRetryable } from './retries.js';

type Connect = (lastEventId: string | undefined, signal: AbortSignal) => Promise<Response>;

/** One message of the format: its fields as sent. */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string | undefined;
  retry: number | undefined;
}

const MAX_BACKOFF_MS = 30_000;

export async function* followEvents(
  connect: Connect,
  options: StreamOptions,
): AsyncGenerator<WebhookPayload & { id: string }, void, undefined> {
  const controller = new AbortController();
  const stop = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) return;
  options.signal?.addEventListener('abort', stop, { once: true });
  let lastId = options.lastEventId;
  let retryMs = 1000;
  let failures = 0;
  let connected = false;
  try {
    while (!controller.signal.aborted) {
      let error: unknown;
      try {
        const res = await connect(lastId, controller.signal);
        if (!res.ok) {
          const answered = await errorOf(res, undefined);
          const failure = { kind: 'status' as const, status: res.status, code: answered.code };
          if (!isRetryable(failure, false) && res.status < 500) throw answered;
          error = answered;
        } else {
          for await (const message of readMessages(res, controller.signal)) {
            if (message.retry !== undefined) retryMs = message.retry;
            if (message.id !== undefined) {
              lastId = message.id;
              if (!connected) options.onConnectionChange?.((connected = true));
              failures = 0; // the service answered and placed us: a working connection
            }
            if (message.data === undefined) continue;
            const payload = JSON.parse(message.data) as WebhookPayload;
            yield { ...payload, id: message.id ?? '' };
          }
          error = new Error('the stream ended');
        }
      } catch (caught) {
        if (controller.signal.aborted) return;
        if (caught instanceof WorkflowRunError) throw caught;
        error = caught;
      }
      if (controller.signal.aborted) return; // the caller ended it: not a drop
      connected = false;
      options.onConnectionChange?.(false, error);
      failures++;
      if (options.maxReconnects !== undefined && failures > options.maxReconnects) {
        throw error instanceof WorkflowRunError
          ? error
          : new WorkflowRunConnectionError(
              `the stream could not reconnect: ${error instanceof Error ? error.message : String(error)}`,
              undefined,
              false,
              { cause: error },
            );
      }
      // The server's retry, doubled for each failure in a row, with jitter; at most 30 s.
      const ceiling = Math.min(MAX_BACKOFF_MS, retryMs * 2 ** (failures - 1));
      const wait = ceiling / 2 + (ceiling / 2) * Math.random();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        controller.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  } finally {
    options.signal?.removeEventListener('abort', stop);
    controller.abort(); // a consumer that stopped iterating closes the connection
  }
}

/** The messages of a text/event-stream body, until it ends (the format's rules, in brief). */
export async function* readMessages(
  res: Response,
  signal: AbortSignal,
): AsyncGenerator<SseMessage, void, undefined> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  let buffer = '';
  let message: SseMessage = { id: undefined, event: 'message', data: undefined, retry: undefined };
  let touched = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A lone CR at the end may be the first half of CRLF: wait for the next chunk.
        if (end < 0 || (end === buffer.length - 1 && buffer.endsWith('\r'))) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (touched) yield message;
          message = { id: undefined, event: 'message', data: undefined, retry: undefined };
          touched = false;
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: the heartbeat
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? '' : line.slice(colon + 1);
        const text = raw.startsWith(' ') ? raw.slice(1) : raw;
        if (field === 'id' && !text.includes('\0')) message.id = text;
        else if (field === 'event') message.event = text;
        else if (field === 'data')
          message.data = message.data === undefined ? text : `${message.data}\n${text}`;
        else if (field === 'retry' && /^\d+$/.test(text)) message.retry = Number(text);
        else continue;
        touched = true;
      }
    }
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}
