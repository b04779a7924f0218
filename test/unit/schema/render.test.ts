// Tests of schema/render: list style: the SkyRL-SQL / SQL-Trail layout, blank line between tables, foreign keys at
// the end; ddl style: MTSQL-R1 create table blocks with aligned example rows
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { buildDb } from '../../helpers/fixtures';
import { introspectSchema, renderSchema } from '../../../src/core/db/schema';

const bookshop = introspectSchema(buildDb('bookshop'), { sampleRows: 3 });
const odd = introspectSchema(buildDb('schema-odd'), { sampleRows: 3 });

test('list style: the SkyRL-SQL / SQL-Trail layout, blank line between tables, foreign keys at the end', () => {
  const text = renderSchema(bookshop, { style: 'list' });
  assert.ok(
    text.startsWith(
      'Table: author\n- author_id (INTEGER, PRIMARY KEY)\n- name (TEXT)\n- country (TEXT)\n- birth_year ' +
        '(INTEGER)\n\nTable: book\n',
    ),
  );
  assert.ok(
    text.includes(
      'Table: order_item\n- order_id (INTEGER, PRIMARY KEY)\n- book_id (INTEGER, PRIMARY KEY)\n- quantity (INTEGER)\n',
    ),
  );
  assert.ok(
    text.endsWith(
      '\n\nForeign keys:\nbook.author_id = author.author_id\norders.customer_id = customer.customer_id\n' +
        'order_item.order_id = orders.order_id\norder_item.book_id = book.book_id',
    ),
  );
  assert.ok(!text.includes('example rows'));
});

test('ddl style: MTSQL-R1 create table blocks with aligned example rows', () => {
  const text = renderSchema(bookshop, { style: 'ddl', sampleRows: 1 });
  assert.ok(
    text.startsWith(
      [
        'create table author (',
        '    author_id INTEGER,',
        '    name TEXT,',
        '    country TEXT,',
        '    birth_year INTEGER,',
        '    primary key (author_id)',
        ')',
        '/*',
        '1 example rows from table author:',
        'author_id    name             country    birth_year',
        '1            Chinua Achebe    Nigeria    1930',
        '*/',
        'create table book (',
      ].join('\n'),
    ),
  );
  assert.ok(
    text.includes(
      '    price REAL,\n    primary key (book_id),\n    foreign key (author_id) references author(author_id)\n)',
    ),
  );
  assert.ok(text.includes('    primary key (order_id, book_id),\n'));
  // REAL values keep their decimal point as Python shows them.
  assert.match(renderSchema(bookshop, { style: 'ddl', sampleRows: 3 }), /Arrow of God\s+1\s+1964\s+Fiction\s+14\.0\n/);
});

test('ddl style quotes odd names so every create table statement runs', () => {
  const text = renderSchema(odd, { style: 'ddl', sampleRows: 0 });
  assert.ok(
    text.includes(
      'create table "order" (\n    "group" INTEGER,\n    "select" TEXT,\n    "my col" REAL,\n    primary ' +
        'key ("group", "select")\n)',
    ),
  );
  assert.ok(text.includes('foreign key (g, s) references "order"("group", "select")'));
  assert.ok(text.includes('-- view "order summary"\nCREATE VIEW'));
  const db = new Database(':memory:');
  try {
    for (const stmt of text.split(/\n(?=create table|-- view)/)) if (stmt.startsWith('create table')) db.exec(stmt);
    assert.deepEqual(
      (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid").all() as { name: string }[]
      ).map((r) => r.name),
      ['order', 'we"ird table', 'child'],
    );
  } finally {
    db.close();
  }
});

test('names style and views are marked', () => {
  assert.equal(renderSchema(bookshop, { style: 'names' }), 'author\nbook\ncustomer\norders\norder_item');
  assert.equal(renderSchema(odd, { style: 'names' }), 'order\nwe"ird table\nchild\norder summary (view)');
  assert.ok(renderSchema(odd, { style: 'list' }).includes('View: order summary\n- group (INTEGER)\n- n (ANY)'));
});

test('descriptions render as comments in list and ddl styles', () => {
  const descriptions = { book: { price: 'list price in euros' } };
  assert.ok(
    renderSchema(bookshop, { style: 'list', descriptions }).includes('- price (REAL) -- list price in euros\n'),
  );
  assert.ok(
    renderSchema(bookshop, { style: 'ddl', sampleRows: 0, descriptions }).includes(
      '    price REAL, -- list price in euros\n',
    ),
  );
});

test('truncation: rows go first, then columns, then tables from the end, named', () => {
  const full = renderSchema(bookshop, { style: 'ddl', sampleRows: 3 });
  const noRows = renderSchema(bookshop, { style: 'ddl', sampleRows: 0 });
  assert.equal(renderSchema(bookshop, { style: 'ddl', sampleRows: 3, maxChars: full.length }), full);
  assert.equal(renderSchema(bookshop, { style: 'ddl', sampleRows: 3, maxChars: full.length - 1 }), noRows);
  const small = renderSchema(bookshop, { style: 'ddl', maxChars: 400 });
  assert.ok(small.length <= 400, `${small.length}`);
  assert.match(small, /-- (\d) of 5 tables omitted for length: .*order_item$/);
  assert.ok(small.startsWith('create table author ('));
  const tiny = renderSchema(bookshop, { style: 'list', maxChars: 10 });
  assert.equal(tiny, '-- 5 of 5 tables omitted for length: author, book, customer, orders, order_item');
});

test('column cap applies before tables are dropped', () => {
  const wide = introspectSchema(
    buildDb('wide', {
      sql: `CREATE TABLE w (${Array.from({ length: 40 }, (_, i) => `c${i} INTEGER`).join(', ')});`,
    }),
  );
  const full = renderSchema(wide, { style: 'list' });
  const capped = renderSchema(wide, { style: 'list', maxChars: full.length - 1 });
  assert.ok(capped.includes('- c31 (INTEGER)\n- … 8 more columns'));
  assert.ok(!capped.includes('c32'));
});

test('ddl with capped columns and no keys stays valid SQL (no comma before the omission comment)', () => {
  const wide = introspectSchema(
    buildDb('wide2', {
      sql: `CREATE TABLE w (${Array.from({ length: 12 }, (_, i) => `c${i} INTEGER`).join(', ')});`,
    }),
  );
  const full = renderSchema(wide, { style: 'ddl', sampleRows: 0 });
  const capped = renderSchema(wide, { style: 'ddl', sampleRows: 0, maxChars: full.length - 1 });
  assert.ok(capped.includes('    c7 INTEGER\n    -- … 4 more columns\n)'), capped);
  const db = new Database(':memory:');
  try {
    db.exec(capped);
  } finally {
    db.close();
  }
});
