// Finds import cycles among a tree's TypeScript files, type-only imports included: a reader of
// a module must know every module it names, whether for a value or for a type, so a cycle of
// either kind ties its files together. (ESLint's import/no-cycle leaves type imports out, which
// is why this check is the project's own.) Run by `npm run lint`; test/unit/import-cycles
// holds it to a tree with a known cycle.
//
//   node scripts/import-cycles.mjs src workers   → exit 1 and the cycles, if there are any
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/** Every .ts and .tsx file under the given directories (declaration files left out). */
function sourceFiles(dirs) {
  const found = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) found.push(resolve(path));
    }
  };
  dirs.forEach(walk);
  return found;
}

/** The files of the tree that a file imports or re-exports (relative specifiers only). */
function importsOf(file, known) {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets = new Set();
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith('.')) continue;
    // NodeNext: a specifier names the emitted .js file; its source is the .ts(x) beside it.
    const base = resolve(dirname(file), fileName.replace(/\.js$/, ''));
    const target = [`${base}.ts`, `${base}.tsx`].find((f) => known.has(f));
    if (target) targets.add(target);
  }
  return targets;
}

/**
 * The cycles among the files under `dirs`: each strongly connected component of two or more
 * files (or a file importing itself), as paths relative to `root`, sorted.
 */
export function findImportCycles(dirs, root = process.cwd()) {
  const files = sourceFiles(dirs.map((d) => resolve(root, d)));
  const known = new Set(files);
  const edges = new Map(files.map((f) => [f, importsOf(f, known)]));
  // Tarjan's strongly connected components, iterative so a deep chain cannot overflow.
  let index = 0;
  const indexOf = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  for (const start of files) {
    if (indexOf.has(start)) continue;
    const work = [{ node: start, next: [...edges.get(start)], i: 0 }];
    indexOf.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (frame.i < frame.next.length) {
        const to = frame.next[frame.i++];
        if (!indexOf.has(to)) {
          indexOf.set(to, index);
          low.set(to, index++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: [...edges.get(to)], i: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node), indexOf.get(to)));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node), low.get(frame.node)));
      if (low.get(frame.node) === indexOf.get(frame.node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || edges.get(frame.node).has(frame.node)) {
          components.push(component.map((f) => relative(root, f)).sort());
        }
      }
    }
  }
  return components.sort((a, b) => a[0].localeCompare(b[0]));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dirs = process.argv.slice(2);
  const cycles = findImportCycles(dirs.length > 0 ? dirs : ['src', 'workers']);
  if (cycles.length > 0) {
    const lines = cycles.map((files) => `  ${files.length} files: ${files.join(' ↔ ')}\n`);
    process.stderr.write(
      `import cycles (type imports included): ${cycles.length}\n${lines.join('')}`,
    );
    process.exit(1);
  }
}
