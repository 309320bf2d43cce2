// Copies the files the service serves as they are (the docs page's Redoc bundle) into dist/,
// so the built service needs no development packages at run time. Redoc's side menu shows its
// maker's logo from cdn.redoc.ly, with no option to turn it off: the docs page must ask nothing
// of any other host, so that one address is replaced by an empty image (the menu then shows
// the text alone). The build fails if the bundle no longer has it, rather than ship unchecked.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

const bundle = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
if (!bundle.includes(LOGO)) {
  throw new Error(`the Redoc bundle no longer loads ${LOGO}: check what it fetches now`);
}
mkdirSync('dist/assets', { recursive: true });
writeFileSync(
  'dist/assets/redoc.standalone.js',
  bundle.replaceAll(LOGO, 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E'),
);
