// After a commit that wrote run events, a small Redis pub/sub message names the organizations
// whose events they were. Every API process subscribes once (StreamHub) and wakes those
// organizations' streams, which then read MySQL; every worker subscribes once and wakes its
// webhook dispatcher, so an event the API committed (a cancel) goes out as soon as one a
// worker committed. The message carries no event: MySQL is what is read, Redis only says when
// to look. A message lost (Redis away, a process subscribing late) delays a stream by at most
// its fallback poll and a dispatch by at most its interval, never loses an event.
import type { Logger } from '../logger.js';
import { throttledWarn } from '../lib/process.js';
import type { RedisClient } from '../queue.js';

/** The pub/sub channel of one deployment (its queue prefix). */
export function eventsChannel(queuePrefix: string): string {
  return `${queuePrefix}:run-events`;
}

/** What RunStore calls after each commit that wrote events. */
export type EventsCommitted = (organizationIds: readonly string[]) => void;

/**
 * Publishes the organizations whose events were committed, at most one message per turn of
 * the event loop (a worker's batch and the API's group commits name many at once).
 */
export class EventSignal {
  private readonly pending = new Set<string>();
  private scheduled = false;
  private readonly warn: (err: unknown) => void;

  constructor(
    private readonly redis: RedisClient,
    private readonly channel: string,
    log: Logger,
    /** Also told at once, in this process (the API's own streams need no round trip). */
    private readonly local?: EventsCommitted,
  ) {
    this.warn = throttledWarn(log, 'run event signal not published');
  }

  readonly committed: EventsCommitted = (organizationIds) => {
    for (const id of organizationIds) this.pending.add(id);
    if (this.scheduled || this.pending.size === 0) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  };

  private flush(): void {
    this.scheduled = false;
    const organizationIds = [...this.pending];
    this.pending.clear();
    this.local?.(organizationIds);
    // Fail-fast connection: while Redis is away the streams' fallback poll takes over.
    this.redis.publish(this.channel, JSON.stringify(organizationIds)).catch(this.warn);
  }
}

/**
 * Subscribes `subscriber` (a connection of its own: it can do nothing else once subscribed) to
 * the channel, and calls `signalled` with the organizations of each message on it.
 */
export function listenForSignals(
  subscriber: RedisClient,
  channel: string,
  log: Logger,
  signalled: EventsCommitted,
): void {
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) signalled(parseSignal(message));
  });
  subscriber.on('error', throttledWarn(log, 'run event signal subscriber error'));
  subscriber.subscribe(channel).catch(throttledWarn(log, 'run event signal subscribe failed'));
}

/** The organization ids of a message, or none for a message this service did not send. */
export function parseSignal(message: string): string[] {
  try {
    const value: unknown = JSON.parse(message);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}
