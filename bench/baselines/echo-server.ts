// Baseline (a) of the create benchmark: a bare Koa endpoint that parses the same JSON body as
// the service and echoes it back. What Node and Koa cost before any work is done.
import { createServer } from 'node:http';
import Koa from 'koa';
import { exitWithParent } from '../child.js';
import { readJson } from './read-json.js';

exitWithParent();
const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'GET') {
    ctx.body = { status: 'ok' };
    return;
  }
  try {
    ctx.body = await readJson(ctx.req);
  } catch {
    ctx.status = 400;
    ctx.body = { message: 'request body is not valid JSON' };
  }
});
const server = createServer(app.callback());
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ msg: 'listening', port: process.env.PORT }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
