// Finds import circles among the SDK's modules with madge, type-only imports included
// (`import type`, `export type ... from`, `import('./x.js').T`): a circle of types alone still
// ties the modules' layers together.
//
//   node scripts/circles.mjs          exit 1, naming each circle, when src/ has any
//   node scripts/circles.mjs <dir>    the same for another copy of src/
//
// src/generated/ (Codama's clients, rewritten by `npm run generate`) counts as one module:
// its own internal circles are Codama's layout, but a circle through it and a hand-written
// module is reported like any other.

import madge from 'madge';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const GENERATED = 'generated/';

/**
 * The import circles among the `.ts` modules under `srcDir`, each as the list of its modules'
 * paths relative to `srcDir` (`[]` when there are none). Throws when a relative import does
 * not resolve to a file, since an edge madge cannot follow could hide a circle.
 */
export async function importCircles(srcDir) {
  const parsed = await madge(srcDir, {
    fileExtensions: ['ts'],
    // The package's own compiler options, so `./x.js` resolves to `x.ts` as tsc resolves it.
    tsConfig: resolve(pkg, 'tsconfig.json'),
    detectiveOptions: { ts: { skipTypeImports: false } },
  });
  const unresolved = parsed.warnings().skipped.filter((spec) => spec.startsWith('.'));
  if (unresolved.length) {
    throw new Error(`madge could not resolve these relative imports under ${srcDir}: ${unresolved.join(', ')}`);
  }
  // src/generated/ as one node: every file under it becomes `generated/`, edges inside it drop.
  const node = (id) => (id.startsWith(GENERATED) ? GENERATED : id);
  const graph = {};
  for (const [id, deps] of Object.entries(parsed.obj())) {
    const from = node(id);
    const edges = new Set(graph[from] ?? []);
    for (const dep of deps) if (node(dep) !== from) edges.add(node(dep));
    graph[from] = [...edges].sort();
  }
  const collapsed = await madge(graph);
  return collapsed.circular();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const srcDir = resolve(process.argv[2] ?? resolve(pkg, 'src'));
  const circles = await importCircles(srcDir);
  if (circles.length) {
    console.error(`${circles.length} import circle(s) under ${srcDir} (type-only imports included):`);
    for (const c of circles) console.error(`  ${[...c, c[0]].join(' -> ')}`);
    process.exit(1);
  }
  console.log(`no import circles under ${srcDir} (type-only imports included)`);
}
