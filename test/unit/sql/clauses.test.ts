// Tests of sql/clauses: clause sets with aliases resolved, conditions split, sides of join equalities sorted;
// different spellings of one query give the same clause sets
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractClauses } from '../../../src/core/sql';
import { introspectSchema } from '../../../src/core/db/schema';
import { buildDb } from '../../helpers/fixtures';

const schema = introspectSchema(buildDb('bookshop'), { sampleRows: 0 });

function sets(sql: string) {
  const r = extractClauses(sql, schema);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.ok ? r.sets : undefined;
}

test('clause sets with aliases resolved, conditions split, sides of join equalities sorted', () => {
  assert.deepEqual(
    sets(
      'SELECT T1.name, count(*) AS n FROM author AS T1 JOIN book AS T2 ON T2.author_id = T1.author_id ' +
        'WHERE T2.price > 10 AND (genre = "Fiction" OR genre = \'Poetry\') GROUP BY T1.name HAVING count(*) > 1 ' +
        'ORDER BY n DESC LIMIT 5',
    ),
    {
      select: ['author.name', 'count (*)'],
      where: ['book.price > 10', "(book.genre = 'Fiction' OR book.genre = 'Poetry')"],
      join: ['author', 'book', 'author.author_id = book.author_id'],
      group: ['author.name'],
      order: ['n DESC'],
      having: ['count (*) > 1'],
      limit: ['LIMIT 5'],
      setOps: [],
    },
  );
});

test('different spellings of one query give the same clause sets', () => {
  const a = sets("select name from author where country = 'Poland' order by birth_year");
  const b = sets('SELECT a.Name FROM Author AS a WHERE a.country = "Poland" ORDER BY a.birth_year ASC;');
  assert.deepEqual(a, b);
});

test('set operations: arms pooled, operators listed; LIMIT forms agree', () => {
  const s = sets('SELECT DISTINCT name FROM author EXCEPT SELECT name FROM customer LIMIT 2, 3');
  assert.deepEqual(s?.select, ['DISTINCT author.name', 'customer.name']);
  assert.deepEqual(s?.setOps, ['EXCEPT']);
  assert.deepEqual(s?.limit, ['LIMIT 3 OFFSET 2']);
  assert.deepEqual(sets('SELECT name FROM author LIMIT 3 OFFSET 2')?.limit, ['LIMIT 3 OFFSET 2']);
});

test('structured view: FROM items with joins, subqueries as text', () => {
  const r = extractClauses(
    'SELECT b.title FROM book b LEFT JOIN order_item oi ON oi.book_id = b.book_id ' +
      "WHERE b.author_id IN (SELECT author_id FROM author WHERE country = 'Japan')",
    schema,
  );
  assert.ok(r.ok && r.query.kind === 'select');
  if (!r.ok || r.query.kind !== 'select') return;
  assert.deepEqual(
    r.query.from.map((f) => [f.table, f.alias, f.join, f.on]),
    [
      ['book', 'b', null, null],
      ['order_item', 'oi', 'LEFT JOIN', 'order_item.book_id = book.book_id'],
    ],
  );
  assert.deepEqual(r.query.subqueries, ["SELECT author.author_id FROM author WHERE author.country = 'Japan'"]);
});

test('a query that does not parse gives ok: false', () => {
  const r = extractClauses('SELECT FROM WHERE');
  assert.equal(r.ok, false);
});
