// Tests of schema/introspect: bookshop: tables in creation order, declared types, keys, counts and samples; odd
// names, composite keys, multi-column and implicit foreign keys, views
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { introspectSchema } from '../../../src/core/db/schema';
import { DatabaseOpenError } from '../../../src/core/db/open';

test('bookshop: tables in creation order, declared types, keys, counts and samples', () => {
  const info = introspectSchema(buildDb('bookshop'), { sampleRows: 2 });
  assert.deepEqual(
    info.tables.map((t) => t.name),
    ['author', 'book', 'customer', 'orders', 'order_item'],
  );
  const book = info.tables[1];
  assert.equal(book.kind, 'table');
  assert.deepEqual(
    book.columns.map((c) => [c.name, c.type]),
    [
      ['book_id', 'INTEGER'],
      ['title', 'TEXT'],
      ['author_id', 'INTEGER'],
      ['year_published', 'INTEGER'],
      ['genre', 'TEXT'],
      ['price', 'REAL'],
    ],
  );
  assert.deepEqual(book.primaryKey, ['book_id']);
  assert.deepEqual(book.foreignKeys, [{ from: ['author_id'], table: 'author', to: ['author_id'] }]);
  assert.equal(book.sampleRows.length, 2);
  assert.deepEqual(book.sampleRows[0], [1, 'Things Fall Apart', 1, 1958, 'Fiction', 12.5]);
  assert.equal(info.tables[0].rowCount, 12);
  const item = info.tables[4];
  assert.deepEqual(item.primaryKey, ['order_id', 'book_id']);
  assert.deepEqual(
    item.foreignKeys.map((f) => f.table),
    ['orders', 'book'],
  );
});

test('odd names, composite keys, multi-column and implicit foreign keys, views', () => {
  const info = introspectSchema(buildDb('schema-odd'), { sampleRows: 5 });
  assert.deepEqual(
    info.tables.map((t) => [t.name, t.kind]),
    [
      ['order', 'table'],
      ['we"ird table', 'table'],
      ['child', 'table'],
      ['order summary', 'view'],
    ],
  );
  const [order, weird, child, view] = info.tables;
  assert.deepEqual(order.primaryKey, ['group', 'select']);
  assert.equal(order.rowCount, 3);
  assert.deepEqual(weird.foreignKeys, [{ from: ['g', 's'], table: 'order', to: ['group', 'select'] }]);
  assert.equal(weird.columns[3].type, '');
  assert.ok(weird.sampleRows[1][3] instanceof Uint8Array);
  assert.deepEqual(child.foreignKeys, [
    { from: ['weird_id'], table: 'we"ird table', to: ['id'] },
    { from: ['parent'], table: 'child', to: [] },
  ]);
  assert.deepEqual(
    view.columns.map((c) => c.name),
    ['group', 'n'],
  );
  assert.deepEqual(view.foreignKeys, []);
  assert.equal(view.rowCount, 2);
});

test('sampleRows 0 reads no rows; countRows false leaves counts unknown', () => {
  const info = introspectSchema(buildDb('bookshop'), { sampleRows: 0, countRows: false });
  assert.ok(info.tables.every((t) => t.sampleRows.length === 0 && t.rowCount === null));
});

test('a file that is not a database is refused with a DatabaseOpenError', () => {
  const file = join(tempDir(), 'notes.db');
  writeFileSync(file, 'hello, not sqlite');
  assert.throws(
    () => introspectSchema(file),
    (err: unknown) => err instanceof DatabaseOpenError && err.kind === 'not-sqlite',
  );
});
