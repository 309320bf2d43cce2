// A bare HTTP client for hostile requests: any method, headers and body bytes, sent with
// node:http so nothing is normalised on the way (fetch would refuse or rewrite some of them).
import { request as httpRequest } from 'node:http';

export interface RawRequest {
  method: string;
  /** Path and query, appended to the base URL as is. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Send the body chunked instead of with a Content-Length. */
  chunked?: boolean;
}

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function sendRaw(baseUrl: string, req: RawRequest): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined && !req.chunked)
      headers['content-length'] = Buffer.byteLength(req.body);
    const outgoing = httpRequest(
      baseUrl + req.path,
      { method: req.method, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    // A server that answers before reading the whole body (413) may close while we still
    // write; the answer, when it came, is what counts.
    outgoing.on('error', reject);
    if (req.body !== undefined) outgoing.write(req.body);
    outgoing.end();
  });
}

export interface ParsedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One raw connection a test writes bytes to as it likes (pipelined requests, a body that
 * stalls half way, broken framing) and reads HTTP/1.1 responses from, in order.
 */
export class RawConnection {
  private buffer = Buffer.alloc(0);
  private closed = false;
  private readonly waiters: Array<() => void> = [];

  private constructor(private readonly socket: import('node:net').Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<RawConnection> {
    const { connect } = await import('node:net');
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawConnection(socket);
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  close(): void {
    this.socket.destroy();
  }

  /** The next complete response (Content-Length framed, as the service answers). */
  async response(timeoutMs = 15000): Promise<ParsedResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.take();
      if (parsed) return parsed;
      if (this.closed) throw new Error(`connection closed; unparsed: ${this.buffer.toString()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response in ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** True when the server has closed the connection (within timeoutMs). */
  async closedByServer(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed;
  }

  private take(): ParsedResponse | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const head = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')?.[1]);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return undefined;
    const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(end + 4 + length);
    return { status, headers, body };
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/** The bytes of one HTTP/1.1 request with a JSON body (or none). */
export function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: string | Buffer,
): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: test'];
  for (const [name, value] of Object.entries(headers)) {
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`);
  }
  const bytes = body === undefined ? undefined : Buffer.from(body);
  if (bytes) lines.push(`Content-Length: ${bytes.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  return bytes ? Buffer.concat([head, bytes]) : head;
}
