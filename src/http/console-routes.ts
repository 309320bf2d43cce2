// GET /console: the browser console (console/src, bundled into dist/console at build). Every
// path under /console answers the same page, so a screen's URL (its filters in the query) can
// be bookmarked and reloaded; the page then calls the documented API with the key the user
// signs in with. The page loads nothing from another host and runs no inline script: its
// Content-Security-Policy is default-src 'self', and the base path reaches the script through a
// <meta> element rather than an inline one.
import { readFileSync } from 'node:fs';
import type { Router } from '@koa/router';
import type { AppState } from './context.js';

const ASSETS = new URL('../../console/', import.meta.url);

const CSP = [
  "default-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

function page(basePath: string): string {
  const base = escapeAttribute(basePath);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="base-path" content="${base}">
<title>Workflow runs</title>
<link rel="stylesheet" href="${base}/console/assets/styles.css">
<script type="module" src="${base}/console/assets/app.js"></script>
</head>
<body>
<div id="app"><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>
`;
}

export function consoleRoutes(router: Router<AppState>, basePath: string): void {
  // Read once at start: a missing bundle is a broken build, better known at once.
  const script = readFileSync(new URL('app.js', ASSETS));
  const styles = readFileSync(new URL('styles.css', ASSETS));
  const html = page(basePath);
  const security = {
    'Content-Security-Policy': CSP,
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  };
  const serve = (type: string, body: Buffer | string, cache: string) => {
    return (ctx: { set(headers: Record<string, string>): void; type: string; body: unknown }) => {
      ctx.set({ ...security, 'Cache-Control': cache });
      ctx.type = type;
      ctx.body = body;
    };
  };
  router.get(
    '/console/assets/app.js',
    serve('application/javascript; charset=utf-8', script, 'no-cache'),
  );
  router.get('/console/assets/styles.css', serve('text/css; charset=utf-8', styles, 'no-cache'));
  const index = serve('text/html; charset=utf-8', html, 'no-cache');
  router.get('/console', index);
  router.get('/console/*rest', index);
}
