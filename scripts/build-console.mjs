// Bundles the console (console/src, TypeScript with Preact) into dist/console: one minified
// script and one stylesheet, served by the API at /console (src/http/console-routes.ts). The
// console is type-checked before (npm run build: tsc -p console/tsconfig.json). Prints the
// gzipped size, and fails the build past the budget: the console must stay small. It calls the
// API through the typed client (workflow-run-client), of which it takes only what it uses: the
// client's webhook verification (and its standardwebhooks library) is for receivers, never the
// console's, and the build fails if it is bundled.
import { mkdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import process from 'node:process';
import { build } from 'esbuild';

const BUDGET_GZIP_BYTES = 150 * 1024;
const out = 'dist/console';
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: { app: 'console/src/main.tsx', styles: 'console/src/styles.css' },
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  sourcemap: false,
  logLevel: 'warning',
  metafile: true,
});

const app = result.metafile.outputs[`${out}/app.js`];
if (!app) throw new Error(`esbuild's metafile has no ${out}/app.js`);
const bundled = Object.entries(app.inputs)
  .filter(([, input]) => input.bytesInOutput > 0)
  .map(([path]) => path);
const unwanted = bundled.filter((path) =>
  /(^|\/)standardwebhooks\/|clients\/typescript\/dist\/webhooks\.js$/.test(path),
);
if (unwanted.length > 0) {
  throw new Error(`the console bundles the client's webhook verification: ${unwanted.join(', ')}`);
}

let total = 0;
const sizes = [];
for (const file of ['app.js', 'styles.css']) {
  const gz = gzipSync(readFileSync(`${out}/${file}`), { level: 9 }).length;
  total += gz;
  sizes.push(`${file} ${(gz / 1024).toFixed(1)} KB`);
}
process.stdout.write(
  `console bundle, gzipped: ${sizes.join(', ')}; ${(total / 1024).toFixed(1)} KB in all\n`,
);
if (total > BUDGET_GZIP_BYTES) {
  throw new Error(`the console is ${total} bytes gzipped, past its budget of ${BUDGET_GZIP_BYTES}`);
}
