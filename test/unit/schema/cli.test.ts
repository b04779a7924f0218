// Tests of schema/cli: quarry schema prints each style; quarry schema --json prints the introspected schema
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { buildDb, repoRoot, tempDir } from '../../helpers/fixtures';

const db = buildDb('bookshop');

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const sink = (f: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, cb) {
        f(String(chunk));
        cb();
      },
    });
  const code = await main(argv, {
    stdout: sink((s) => {
      out += s;
    }),
    stderr: sink((s) => {
      err += s;
    }),
    cwd: process.cwd(),
  });
  return { code, out, err };
}

test('quarry schema prints each style', async () => {
  const list = await run('schema', '--db', db);
  assert.equal(list.code, 0);
  assert.ok(list.out.startsWith('Table: author\n- author_id (INTEGER, PRIMARY KEY)\n'));
  const ddl = await run('schema', '--db', db, '--style', 'ddl', '--sample-rows', '1');
  assert.match(ddl.out, /^create table author \(\n/);
  assert.ok(ddl.out.includes('/*\n1 example rows from table book:\n'));
  const names = await run('schema', '--db', db, '--style', 'names');
  assert.equal(names.out, 'author\nbook\ncustomer\norders\norder_item\n');
  const small = await run('schema', '--db', db, '--style', 'ddl', '--max-chars', '300');
  assert.ok(small.out.length <= 301 && small.out.includes('omitted for length'));
});

test('quarry schema --json prints the introspected schema', async () => {
  const r = await run('schema', '--db', db, '--json', '--sample-rows', '1');
  const info = JSON.parse(r.out);
  assert.equal(info.tables.length, 5);
  assert.deepEqual(info.tables[4].primaryKey, ['order_id', 'book_id']);
  assert.equal(info.tables[0].sampleRows.length, 1);
});

test('quarry schema exits 2 for bad input', async () => {
  const notDb = await run('schema', '--db', join(repoRoot, 'package.json'));
  assert.equal(notDb.code, 2);
  assert.match(notDb.err, /^quarry schema: .*is not a SQLite database/);
  const missing = await run('schema', '--db', join(tempDir(), 'nope.db'));
  assert.deepEqual([missing.code, /no such file/.test(missing.err)], [2, true]);
  assert.equal((await run('schema')).code, 2);
  assert.equal((await run('schema', '--db', db, '--style', 'yaml')).code, 2);
  assert.equal((await run('schema', '--db', db, '--sample-rows', '-1')).code, 2);
});
