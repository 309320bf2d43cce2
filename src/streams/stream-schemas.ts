// The live event stream's query, and its answer as the API document describes it.
import type { FromSchema } from 'json-schema-to-ts';
import { RUN_EVENT_TYPES } from '../runs/run-events.js';

const TYPE = `(${RUN_EVENT_TYPES.map((type) => type.replace('.', '\\.')).join('|')})`;

export const StreamRunEventsQuerySchema = {
  $id: 'StreamRunEventsQuery',
  type: 'object',
  additionalProperties: false,
  properties: {
    run_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: "only this run's events",
    },
    type: {
      type: 'string',
      pattern: `^${TYPE}(,${TYPE})*$`,
      description: `only events of these types: one or several of ${RUN_EVENT_TYPES.join(', ')}, comma-separated`,
    },
    last_event_id: {
      type: 'string',
      pattern: '^[0-9]{1,18}$',
      description:
        'resume after this event id, for clients that cannot send the Last-Event-ID header (the header wins)',
    },
  },
} as const;

export type StreamRunEventsQuery = FromSchema<typeof StreamRunEventsQuerySchema>;

/** The body of the answer: Server-Sent Events, each message's data a WebhookPayload. */
export const RunEventStreamSchema = {
  $id: 'RunEventStream',
  type: 'string',
  contentMediaType: 'text/event-stream',
  description:
    'Server-Sent Events. Each event is a message `id: <event id>`, `event: <type>`, `data: <WebhookPayload as JSON>`, in id order. The first message has no data: `retry` and, as `id`, the position the stream starts from. A comment line (`: heartbeat`) comes every STREAM_HEARTBEAT_MS.',
} as const;
