// A Server-Sent Events client for tests: opens a stream with node:http, parses its messages
// as the EventSource algorithm does (fields id, event, data; comments), and keeps them.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';

export interface SseMessage {
  /** The id field, when the message had one. */
  id?: string;
  event: string;
  data: string;
  /** When it arrived (Date.now()). */
  at: number;
}

export class SseClient {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  status = 0;
  headers: IncomingMessage['headers'] = {};
  /** The body of an answer that was not a stream (an error's JSON). */
  text = '';
  ended = false;
  readonly done: Promise<void>;
  private req!: ClientRequest;
  private buffer = '';
  private fields: { id?: string; event?: string; data: string[] } = { data: [] };
  private waiters: Array<() => void> = [];

  private constructor(url: string, headers: Record<string, string>, opened: (err?: Error) => void) {
    this.done = new Promise((resolve) => {
      this.req = httpRequest(url, { headers, agent: false }, (res) => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (this.status !== 200) this.text += chunk;
          else this.feed(chunk);
        });
        const finish = () => {
          this.ended = true;
          this.notify();
          resolve();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
        opened();
      });
      this.req.on('error', (err) => {
        this.ended = true;
        this.notify();
        resolve();
        opened(err);
      });
      this.req.end();
    });
  }

  /** Opens a stream; resolves once the answer's head has arrived. */
  static open(url: string, key: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const client: SseClient = new SseClient(url, { authorization: key, ...headers }, (err) =>
        err ? reject(err) : resolve(client),
      );
    });
  }

  /** The messages that carry an event (data), without the opening one. */
  get events(): SseMessage[] {
    return this.messages.filter((m) => m.data !== '');
  }

  /** The last id the stream gave (what an EventSource sends as Last-Event-ID). */
  get lastEventId(): string | undefined {
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const id = this.messages[i]!.id;
      if (id !== undefined) return id;
    }
    return undefined;
  }

  close(): void {
    this.req.destroy();
  }

  /** Resolves when check holds, or rejects after timeoutMs. */
  async until(what: string, check: () => boolean, timeoutMs = 10000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0 || (this.ended && !check())) {
        throw new Error(
          `${what}: not so after ${timeoutMs} ms (${this.events.length} events, ended ${this.ended})`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (line === '') {
        const { id, event, data } = this.fields;
        if (id !== undefined || data.length > 0) {
          this.messages.push({
            ...(id !== undefined ? { id } : {}),
            event: event ?? 'message',
            data: data.join('\n'),
            at: Date.now(),
          });
        }
        this.fields = { data: [] };
        continue;
      }
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (name === 'id') this.fields.id = value;
      else if (name === 'event') this.fields.event = value;
      else if (name === 'data') this.fields.data.push(value);
    }
    this.notify();
  }
}
