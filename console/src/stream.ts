// The live event stream (GET /stream-run-events), read with fetch: an EventSource cannot send
// the Authorization header, and the key goes into no URL or cookie. This is a small reader of
// the Server-Sent Events format, with EventSource's own reconnect rule: after a drop it waits
// the server's `retry` and resumes from the last id it saw (Last-Event-ID), so nothing is
// missed or seen twice.
import type { Api, Query } from './api.js';

export interface StreamEvent {
  id: string;
  type: string;
  /** The event's body: the webhook payload of the API document. */
  data: { type: string; timestamp: string; data: Record<string, unknown> & { runId?: string } };
}

export interface StreamHandle {
  close(): void;
}

export interface StreamCallbacks {
  onEvent(event: StreamEvent): void;
  /** Connected (true) or waiting to reconnect (false). */
  onState?(connected: boolean, error?: string): void;
}

export function openStream(api: Api, query: Query, callbacks: StreamCallbacks): StreamHandle {
  const controller = new AbortController();
  let lastId: string | null = null;
  let retryMs = 1000;

  const run = async () => {
    while (!controller.signal.aborted) {
      try {
        const res = await api.stream('/stream-run-events', query, lastId, controller.signal);
        callbacks.onState?.(true);
        await readEvents(
          res,
          controller.signal,
          (field, value) => {
            if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
          },
          (id, type, data) => {
            if (id) lastId = id;
            if (!data) return; // the opening message: only a position
            callbacks.onEvent({
              id: id ?? '',
              type,
              data: JSON.parse(data) as StreamEvent['data'],
            });
          },
        );
        if (!controller.signal.aborted)
          callbacks.onState?.(false, 'The stream ended; reconnecting…');
      } catch (error) {
        if (controller.signal.aborted) return;
        callbacks.onState?.(false, error instanceof Error ? error.message : String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  };
  void run();
  return { close: () => controller.abort() };
}

/** Reads SSE messages from the response until it ends (the format's rules, in brief). */
async function readEvents(
  res: Response,
  signal: AbortSignal,
  onField: (field: string, value: string) => void,
  onMessage: (id: string | null, type: string, data: string | null) => void,
): Promise<void> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined));
  let buffer = '';
  let id: string | null = null;
  let type = 'message';
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
      if (line === '') {
        if (id !== null || data.length > 0)
          onMessage(id, type, data.length ? data.join('\n') : null);
        id = null;
        type = 'message';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const raw = colon < 0 ? '' : line.slice(colon + 1);
      const text = raw.startsWith(' ') ? raw.slice(1) : raw;
      if (field === 'id') id = text;
      else if (field === 'event') type = text;
      else if (field === 'data') data.push(text);
      else onField(field, text);
    }
  }
}
