// What the Databases view shows beside tables and columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ddlCopiedText,
  columnTargets,
  describeColumn,
  rowCountText,
  tableDescription,
} from '../../../src/extension/databases/describe';
import { introspectSchema } from '../../../src/core/db/schema';
import { buildDb } from '../../helpers/fixtures';

test('row counts', () => {
  assert.equal(rowCountText(0), '0 rows');
  assert.equal(rowCountText(1), '1 row');
  assert.equal(rowCountText(12345), '12,345 rows');
  assert.equal(rowCountText(null), 'rows: ?');
  assert.equal(tableDescription({ kind: 'view', rowCount: 2 }), 'view · 2 rows');
});

test(
  'columns of a real schema: PK, composite PK, ' + 'FK (also multi-column and to an implied PK), NOT NULL, no type',
  () => {
    const info = introspectSchema(buildDb('schema-odd'), { sampleRows: 0 });
    const t = (name: string) => info.tables.find((x) => x.name === name)!;
    const col = (table: string, c: string) => describeColumn(t(table).columns.find((x) => x.name === c)!, t(table));
    assert.deepEqual([col('order', 'group').role, col('order', 'group').description], ['pk', 'INTEGER · PK 1/2']);
    assert.equal(col('we"ird table', 'g').description, 'INTEGER · FK → order.group');
    assert.equal(col('we"ird table', 's').description, 'TEXT · FK → order.select');
    assert.equal(col('we"ird table', 'note').description, '(no type)');
    assert.deepEqual([col('child', 'parent').role, col('child', 'parent').description], ['fk', 'INTEGER · FK → child']);
    assert.equal(col('child', 'child_id').description, 'INTEGER · PK');
    assert.match(col('child', 'weird_id').tooltip, /references we"ird table\.id/);
    const bookshop = introspectSchema(buildDb('bookshop'), { sampleRows: 0 });
    const author = bookshop.tables.find((x) => x.name === 'author')!;
    assert.equal(describeColumn(author.columns.find((c) => c.name === 'name')!, author).description, 'TEXT · NOT NULL');
    assert.deepEqual(columnTargets('author_id', bookshop.tables.find((x) => x.name === 'book')!.foreignKeys), [
      'author.author_id',
    ]);
  },
);

test('Copy DDL confirms what it copied and how long it is', () => {
  const script = 'CREATE TABLE a (x);\n\nCREATE INDEX ia ON a (x);\n\nCREATE VIEW v AS SELECT 1;\n';
  assert.equal(ddlCopiedText('DDL of shop.sqlite', script), 'DDL of shop.sqlite copied to the clipboard (3 lines)');
  assert.equal(ddlCopiedText('DDL of a', 'CREATE TABLE a (x);'), 'DDL of a copied to the clipboard (1 line)');
});
