// A TCP proxy a test controls, put between the service's processes and MySQL or Redis to make
// the dependency "unreachable" without touching the shared servers:
//   pause()  drops every open connection and closes each new one at once (the peer sees a
//            reset), as when the server is down;
//   resume() forwards again.
//   stall()  stops forwarding without closing anything, both ways, as when the server process is
//            paused (SIGSTOP): bytes wait in the proxy as they would in the kernel's buffers, new
//            connections are accepted and hang. unstall() delivers everything waiting, in order;
//            a client that hung up meanwhile has its bytes delivered and then its end, as a
//            resumed server would read them.
// It can also hold back, on a connection, the client's bytes from the first chunk a predicate
// matches (say, a worker's UPDATE), and deliver them later with releaseHeld(): a write that a
// process sent just before it died and that reaches the server afterwards (a "zombie" write).
import { createServer, Socket, type Server } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Bytes each way that wait while the proxy is stalled. */
  stalledUp: Buffer[];
  stalledDown: Buffer[];
  /** Client bytes held back; undefined while the pair forwards. */
  held: Buffer[] | undefined;
  clientGone: boolean;
}

export class TcpProxy {
  private readonly pairs = new Set<Pair>();
  private paused = false;
  private stalled = false;
  private holdWhen: ((chunk: Buffer) => boolean) | undefined;
  /** Connections accepted while paused and closed at once. */
  refused = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
    return new TcpProxy(server, port, target);
  }

  /** The URL with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  get connections(): number {
    return this.pairs.size;
  }

  /** The dependency goes away: open connections are reset, new ones closed on arrival. */
  pause(): void {
    this.paused = true;
    for (const pair of [...this.pairs]) this.drop(pair);
  }

  resume(): void {
    this.paused = false;
  }

  /** The dependency stops answering, connections stay open (see the top of the file). */
  stall(): void {
    this.stalled = true;
  }

  unstall(): void {
    this.stalled = false;
    for (const pair of [...this.pairs]) {
      const up = pair.stalledUp.splice(0);
      const down = pair.stalledDown.splice(0);
      for (const chunk of up) pair.upstream.write(chunk);
      if (!pair.clientGone) for (const chunk of down) pair.client.write(chunk);
      else if (pair.held === undefined) pair.upstream.end(); // the server reads the hang-up last
    }
  }

  /**
   * From now on, a connection whose client sends a chunk that matches stops forwarding that
   * chunk and everything after it until releaseHeld().
   */
  holdFrom(predicate: ((chunk: Buffer) => boolean) | undefined): void {
    this.holdWhen = predicate;
  }

  /** How many connections have bytes held back. */
  get holding(): number {
    return [...this.pairs].filter((p) => p.held !== undefined).length;
  }

  /**
   * Sends the held bytes on, and resolves with how many connections had some once the server
   * has answered each of them (so what they asked for has been done). Connections whose
   * client is gone are closed after that answer.
   */
  async releaseHeld(timeoutMs = 10000): Promise<number> {
    this.holdWhen = undefined;
    const released = [...this.pairs].filter((p) => p.held !== undefined);
    await Promise.all(
      released.map(
        (pair) =>
          new Promise<void>((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error('the server did not answer released bytes')),
              timeoutMs,
            );
            pair.upstream.once('data', () => {
              clearTimeout(timer);
              if (pair.clientGone) this.drop(pair);
              resolve();
            });
            const held = Buffer.concat(pair.held ?? []);
            pair.held = undefined;
            pair.upstream.write(held);
          }),
      ),
    );
    return released.length;
  }

  async close(): Promise<void> {
    this.pause();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    client.on('error', () => undefined);
    if (this.paused) {
      this.refused++;
      client.resetAndDestroy();
      return;
    }
    const upstream = new Socket();
    upstream.on('error', () => undefined);
    const pair: Pair = {
      client,
      upstream,
      stalledUp: [],
      stalledDown: [],
      held: undefined,
      clientGone: false,
    };
    this.pairs.add(pair);
    upstream.connect(this.target.port, this.target.host);
    client.on('data', (chunk: Buffer) => {
      if (pair.held === undefined && this.holdWhen?.(chunk)) pair.held = [];
      if (pair.held !== undefined) pair.held.push(chunk);
      else if (this.stalled) pair.stalledUp.push(chunk);
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (this.stalled) pair.stalledDown.push(chunk);
      else if (!pair.clientGone) client.write(chunk);
    });
    client.on('close', () => {
      pair.clientGone = true;
      // Held bytes outlive their client: the upstream stays open until they are released, and
      // so do bytes waiting in a stall, until unstall() delivers them.
      if (pair.held === undefined && !this.stalled) this.drop(pair);
    });
    upstream.on('close', () => this.drop(pair));
  }

  private drop(pair: Pair): void {
    this.pairs.delete(pair);
    if (!pair.client.destroyed) pair.client.resetAndDestroy();
    if (!pair.upstream.destroyed) pair.upstream.destroy();
  }
}
