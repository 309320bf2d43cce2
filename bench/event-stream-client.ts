// A client of the service's event stream (GET /stream-run-events, Server-Sent Events) for the
// bench's stream phases: each event's payload is handed over with the moment its chunk arrived
// (performance.now()), parsed as little as the phases need.
import { request, type ClientRequest } from 'node:http';

/** The part of an event's payload (a WebhookPayload) the bench reads. */
export interface StreamedEvent {
  timestamp: string;
  data: { runId: string };
}

/**
 * Opens a stream of one event type and resolves once the service has answered its first
 * message (the one without data: the stream is live from there). Destroy the request to close.
 */
export async function openEventStream(
  url: string,
  key: string,
  type: string,
  onEvent: (event: StreamedEvent, arrivedAt: number) => void,
): Promise<ClientRequest> {
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const stream = request(
    `${url}/stream-run-events?type=${encodeURIComponent(type)}`,
    { headers: { authorization: key }, agent: false },
    (res) => {
      if (res.statusCode !== 200) throw new Error(`stream answered ${res.statusCode}`);
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        const arrivedAt = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(message)?.[1];
          if (data) onEvent(JSON.parse(data) as StreamedEvent, arrivedAt);
          else opened();
        }
      });
    },
  );
  stream.on('error', () => undefined);
  stream.end();
  await open;
  return stream;
}
