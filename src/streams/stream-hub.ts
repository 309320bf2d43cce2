// The live event streams of one API process. Each stream sends its organization's events, in
// id order, each once, from its cursor up to the process's safe watermark (event-watermark.ts),
// read from MySQL. What makes a stream read:
//   - a Redis message naming its organization, sent after each commit that wrote events, by
//     whichever process made it (event-signal.ts): the usual way, within milliseconds;
//   - the fallback poll, every STREAM_POLL_INTERVAL_MS: Redis only wakes, and a message lost
//     (Redis away, a flush, a process subscribing late) delays a stream, never loses an event.
// Bounds: at most STREAM_MAX_PER_KEY streams per key (429 too_many_streams beyond); a stream
// whose client does not read what it is sent is cut off once STREAM_BUFFER_BYTES wait unsent
// (nothing more is read for it meanwhile, so memory does not grow with the events); on
// shutdown every stream is ended, and a client resumes elsewhere with Last-Event-ID.
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Principal } from '../auth/principal.js';
import type { StreamConfig } from '../config.js';
import { DomainError } from '../errors.js';
import { throttledWarn } from '../lib/process.js';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../queue.js';
import { fromEventRow } from '../runs/run-events.js';
import type { RunSummary } from '../runs/run-schemas.js';
import { deliveryBody, summaryAfter } from '../webhooks/payload.js';
import { listenForSignals } from './event-signal.js';
import { EventWatermark } from './event-watermark.js';
import type { StreamFilter, StreamStore } from './stream-store.js';

/** Events read per query for one stream. */
const READ_BATCH = 500;
/**
 * How long a stream holding more than STREAM_BUFFER_BYTES unsent waits for its client to take
 * it before it is cut off (nothing more is read for it meanwhile).
 */
const DRAIN_WAIT_MS = 5000;
/** How long a client waits before reconnecting after the stream ends (the SSE retry field). */
const RETRY_MS = 1000;

export class EventStream {
  /** The response body: what is written here goes to the client. */
  readonly out = new PassThrough();
  /** Every event of the organization up to here was sent (or filtered out). */
  cursor: number;
  reading = false;
  again = false;
  closed = false;
  sent = 0;

  constructor(
    readonly organizationId: string,
    readonly keyId: string,
    readonly filter: StreamFilter,
    cursor: number,
    private readonly socket: Socket,
  ) {
    this.cursor = cursor;
  }

  /** Bytes written and not yet taken by the socket. */
  get buffered(): number {
    return this.out.writableLength + this.out.readableLength;
  }

  /** Resolves when the client has taken what was written, or after ms. */
  drained(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.out.off('drain', done);
        this.out.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.out.once('drain', done);
      this.out.once('close', done);
    });
  }

  write(text: string): void {
    if (!this.closed) this.out.write(text);
  }

  /** Ends the stream cleanly: what was written is sent, then the response ends. */
  end(comment: string): void {
    if (this.closed) return;
    this.write(`: ${comment}\n\n`);
    this.closed = true;
    this.out.end();
  }

  /** Cuts the connection: what waits unsent is dropped. */
  cut(): void {
    this.closed = true;
    this.out.destroy();
    this.socket.destroy();
  }
}

export interface StreamHubDeps {
  store: StreamStore;
  config: StreamConfig;
  log: Logger;
  /** A connection of its own for SUBSCRIBE (none: the fallback poll only). */
  subscriber?: RedisClient;
  channel: string;
}

export class StreamHub {
  private readonly streams = new Set<EventStream>();
  private readonly perKey = new Map<string, number>();
  /**
   * Organizations woken since the watermark last caught up, each with the number of its latest
   * wake: a pass forgets only the wakes it saw, so one that comes while it reads is kept for
   * the next pass (else that pass moved the watermark past the new events and no stream read
   * them until the fallback poll).
   */
  private readonly woken = new Map<string, number>();
  private wakes = 0;
  private readonly watermark: EventWatermark;
  private current: Promise<void> | undefined;
  private again = false;
  private pollAll = false;
  private lastError: unknown;
  /** Whether the last advance left no gap pending. */
  private caughtUp = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly warn: (err: unknown) => void;

  constructor(private readonly deps: StreamHubDeps) {
    this.watermark = new EventWatermark(deps.store, deps.config.gapGraceMs);
    this.warn = throttledWarn(deps.log, 'event stream read failed; retrying at the next poll');
  }

  start(): void {
    const { subscriber, channel, config, log } = this.deps;
    if (subscriber) listenForSignals(subscriber, channel, log, (orgs) => this.wake(orgs));
    this.timers.push(
      setInterval(() => {
        this.pollAll = true;
        void this.tick();
      }, config.pollIntervalMs),
      setInterval(() => {
        for (const stream of this.streams) this.send(stream, ': heartbeat\n\n');
      }, config.heartbeatMs),
    );
  }

  /** Streams open in this process (for tests and the log). */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Opens a stream of the key's organization from `lastEventId` (every later event), or from
   * now. Refused with too_many_streams when the key holds STREAM_MAX_PER_KEY already.
   */
  async open(
    principal: Principal,
    filter: StreamFilter,
    lastEventId: number | undefined,
    socket: Socket,
  ): Promise<EventStream> {
    const { maxPerKey } = this.deps.config;
    const held = this.perKey.get(principal.keyId) ?? 0;
    if (held >= maxPerKey) {
      throw new DomainError(
        'too_many_streams',
        `this API key holds ${held} open event streams, the most it may (STREAM_MAX_PER_KEY); close one first`,
      );
    }
    if (this.closed) throw new DomainError('too_many_streams', 'the service is shutting down');
    this.perKey.set(principal.keyId, held + 1);
    try {
      // A fresh watermark: a stream from now starts at what is committed now (once the gaps
      // below it are decided, which takes a grace and a probe).
      await this.tick();
      const until = Date.now() + this.deps.config.gapGraceMs * 4 + 1000;
      while (lastEventId === undefined && !this.caughtUp && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, this.deps.config.gapGraceMs / 2));
        await this.tick();
      }
      const mark = this.watermark.value;
      if (mark === undefined) throw this.lastError ?? new Error('event watermark unknown');
      const stream = new EventStream(
        principal.organizationId,
        principal.keyId,
        filter,
        lastEventId ?? mark,
        socket,
      );
      this.streams.add(stream);
      stream.out.on('close', () => this.remove(stream));
      // The first message: how long to wait before reconnecting, and the starting position as
      // the last event id, so a client that reconnects before any event still misses nothing.
      stream.write(`retry: ${RETRY_MS}\nid: ${stream.cursor}\n\n`);
      // As if woken: what was committed before it opened, above a gap still pending, is read
      // once the gap is decided (a woken organization stays so until the watermark caught up).
      this.woken.set(stream.organizationId, ++this.wakes);
      void this.pump(stream);
      if (!this.caughtUp) void this.tick();
      return stream;
    } catch (err) {
      this.release(principal.keyId);
      throw err;
    }
  }

  /** Organizations whose events were committed: their streams read. */
  wake(organizationIds: readonly string[]): void {
    let any = false;
    for (const id of organizationIds) {
      if (this.hasStreams(id)) {
        this.woken.set(id, ++this.wakes);
        any = true;
      }
    }
    if (any) void this.tick();
  }

  /** Ends every stream and stops reading: for shutdown. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    clearTimeout(this.retry);
    for (const stream of this.streams) stream.end('the service is shutting down; reconnect');
    const subscriber = this.deps.subscriber;
    if (subscriber) subscriber.disconnect();
    await this.current?.catch(() => undefined);
  }

  private hasStreams(organizationId: string): boolean {
    for (const stream of this.streams) if (stream.organizationId === organizationId) return true;
    return false;
  }

  private remove(stream: EventStream): void {
    stream.closed = true;
    if (this.streams.delete(stream)) this.release(stream.keyId);
  }

  private release(keyId: string): void {
    const held = (this.perKey.get(keyId) ?? 1) - 1;
    if (held > 0) this.perKey.set(keyId, held);
    else this.perKey.delete(keyId);
  }

  /** Moves the watermark and makes the streams that may have new events read: one at a time. */
  private tick(): Promise<void> {
    if (this.current) {
      this.again = true;
      return this.current;
    }
    this.current = this.run().finally(() => (this.current = undefined));
    return this.current;
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      if (this.closed || this.perKey.size === 0) {
        this.woken.clear();
        return;
      }
      const woken = [...this.woken];
      const all = this.pollAll;
      this.pollAll = false;
      try {
        const result = await this.watermark.advance();
        this.lastError = undefined;
        this.caughtUp = result.caughtUp;
        if (result.retryInMs !== undefined) {
          clearTimeout(this.retry);
          this.retry = setTimeout(() => void this.tick(), result.retryInMs);
        }
        // Caught up: every event committed before the wake is at most the watermark now.
        if (result.caughtUp) {
          for (const [id, wake] of woken) if (this.woken.get(id) === wake) this.woken.delete(id);
        }
      } catch (err) {
        this.lastError = err;
        this.warn(err);
        return;
      }
      const organizations = new Set(woken.map(([id]) => id));
      for (const stream of this.streams) {
        if (all || organizations.has(stream.organizationId)) void this.pump(stream);
      }
    } while (this.again);
  }

  /** Sends the stream its events up to the watermark; one read at a time per stream. */
  private async pump(stream: EventStream): Promise<void> {
    if (stream.reading) {
      stream.again = true;
      return;
    }
    stream.reading = true;
    try {
      do {
        stream.again = false;
        const mark = this.watermark.value;
        while (mark !== undefined && !stream.closed && stream.cursor < mark) {
          if (stream.buffered > this.deps.config.bufferBytes) await stream.drained(DRAIN_WAIT_MS);
          if (this.tooSlow(stream)) return;
          const rows = await this.deps.store.events(
            stream.organizationId,
            stream.cursor,
            mark,
            stream.filter,
            READ_BATCH,
          );
          if (stream.closed) return;
          if (rows.length > 0) stream.write(await this.messages(stream.organizationId, rows));
          stream.sent += rows.length;
          stream.cursor = rows.length < READ_BATCH ? mark : rows[rows.length - 1]!.id;
        }
      } while (stream.again && !stream.closed);
    } catch (err) {
      this.warn(err);
    } finally {
      stream.reading = false;
    }
  }

  /** A heartbeat: needless while events wait unsent (the pump decides about those). */
  private send(stream: EventStream, text: string): void {
    if (stream.buffered === 0) stream.write(text);
  }

  /** Cuts a stream whose client leaves more than STREAM_BUFFER_BYTES unread. */
  private tooSlow(stream: EventStream): boolean {
    if (stream.closed) return true;
    if (stream.buffered <= this.deps.config.bufferBytes) return false;
    this.deps.log.warn('event stream cut off: the client reads too slowly', {
      org: stream.organizationId,
      buffered: stream.buffered,
      cursor: stream.cursor,
    });
    stream.cut();
    this.remove(stream);
    return true;
  }

  /** The SSE messages of the rows: id, event type, and the webhook payload as data. */
  private async messages(
    organizationId: string,
    rows: Awaited<ReturnType<StreamStore['events']>>,
  ): Promise<string> {
    const upToSeq = new Map<string, number>();
    for (const row of rows) {
      upToSeq.set(row.run_id, Math.max(upToSeq.get(row.run_id) ?? 0, Number(row.seq)));
    }
    const histories = await this.deps.store.histories(upToSeq);
    const summaries = new Map<number, RunSummary>();
    const older: string[] = [];
    for (const row of rows) {
      const history = histories.get(row.run_id) ?? [];
      const end = history.findIndex((event) => event.seq === Number(row.seq));
      const summary = end < 0 ? undefined : summaryAfter(row.run_id, history.slice(0, end + 1));
      if (summary) summaries.set(row.id, summary);
      else older.push(row.run_id);
    }
    // A run older than its history: its summary as it is now, as the webhook deliverer does.
    const current = await this.deps.store.currentSummaries([...new Set(older)]);
    let text = '';
    for (const row of rows) {
      const event = fromEventRow(row);
      const summary = summaries.get(row.id) ?? current.get(row.run_id);
      if (!summary) continue; // the run is gone (deleted by retention): nothing to tell
      const body = deliveryBody(event, { id: row.run_id, organizationId, summary });
      text += `id: ${row.id}\nevent: ${event.type}\ndata: ${body}\n\n`;
    }
    return text;
  }
}
