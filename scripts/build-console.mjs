// Bundles the console (console/src, TypeScript with Preact) into dist/console: one minified
// script and one stylesheet, served by the API at /console (src/http/console-routes.ts). The
// console is type-checked before (npm run build: tsc -p console/tsconfig.json). Prints the
// gzipped size, and fails the build past the budget: the console must stay small.
import { mkdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import process from 'node:process';
import { build } from 'esbuild';

const BUDGET_GZIP_BYTES = 150 * 1024;
const out = 'dist/console';
mkdirSync(out, { recursive: true });

await build({
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
});

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
