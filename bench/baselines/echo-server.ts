// Baseline (a) of the create benchmark: a bare Koa endpoint that parses the same JSON body as
// the service and echoes it back. What Node and Koa cost before any work is done.
import Koa from 'koa';
import { exitWithParent } from '../child.js';
import { readJson } from './read-json.js';
import { serveBaseline } from './serve.js';

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
serveBaseline(app);
