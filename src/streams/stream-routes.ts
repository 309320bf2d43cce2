// GET /stream-run-events: the organization's run events as Server-Sent Events, as they commit
// (stream-hub.ts). The handler checks the request and answers with the stream; the request's
// clock (REQUEST_TIMEOUT_MS) ends with the handler, so a stream may stay open for hours.
import { defineRoute, type Route } from '../http/contract.js';
import { DomainError, pointer } from '../errors.js';
import type { RunEventType } from '../runs/run-events.js';
import type { StreamHub } from './stream-hub.js';
import { RunEventStreamSchema, StreamRunEventsQuerySchema } from './stream-schemas.js';
import type { StreamStore } from './stream-store.js';

/** A Last-Event-ID (header, or query for tools that cannot send one): an event id. */
function lastEventId(header: string, query: string | undefined): number | undefined {
  const raw = header !== '' ? header : query;
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,18}$/.test(raw.trim())) {
    throw new DomainError(
      'invalid_last_event_id',
      'Last-Event-ID must be the id of an event this stream sent (digits)',
      header !== '' ? undefined : pointer('last_event_id'),
    );
  }
  return Number(raw.trim());
}

export function streamRoutes(deps: { hub: StreamHub; store: StreamStore }): Route[] {
  const { hub, store } = deps;
  return [
    defineRoute({
      operationId: 'streamRunEvents',
      method: 'GET',
      path: '/stream-run-events',
      summary: "The organization's run events as they commit (Server-Sent Events)",
      description:
        "Each message is one event: its id, its type, and as data the webhook delivery's body. Send Last-Event-ID (or last_event_id) to resume: every later event comes, once, in id order.",
      scope: 'runs:read',
      query: StreamRunEventsQuerySchema,
      responses: {
        200: {
          description: 'the stream of events (text/event-stream), open until the client leaves',
          schema: RunEventStreamSchema,
          mediaType: 'text/event-stream',
          headers: {
            'Cache-Control': 'no-cache',
            'X-Accel-Buffering': 'no (proxies must not buffer the stream)',
          },
        },
      },
      refusals: ['invalid_last_event_id', 'run_not_found', 'too_many_streams'],
      async handle({ principal, query }, ctx) {
        const after = lastEventId(ctx.get('last-event-id'), query.last_event_id);
        if (
          query.run_id !== undefined &&
          !(await store.hasRun(principal.organizationId, query.run_id))
        ) {
          throw new DomainError('run_not_found', 'no such run', pointer('run_id'));
        }
        const types = query.type
          ? ([...new Set(query.type.split(','))] as RunEventType[])
          : undefined;
        const stream = await hub.open(
          principal,
          { runId: query.run_id, types },
          after,
          ctx.req.socket,
        );
        return {
          status: 200,
          body: stream.out,
          headers: {
            'Content-Type': 'text/event-stream; charset=utf-8',
            'Cache-Control': 'no-cache',
            'X-Accel-Buffering': 'no',
          },
        };
      },
    }),
  ];
}
