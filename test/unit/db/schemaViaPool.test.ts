// Introspection through the sandbox pool must describe a database exactly as direct introspection does, and fail
// the same clear way on files that are not databases.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqlPool, DatabaseOpenError } from '../../../src/core/db';
import { introspectSchema } from '../../../src/core/db/schema';
import { introspectViaPool } from '../../../src/core/db/schema/viaPool';
import { buildDb, tempDir } from '../../helpers/fixtures';

const pool = createSqlPool({ size: 2 });
after(() => pool.close());

for (const fixture of ['schema-odd', 'bookshop', 'spider-concert']) {
  test(`${fixture}: same SchemaInfo as direct introspection (keys, views, counts, samples)`, async () => {
    const db = buildDb(fixture);
    const direct = introspectSchema(db, { sampleRows: 3 });
    const viaPool = await introspectViaPool(pool, db, { sampleRows: 3 });
    assert.ok(direct.tables.length > 0);
    assert.deepEqual(viaPool, direct);
  });
}

test('odd names: composite and multi-column keys, quoted names, a view, untyped columns', async () => {
  const info = await introspectViaPool(pool, buildDb('schema-odd'), { sampleRows: 0 });
  const byName = new Map(info.tables.map((t) => [t.name, t]));
  assert.deepEqual(byName.get('order')?.primaryKey, ['group', 'select']);
  assert.deepEqual(byName.get('we"ird table')?.foreignKeys, [
    { from: ['g', 's'], table: 'order', to: ['group', 'select'] },
  ]);
  assert.equal(byName.get('we"ird table')?.columns.find((c) => c.name === 'note')?.type, '');
  assert.equal(byName.get('order summary')?.kind, 'view');
  assert.equal(byName.get('child')?.rowCount, 2);
  assert.deepEqual(byName.get('child')?.sampleRows, []);
});

test('a view over a dropped table keeps its name, with no columns and no count', async () => {
  const dir = tempDir();
  const db = buildDb('broken', {
    dir,
    sql:
      'CREATE TABLE t (a INTEGER); CREATE VIEW v AS SELECT a FROM t; DROP TABLE t; CREATE TABLE u (b TEXT); ' +
      "INSERT INTO u VALUES ('x');",
  });
  const info = await introspectViaPool(pool, db);
  assert.deepEqual(
    info.tables.map((t) => [t.name, t.kind, t.columns.length, t.rowCount]),
    [
      ['v', 'view', 0, null],
      ['u', 'table', 1, 1],
    ],
  );
});

test('countRows: false leaves counts null; an empty database has no tables', async () => {
  const info = await introspectViaPool(pool, buildDb('bookshop'), { countRows: false, sampleRows: 0 });
  assert.ok(info.tables.every((t) => t.rowCount === null));
  const empty = join(tempDir(), 'empty.sqlite');
  const d = new Database(empty);
  d.pragma('user_version = 1'); // writes the header, so the file is a real (empty) database
  d.close();
  assert.deepEqual(await introspectViaPool(pool, empty), { tables: [] });
});

test('a count past its budget is null, the rest of the schema still arrives', async () => {
  const dir = tempDir();
  // A view whose count never ends: the worker running it is killed at the budget.
  const db = buildDb('slow', {
    dir,
    sql:
      'CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1); ' +
      'CREATE VIEW forever AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c;',
  });
  const info = await introspectViaPool(pool, db, { countTimeoutMs: 300, sampleRows: 0 });
  assert.deepEqual(
    info.tables.map((t) => [t.name, t.rowCount, t.columns.map((c) => c.name)]),
    [
      ['t', 1, ['a']],
      ['forever', null, ['x']],
    ],
  );
});

test('a file that is not a database rejects with DatabaseOpenError naming it', async () => {
  const notDb = join(tempDir(), 'notes.db');
  writeFileSync(notDb, 'just some text, not SQLite\n');
  await assert.rejects(introspectViaPool(pool, notDb), (err: unknown) => {
    assert.ok(err instanceof DatabaseOpenError, String(err));
    assert.equal(err.kind, 'not-sqlite');
    assert.match(err.message, /notes\.db/);
    return true;
  });
  await assert.rejects(
    introspectViaPool(pool, join(tempDir(), 'missing.sqlite')),
    (err: unknown) => err instanceof DatabaseOpenError && err.kind === 'missing',
  );
});
