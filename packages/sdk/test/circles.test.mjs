// The SDK's modules import one way: no import circle under src/, type-only imports included
// (madge, through scripts/circles.mjs, the check `npm run check-circles` runs). The same check
// is shown to fail on a copy of src/ with a planted circle of type-only imports.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importCircles } from '../scripts/circles.mjs';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

test('src/ has no import circle, type-only imports included', async () => {
  assert.deepEqual(await importCircles(src), []);
});

test('the check reports a circle of type-only imports planted in a copy of src/', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'trust-gate-circles-'));
  try {
    const copy = join(scratch, 'src');
    cpSync(src, copy, { recursive: true });
    writeFileSync(join(copy, 'a.ts'), "import type { B } from './b.js';\n\nexport interface A {\n  b?: B;\n}\n");
    writeFileSync(join(copy, 'b.ts'), "import type { A } from './a.js';\n\nexport interface B {\n  a?: A;\n}\n");
    assert.deepEqual(await importCircles(copy), [['a.ts', 'b.ts']]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
