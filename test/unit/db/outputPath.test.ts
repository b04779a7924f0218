// Outputs never replace an input or a database (issue 9, item 3), checked on exec-batch and eval as users run them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync, writeFileSync, symlinkSync } from 'node:fs';
import { repoRoot, tempDir, buildDb } from '../../helpers/fixtures';

const cli = join(repoRoot, 'dist', 'cli.js');
const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

test('exec-batch --out may not be its input (also through a link) or a database; an earlier output is replaced', () => {
  const dir = tempDir();
  const db = buildDb('db-sandbox', { dir });
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, `${JSON.stringify({ id: 1, db, sql: 'SELECT 1' })}\n`);
  const link = join(dir, 'link.jsonl');
  symlinkSync(input, link);
  const dbBytes = readFileSync(db);
  for (const [out, why] of [
    [input, /is also an input/],
    [link, /is also an input/],
    [db, /SQLite database/],
  ] as const) {
    const r = run('exec-batch', '--in', input, '--out', out);
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stderr, why);
  }
  assert.equal(readFileSync(input, 'utf8').trim(), JSON.stringify({ id: 1, db, sql: 'SELECT 1' }));
  assert.deepEqual(readFileSync(db), dbBytes);
  const out = join(dir, 'out.jsonl');
  assert.equal(run('exec-batch', '--in', input, '--out', out).status, 0);
  assert.equal(run('exec-batch', '--in', input, '--out', out).status, 0, 'its own earlier output');
  writeFileSync(join(dir, 'mine.txt'), 'keep me\n');
  const r = run('exec-batch', '--in', input, '--out', join(dir, 'mine.txt'));
  assert.equal(r.status, 2);
  assert.equal(readFileSync(join(dir, 'mine.txt'), 'utf8'), 'keep me\n');
});
