// The import-cycle check of `npm run lint` (scripts/import-cycles.mjs): the project's trees
// have none, and the check finds one made of type-only imports, which ESLint's no-cycle misses.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type FindImportCycles = (dirs: string[], root?: string) => string[][];

async function checker(): Promise<FindImportCycles> {
  const url = pathToFileURL(resolve('scripts/import-cycles.mjs')).href;
  return ((await import(url)) as { findImportCycles: FindImportCycles }).findImportCycles;
}

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'cycles-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('import cycles', () => {
  it('the source trees have none, type imports included', async () => {
    const find = await checker();
    expect(find(['src', 'workers', 'console/src', 'bench', 'test'])).to.deep.equal([]);
  });

  it('finds a cycle made only of type imports, across folders, and names its files', async () => {
    const find = await checker();
    const root = tree({
      'src/a/one.ts': "import type { Two } from '../b/two.js';\nexport type One = Two[];\n",
      'src/b/two.ts': "import type { Three } from './three.js';\nexport type Two = Three;\n",
      'src/b/three.ts': "export type { One } from '../a/one.js';\nexport type Three = 3;\n",
      'src/c/free.ts': "import type { One } from '../a/one.js';\nexport type Free = One;\n",
    });
    try {
      expect(find(['src'], root)).to.deep.equal([
        ['src/a/one.ts', 'src/b/three.ts', 'src/b/two.ts'],
      ]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  it('finds a file importing itself, and a .tsx importing a .ts back', async () => {
    const find = await checker();
    const root = tree({
      'src/self.ts': "import { x } from './self.js';\nexport const y = x;\nexport const x = 1;\n",
      'src/view.tsx': "import { data } from './data.js';\nexport const view = data;\n",
      'src/data.ts':
        "import type { view } from './view.js';\nexport const data = 1 as unknown as typeof view;\n",
    });
    try {
      expect(find(['src'], root)).to.deep.equal([['src/data.ts', 'src/view.tsx'], ['src/self.ts']]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });
});
