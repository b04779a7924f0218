// Output is bounded and streamed (issue 9, item 5): a 200,000-row result with --max-rows 1000000 renders instead of
// overflowing the stack, and exec-batch writes each finished line whole as it goes, so a run stopped by a signal keeps
// every line it finished (and its workers go with it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { repoRoot, tempDir, buildDb } from '../../helpers/fixtures';

const cli = join(repoRoot, 'dist', 'cli.js');
const db = buildDb('db-sandbox', { dir: tempDir() });
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

test('exec of a 200,000-row result with --max-rows 1000000 prints it (no stack overflow)', () => {
  const sql = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<200000) SELECT x FROM c';
  for (const format of ['df', 'table']) {
    const r = spawnSync(
      process.execPath,
      [cli, 'exec', '--db', db, '--max-rows', '1000000', '--format', format, '--sql', sql],
      { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /200000/);
  }
});

test('exec-batch stopped by SIGTERM keeps its finished lines, each whole, and exits 143', async () => {
  const dir = tempDir();
  const input = join(dir, 'in.jsonl');
  const out = join(dir, 'out.jsonl');
  const quick = Array.from({ length: 5 }, (_, i) => ({ id: i, db, sql: `SELECT ${i} AS n` }));
  writeFileSync(
    input,
    [...quick, { id: 'runaway', db, sql: RUNAWAY }, { id: 'after', db, sql: 'SELECT 1' }]
      .map((x) => JSON.stringify(x))
      .join('\n') + '\n',
  );
  const child = spawn(
    process.execPath,
    [cli, 'exec-batch', '--in', input, '--out', out, '--jobs', '1', '--timeout-ms', '60000'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += String(d);
  });
  // Wait until the five quick lines are on disk (the runaway statement is then running).
  for (let i = 0; i < 400; i++) {
    if (existsSync(out) && readFileSync(out, 'utf8').split('\n').filter(Boolean).length >= 5) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  assert.equal(code, 143, stderr);
  const text = readFileSync(out, 'utf8');
  assert.ok(text.endsWith('\n'), 'the file ends with a whole line');
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: unknown; rows: unknown[][] });
  assert.deepEqual(
    lines.map((l) => l.id),
    [0, 1, 2, 3, 4],
  );
  assert.deepEqual(
    lines.map((l) => l.rows[0][0]),
    [0, 1, 2, 3, 4],
  );
  assert.match(stderr, /stopped by SIGTERM after 5 of 7 statements/);
});
