// scripts/check-line-length.mjs (run by `npm test`): names file:line of every checked line over 120 characters in a
// real git repository, counts characters rather than bytes, and skips what the allowlist names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const script = join(__dirname, '..', '..', '..', '..', 'scripts', 'check-line-length.mjs');

function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-lines-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: dir });
  execFileSync('git', ['add', '.'], { cwd: dir });
  return dir;
}

const check = (dir: string) => spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });

test('a line over 120 characters is named with its file and line; 120 characters pass', () => {
  const dir = repo({
    'src/a.ts': `const ok = 1;\n// ${'x'.repeat(117)}\n`,
    'src/b.py': `x = 1\n\n# ${'y'.repeat(119)}\n`,
    'data/big.json': `{"k": "${'z'.repeat(200)}"}\n`,
  });
  try {
    const r = check(dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^src\/b\.py:3: 121 characters \(at most 120\)$/m);
    assert.doesNotMatch(r.stderr, /src\/a\.ts|big\.json/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('characters, not bytes: 120 two-byte characters pass; the allowlist skips a folder and a file', () => {
  const dir = repo({
    'src/ok.ts': `// ${'é'.repeat(117)}\n`,
    'webview/long.ts': `// ${'x'.repeat(200)}\n`,
    'src/one.css': `/* ${'x'.repeat(200)} */\n`,
    'scripts/line-length-allow.txt': '# being wrapped\nwebview/\nsrc/one.css\n',
  });
  try {
    const r = check(dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /every line at most 120 characters/);
    writeFileSync(join(dir, 'scripts', 'line-length-allow.txt'), 'webview/\n');
    const again = check(dir);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /^src\/one\.css:1: /m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
