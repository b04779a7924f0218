// scripts/check-unused-exports.mjs (run by `npm test`): on a small project in a temp folder, an export nothing else
// imports is named with its file and line, and one imported any way the codebase imports (named, type-only, namespace,
// through a barrel, dynamic, from a test, or exported by an entry point) is not; the allowlist skips what it names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const script = join(__dirname, '..', '..', '..', '..', 'scripts', 'check-unused-exports.mjs');

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-exports-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const check = (dir: string) => spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });

const FILES: Record<string, string> = {
  'src/util.ts': [
    'export function used(): number { return 1; }',
    'export function unused(): number { return used(); }',
    'export interface Shape { n: number }',
    'export type Lonely = string;',
    'export const viaTest = 1;',
  ].join('\n'),
  'src/ns.ts': 'export const a = 1;\nexport const b = 2;\n',
  'src/lazy.ts': 'export const lazyUsed = 1;\nexport const lazyUnused = 2;\nexport function thenUsed() {}\n',
  'src/deep.ts': 'export const viaBarrel = 1;\nexport const unusedViaBarrel = 2;\n',
  'src/index.ts': "export { viaBarrel, unusedViaBarrel } from './deep';\n",
  'src/app.ts': [
    "import { used, type Shape } from './util';",
    "import * as ns from './ns';",
    "import { viaBarrel } from './index';",
    'export async function run(s: Shape): Promise<number> {',
    "  const { lazyUsed } = await import('./lazy');",
    "  void import('./lazy').then(({ thenUsed }) => thenUsed());",
    '  return used() + s.n + ns.a + viaBarrel + lazyUsed;',
    '}',
  ].join('\n'),
  'src/extension/extension.ts': "import { run } from '../app';\nexport function activate() { return run; }\n",
  'test/unit/util.test.ts': "import { viaTest } from '../../src/util';\nvoid viaTest;\n",
};

test('an export nothing else imports is named with file and line; every kind of import counts as a use', () => {
  const dir = project(FILES);
  try {
    const r = check(dir);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    const named = r.stderr.split('\n').slice(1).filter(Boolean).sort();
    assert.deepEqual(named, [
      'src/deep.ts:2: unusedViaBarrel',
      'src/index.ts:1: unusedViaBarrel',
      'src/lazy.ts:2: lazyUnused',
      'src/ns.ts:2: b',
      'src/util.ts:2: unused',
      'src/util.ts:4: Lonely',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a namespace used whole, an allowlisted export and a used project pass', () => {
  const dir = project({
    ...FILES,
    'src/index.ts': "export { viaBarrel } from './deep';\n",
    'src/whole.ts': "import * as ns from './ns';\nexport const all = Object.keys(ns);\n",
    'src/extension/extension.ts':
      "import { run } from '../app';\nimport { all } from '../whole';\n" +
      'export function activate() { return [run, all]; }\n',
    'scripts/unused-exports-allow.txt':
      '# in flight\nsrc/util.ts unused\nsrc/util.ts Lonely\nsrc/lazy.ts lazyUnused\nsrc/deep.ts unusedViaBarrel\n',
  });
  try {
    const r = check(dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /unused exports: none/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
