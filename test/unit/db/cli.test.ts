// Tests of db/cli: quarry exec exit codes: 0 ok, 1 SQL error, 2 bad input, 3 rejected, 4 timed out; quarry exec-batch
// keeps input order, survives malformed lines and resolves db paths from the input file
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join, basename } from 'node:path';
import { spawnSync } from 'node:child_process';
import { main } from '../../../src/cli/main';
import { buildDb, tempDir, repoRoot } from '../../helpers/fixtures';
import { capture } from '../captureStream';

const db = buildDb('db-sandbox');

async function run(...argv: string[]) {
  const out = capture();
  const err = capture();
  const code = await main(argv, { stdout: out.stream, stderr: err.stream, cwd: process.cwd() });
  return { code, out: out.text(), err: err.text() };
}

test('quarry exec exit codes: 0 ok, 1 SQL error, 2 bad input, 3 rejected, 4 timed out', async () => {
  const ok = await run('exec', '--db', db, '--sql', 'SELECT name FROM team ORDER BY id');
  assert.equal(ok.code, 0);
  assert.equal(ok.out, '    name\n0  Lions\n1   Owls\n');
  const sqlErr = await run('exec', '--db', db, '--sql', 'SELECT nope FROM team');
  assert.deepEqual([sqlErr.code, sqlErr.out], [1, 'no such column: nope\n']);
  const notDb = await run('exec', '--db', join(repoRoot, 'package.json'), '--sql', 'SELECT 1');
  assert.equal(notDb.code, 2);
  assert.match(notDb.err, /is not a SQLite database/);
  assert.equal((await run('exec', '--sql', 'SELECT 1')).code, 2);
  assert.equal((await run('exec', '--db', db, '--sql', 'SELECT 1', '--format', 'xml')).code, 2);
  assert.equal((await run('exec', '--db', db, '--sql', 'DROP TABLE team')).code, 3);
  const slow = await run(
    'exec',
    '--db',
    db,
    '--timeout-ms',
    '200',
    '--sql',
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
  );
  assert.equal(slow.code, 4);
  const json = await run('exec', '--db', db, '--format', 'json', '--sql', 'SELECT id FROM team');
  assert.equal(json.out, '{"columns": ["id"], "data": [{"id": 1}, {"id": 2}]}\n');
});

test(
  'quarry exec-batch keeps input order, survives malformed ' + 'lines and resolves db paths from the input file',
  async () => {
    const dir = tempDir();
    const local = buildDb('db-sandbox', { dir, file: 'local.sqlite' });
    const inPath = join(dir, 'in.jsonl');
    writeFileSync(
      inPath,
      [
        JSON.stringify({ id: 'a', db: basename(local), sql: 'SELECT big, photo FROM player WHERE id = 1' }),
        '{not json',
        JSON.stringify({ id: 'c', db: db, sql: 'DELETE FROM team' }),
        JSON.stringify({
          id: 'd',
          db: local,
          sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
        }),
        JSON.stringify({ id: 'e', sql: 'SELECT 1' }),
        JSON.stringify({ id: 'f', db: local, sql: 'SELECT count(*) AS n FROM numbers' }),
      ].join('\n') + '\n',
    );
    const outPath = join(dir, 'out.jsonl');
    const r = await run('exec-batch', '--in', inPath, '--out', outPath, '--jobs', '2', '--timeout-ms', '300');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^6 queries, 4 errors, 1 timeouts, [\d.]+ s, [\d.]+ queries\/s\n$/);
    const lines = readFileSync(outPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.id),
      ['a', null, 'c', 'd', 'e', 'f'],
    );
    assert.deepEqual(lines[0].rows, [['9007199254740993', '<blob 4 bytes>']]);
    assert.match(lines[1].error, /line 2: not valid JSON/);
    assert.deepEqual(
      lines.map((l) => l.errorClass),
      [null, 'sql', 'rejected', 'timeout', 'sql', null],
    );
    assert.match(lines[4].error, /"db" must be a non-empty string/);
    assert.deepEqual(lines[5].rows, [[200]]);
    assert.equal(lines[5].observation, '     n\n0  200');
    for (const key of [
      'id',
      'ok',
      'errorClass',
      'error',
      'columns',
      'rows',
      'rowCount',
      'truncated',
      'observation',
      'ms',
    ]) {
      assert.ok(key in lines[0], key);
    }
  },
);

test('the bundled CLI exits with the same codes when spawned', () => {
  const cli = join(repoRoot, 'dist', 'cli.js');
  assert.ok(existsSync(cli), 'run the build first');
  const rejected = spawnSync(process.execPath, [cli, 'exec', '--db', db, '--sql', '/* x */ DELETE FROM team'], {
    encoding: 'utf8',
  });
  assert.equal(rejected.status, 3, rejected.stderr);
  const ok = spawnSync(process.execPath, [cli, 'exec', '--db', db, '--sql', 'SELECT 1 AS one'], { encoding: 'utf8' });
  assert.deepEqual([ok.status, ok.stdout], [0, '   one\n0    1\n']);
});
