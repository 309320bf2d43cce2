// What every HTTP baseline does around its handler: listen on PORT (on loopback, with the
// API's keep-alive), say so on stdout (the bench waits for it), and on SIGTERM stop taking
// connections, release what it holds, and exit.
import { createServer } from 'node:http';
import type Koa from 'koa';

export function serveBaseline(app: Koa, release: () => Promise<unknown> = async () => {}): void {
  const server = createServer(app.callback());
  server.keepAliveTimeout = 5000;
  server.listen(Number(process.env.PORT), '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ msg: 'listening', port: process.env.PORT }) + '\n');
  });
  process.on('SIGTERM', () => {
    server.close(() => void release().finally(() => process.exit(0)));
  });
}
