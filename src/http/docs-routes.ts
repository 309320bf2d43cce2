// GET /docs: a page that renders the API document (/openapi.json) with Redoc's standalone
// bundle, served by the service itself from dist/assets (copied there at build). It must work
// with no internet: the page loads nothing from another host, and its Content-Security-Policy
// forbids the browser to try.
import { readFileSync } from 'node:fs';
import type { Router } from '@koa/router';
import type { AppState } from './context.js';

const BUNDLE = new URL('../../assets/redoc.standalone.js', import.meta.url);

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Workflow run service API</title>
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="openapi.json" hide-download-button="false"></redoc>
<script src="docs/redoc.standalone.js"></script>
</body>
</html>
`;

/** Everything from this service; inline styles and a blob worker are how Redoc renders. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
].join('; ');

export function docsRoutes(router: Router<AppState>): void {
  // Read once at start: a missing bundle is a broken build, better known at once.
  const bundle = readFileSync(BUNDLE);
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', CSP);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/redoc.standalone.js', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = bundle;
  });
}
