// A real HTTP receiver of webhooks for the tests: records every request it gets (headers and
// raw body), answers as told (2xx, an error status, 410, a redirect, or never), and checks each
// delivery's signature with the standardwebhooks package, as a third party would.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * What the webhook tests give the service: http to a local receiver allowed, and short
 * backoff, dispatch interval and timeout, so retries happen within a test.
 */
export const WEBHOOK_TEST_ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_BACKOFF_BASE_MS: '100',
  WEBHOOK_DISPATCH_INTERVAL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '800',
};

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** What the receiver answered (undefined: it never answered). */
  answered?: number;
}

export type Behaviour =
  | { kind: 'ok'; status?: number; body?: string; delayMs?: number }
  | { kind: 'fail'; status: number; body?: string }
  | { kind: 'hang' }
  | { kind: 'redirect'; location: string };

export interface DeliveryBody {
  type: string;
  timestamp: string;
  data: Record<string, unknown> & { runId: string; seq: number; run: Record<string, unknown> };
}

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** How each path answers; '*' for the rest. */
  readonly behaviour = new Map<string, Behaviour>([['*', { kind: 'ok' }]]);
  /** Decides a request's answer before `behaviour` does, when it returns one. */
  decide: ((request: Received) => Behaviour | undefined) | undefined;
  private readonly hanging = new Set<() => void>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        receiver.handle(req.url ?? '/', req.headers, Buffer.concat(chunks).toString('utf8'), res),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** An endpoint URL on this receiver (http, on 127.0.0.1: the tests allow both). */
  url(path = '/hook', host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  set(path: string, behaviour: Behaviour): void {
    this.behaviour.set(path, behaviour);
  }

  /** Requests to a path not answered yet. */
  inFlight(path: string): number {
    return this.at(path).filter((r) => r.answered === undefined).length;
  }

  /** Requests to a path, in the order they came. */
  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /**
   * What a receiver that de-duplicates by webhook-id keeps: the first successful request of
   * each webhook-id, in arrival order.
   */
  accepted(path: string): Received[] {
    const seen = new Set<string>();
    return this.at(path).filter((r) => {
      const ok = r.answered !== undefined && r.answered >= 200 && r.answered < 300;
      const id = String(r.headers['webhook-id']);
      if (!ok || seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  }

  async close(): Promise<void> {
    for (const release of this.hanging) release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(
    path: string,
    headers: IncomingHttpHeaders,
    body: string,
    res: import('node:http').ServerResponse,
  ): void {
    const record: Received = { path, headers, body, at: Date.now() };
    this.received.push(record);
    const behaviour = this.decide?.(record) ?? this.behaviour.get(path) ?? this.behaviour.get('*')!;
    const answer = (status: number, text = '', extra: Record<string, string> = {}) => {
      record.answered = status;
      res.writeHead(status, { 'content-type': 'text/plain', ...extra });
      res.end(text);
    };
    switch (behaviour.kind) {
      case 'ok': {
        const reply = () => answer(behaviour.status ?? 200, behaviour.body ?? 'ok');
        if (!behaviour.delayMs) return reply();
        const timer = setTimeout(reply, behaviour.delayMs);
        const release = () => (clearTimeout(timer), res.destroy());
        this.hanging.add(release);
        res.on('close', () => this.hanging.delete(release));
        return;
      }
      case 'fail':
        return answer(behaviour.status, behaviour.body ?? 'failed');
      case 'redirect':
        return answer(302, '', { location: behaviour.location });
      case 'hang': {
        const release = () => res.destroy();
        this.hanging.add(release);
        res.on('close', () => this.hanging.delete(release));
        return;
      }
    }
  }
}

/** A request's body as JSON. */
export function bodyOf(request: Received): DeliveryBody {
  return JSON.parse(request.body) as DeliveryBody;
}

/** Checks a request's signature with standardwebhooks (throws when it does not verify). */
export function verifySignature(secret: string, request: Received): DeliveryBody {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as DeliveryBody;
}
