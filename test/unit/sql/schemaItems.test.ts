// Tests of sql/schemaItems: aliases resolve to tables; unqualified columns resolve against the schema; CTEs and
// derived tables are not base tables; their columns count where they come from
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractSchemaItems, extractByTokens, schemaItemSet, jaccard } from '../../../src/core/sql';
import { introspectSchema } from '../../../src/core/db/schema';
import { buildDb } from '../../helpers/fixtures';

const schema = introspectSchema(buildDb('bookshop'), { sampleRows: 0 });

test('aliases resolve to tables; unqualified columns resolve against the schema', () => {
  const sql =
    'SELECT T1.name, count(*) AS n FROM author AS T1 JOIN book T2 ON T1.author_id = T2.author_id ' +
    'WHERE genre = "Fiction" GROUP BY T1.name ORDER BY n DESC';
  assert.deepEqual(extractSchemaItems(sql, schema), {
    tables: ['author', 'book'],
    columns: ['author.author_id', 'author.name', 'book.author_id', 'book.genre'],
    method: 'parser',
  });
  // Without a schema, unqualified names stay bare; "Fiction" (a double-quoted literal) and the alias n are not items.
  assert.deepEqual(extractSchemaItems(sql).columns, ['author.author_id', 'author.name', 'book.author_id', 'genre']);
});

test('CTEs and derived tables are not base tables; their columns count where they come from', () => {
  const sql =
    "WITH big AS (SELECT customer_id FROM orders WHERE status = 'placed') " +
    'SELECT c.name FROM customer c JOIN big b ON c.customer_id = b.customer_id ' +
    "WHERE c.city IN (SELECT city FROM (SELECT city, country FROM customer) AS x WHERE x.country = 'Poland')";
  assert.deepEqual(extractSchemaItems(sql, schema), {
    tables: ['customer', 'orders'],
    columns: [
      'customer.city',
      'customer.country',
      'customer.customer_id',
      'customer.name',
      'orders.customer_id',
      'orders.status',
    ],
    method: 'parser',
  });
});

test('correlated subqueries see the outer aliases; set-operation arms and cut-out subqueries all count', () => {
  const sql =
    'SELECT a.name FROM author a WHERE EXISTS (SELECT 1 FROM book b WHERE b.author_id = a.author_id) ' +
    'INTERSECT SELECT name FROM author WHERE author_id IN (SELECT author_id FROM book EXCEPT SELECT ' +
    'book_id FROM order_item)';
  const items = extractSchemaItems(sql, schema);
  assert.deepEqual(items.tables, ['author', 'book', 'order_item']);
  assert.deepEqual(items.columns, ['author.author_id', 'author.name', 'book.author_id', 'order_item.book_id']);
});

test('unknown names are kept, so hallucinated schema items lower r_schema', () => {
  const gold = schemaItemSet(extractSchemaItems('SELECT name FROM author', schema));
  const pred = schemaItemSet(extractSchemaItems('SELECT full_name FROM author', schema));
  assert.deepEqual([...pred].sort(), ['column:full_name', 'table:author']);
  assert.equal(jaccard(gold, pred), 1 / 3);
});

test('unparseable SQL falls back to tokens and says so', () => {
  const items = extractSchemaItems(
    'SELEC b.title FROM book AS b JOIN author a ON a.author_id = b.author_id WHERE price > 10',
    schema,
  );
  assert.equal(items.method, 'tokens');
  assert.ok(items.parseError);
  assert.deepEqual(items.tables, ['author', 'book']);
  assert.deepEqual(items.columns, ['author.author_id', 'book.author_id', 'book.price', 'book.title']);
  const bare = extractByTokens('SELECT count(x) FROM t WHERE y = "s"');
  assert.deepEqual([bare.tables, bare.columns], [['t'], ['x', 'y']]);
});
