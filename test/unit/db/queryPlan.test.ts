// Tests of db/queryPlan: EXPLAIN QUERY PLAN through the sandbox pool on the bundled sample databases (real SQLite):
// the tree's shape, each step's classification, row counts (sqlite_stat1 or counted), the warnings, the text
// rendering, and that a statement the sandbox refuses is refused here too instead of planned.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqlPool } from '../../../src/core/db';
import {
  buildPlanTree,
  explainQueryPlan,
  planNodes,
  renderPlanText,
  type PlanNode,
  type QueryPlan,
} from '../../../src/core/db/queryPlan';
import { buildDb, repoRoot } from '../../helpers/fixtures';

const sample = (name: string) =>
  buildDb(name, { sql: readFileSync(join(repoRoot, 'media', 'samples', `${name}.sql`), 'utf8') });
const bookshop = sample('bookshop');
const transit = sample('transit');
/** A table past the "large" threshold: 20,000 events, no index on `kind`. */
const big = buildDb('big', {
  sql:
    'CREATE TABLE event (id INTEGER PRIMARY KEY, kind TEXT, at INTEGER);' +
    'CREATE TABLE kind (name TEXT, label TEXT);' +
    "INSERT INTO kind VALUES ('a', 'Alpha'), ('b', 'Beta');" +
    'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) ' +
    "INSERT INTO event SELECT i, CASE i % 2 WHEN 0 THEN 'a' ELSE 'b' END, 20000 - i FROM n;",
});

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());

async function plan(db: string, sql: string): Promise<QueryPlan> {
  const r = await explainQueryPlan(pool, db, sql);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.plan;
}

/** The tree as nested [detail, children] pairs, for comparing shapes. */
function shape(nodes: readonly PlanNode[]): unknown[] {
  return nodes.map((n) => (n.children.length ? [n.detail, shape(n.children)] : n.detail));
}

test('a join on the bookshop: the alias resolved to its table, the primary-key search, both sorts', async () => {
  const p = await plan(
    bookshop,
    'SELECT a.name, count(*) FROM author a JOIN book b ON b.author_id = a.author_id GROUP BY a.name ORDER BY 2 DESC',
  );
  assert.deepEqual(shape(p.nodes), [
    'SCAN b',
    'SEARCH a USING INTEGER PRIMARY KEY (rowid=?)',
    'USE TEMP B-TREE FOR GROUP BY',
    'USE TEMP B-TREE FOR ORDER BY',
  ]);
  const [scan, search, group, order] = p.nodes;
  assert.deepEqual([scan.kind, scan.name, scan.table, scan.access], ['scan', 'b', 'book', 'table']);
  assert.deepEqual(
    [search.kind, search.table, search.access, search.constraint],
    ['search', 'author', 'primary-key', 'rowid=?'],
  );
  assert.deepEqual([group.kind, group.purpose, order.purpose], ['temp-btree', 'GROUP BY', 'ORDER BY']);
  // Counted (no sqlite_stat1): the sample's own sizes.
  const real = new Database(bookshop, { readonly: true });
  const books = real.prepare('SELECT count(*) FROM book').pluck().get();
  real.close();
  assert.equal(p.rowSource, 'count');
  assert.equal(scan.rows, books);
  assert.equal(scan.rowsExact, true);
  // Small tables: a scan and two sorts, but nothing worth a warning.
  assert.deepEqual(p.warnings, []);
});

test('a correlated scalar subquery is a child tree and is warned about, naming the outer table', async () => {
  const p = await plan(
    bookshop,
    'SELECT title, (SELECT name FROM author a WHERE a.author_id = b.author_id) FROM book b',
  );
  assert.deepEqual(shape(p.nodes), [
    'SCAN b',
    ['CORRELATED SCALAR SUBQUERY 1', ['SEARCH a USING INTEGER PRIMARY KEY (rowid=?)']],
  ]);
  assert.equal(p.nodes[1].kind, 'correlated-subquery');
  assert.equal(p.nodes[1].children[0].table, 'author');
  assert.deepEqual(
    p.warnings.map((w) => [w.kind, w.nodeId]),
    [['correlated-subquery', p.nodes[1].id]],
  );
  assert.match(p.warnings[0].message, /once for each row of book \(up to \d+ rows\)/);
});

test('a list subquery, a compound query and a MULTI-INDEX OR keep their nesting', async () => {
  const list = await plan(
    bookshop,
    "SELECT title FROM book WHERE author_id IN (SELECT author_id FROM author WHERE country = 'Poland')",
  );
  assert.equal(list.nodes[1].kind, 'subquery');
  assert.match(list.nodes[1].detail, /^LIST SUBQUERY/);
  assert.equal(list.nodes[1].children[0].detail, 'SCAN author');

  const union = await plan(bookshop, 'SELECT name FROM author UNION SELECT name FROM customer');
  assert.equal(union.nodes.length, 1);
  assert.equal(union.nodes[0].kind, 'compound');
  assert.deepEqual(
    planNodes(union.nodes)
      .filter((n) => n.kind === 'scan')
      .map((n) => n.table),
    ['author', 'customer'],
  );

  const or = await plan(transit, "SELECT * FROM line WHERE line_id = 1 OR code = '14'");
  assert.equal(or.nodes[0].kind, 'multi-index-or');
  const searches = planNodes(or.nodes).filter((n) => n.kind === 'search');
  assert.deepEqual(
    searches.map((n) => [n.access, n.index ?? null]),
    [
      ['primary-key', null],
      ['index', 'sqlite_autoindex_line_1'],
    ],
  );
  assert.ok(searches.every((s) => s.table === 'line'));
});

test('transit: search by index, covering index scan and search, a view read through its table', async () => {
  const byLine = await plan(transit, 'SELECT * FROM trip WHERE line_id = 2 ORDER BY departs_at');
  assert.deepEqual(
    [byLine.nodes[0].kind, byLine.nodes[0].access, byLine.nodes[0].index, byLine.nodes[0].constraint],
    ['search', 'index', 'trip_by_line', 'line_id=?'],
  );
  const grouped = await plan(transit, 'SELECT line_id, count(*) FROM trip GROUP BY line_id');
  assert.deepEqual([grouped.nodes[0].access, grouped.nodes[0].index], ['covering-index', 'trip_by_line']);
  const code = await plan(transit, "SELECT code FROM line WHERE code = 'T1'");
  assert.equal(code.nodes[0].access, 'covering-index');
  const view = await plan(transit, 'SELECT * FROM late_trips');
  assert.deepEqual([view.nodes[0].detail, view.nodes[0].table], ['SCAN trip', 'trip']);
});

test('an automatic index is warned about with the index that would replace it', async () => {
  const p = await plan(transit, 'SELECT * FROM trip a JOIN trip b ON a.passengers = b.passengers');
  const auto = planNodes(p.nodes).find((n) => n.access === 'automatic-covering-index');
  assert.ok(auto, renderPlanText(p));
  assert.equal(auto.table, 'trip');
  const w = p.warnings.filter((x) => x.kind === 'automatic-index');
  assert.equal(w.length, 1);
  assert.equal(w[0].nodeId, auto.id);
  assert.match(w[0].message, /CREATE INDEX ON "trip"\("passengers"\)/);
});

test('a large table: full scan and sort warned about (counted rows); sqlite_stat1 used once ANALYZE ran', async () => {
  const p = await plan(big, "SELECT * FROM event WHERE kind = 'a' ORDER BY at");
  assert.deepEqual(
    p.nodes.map((n) => n.detail),
    ['SCAN event', 'USE TEMP B-TREE FOR ORDER BY'],
  );
  assert.equal(p.nodes[0].rows, 20000);
  assert.deepEqual(
    p.warnings.map((w) => w.kind),
    ['full-scan', 'temp-sort'],
  );
  assert.match(p.warnings[0].message, /Full scan of event: every one of its 20,000 rows is read/);
  assert.match(p.warnings[1].message, /Sort for ORDER BY .* event \(20,000 rows\)/);
  // The same statement by its primary key: no warning.
  const byKey = await plan(big, 'SELECT * FROM event WHERE id = 5');
  assert.deepEqual(byKey.warnings, []);

  // With sqlite_stat1 present (ANALYZE run by the test, outside the sandbox), its count is used, not a fresh count.
  const analyzed = buildDb('analyzed', {
    sql:
      'CREATE TABLE event (id INTEGER PRIMARY KEY, kind TEXT);' +
      'CREATE INDEX event_kind ON event(kind);' +
      "INSERT INTO event VALUES (1, 'a'), (2, 'b'), (3, 'a');" +
      'ANALYZE;' +
      "UPDATE sqlite_stat1 SET stat = '50000 25000' WHERE tbl = 'event';",
  });
  const s = await plan(analyzed, 'SELECT count(*) FROM event e NOT INDEXED WHERE id > 0 AND kind IS NOT NULL');
  const scan = planNodes(s.nodes).find((n) => n.kind === 'scan' || n.kind === 'search');
  assert.ok(scan);
  assert.equal(s.rowSource, 'stat1');
  assert.equal(scan.table, 'event');
  assert.equal(scan.rows, 50000);
});

test('the plan goes through the sandbox guard: writes, several statements and settings are refused', async () => {
  for (const sql of [
    'DELETE FROM book',
    'WITH x AS (SELECT 1) INSERT INTO author(name) SELECT * FROM x',
    'EXPLAIN QUERY PLAN DROP TABLE book',
    'SELECT 1; DROP TABLE book',
    'PRAGMA query_only = 0',
    "ATTACH 'x.db' AS x",
  ]) {
    const r = await explainQueryPlan(pool, bookshop, sql);
    assert.equal(r.ok, false, sql);
    if (!r.ok) assert.equal(r.errorClass, 'rejected', `${sql}: ${r.error}`);
  }
  const err = await explainQueryPlan(pool, bookshop, 'SELECT nope FROM book');
  assert.deepEqual(err.ok ? null : [err.errorClass, err.error], ['sql', 'no such column: nope']);
  // Already prefixed with EXPLAIN QUERY PLAN: planned once, not refused as a nested EXPLAIN.
  const prefixed = await plan(bookshop, 'EXPLAIN QUERY PLAN SELECT * FROM book');
  assert.equal(prefixed.sql, 'SELECT * FROM book');
  assert.deepEqual(shape(prefixed.nodes), ['SCAN book']);
});

test('text: an indented tree like the sqlite3 shell, row counts beside reads, then the warnings', async () => {
  const p = await plan(
    bookshop,
    'SELECT title, (SELECT name FROM author a WHERE a.author_id = b.author_id) FROM book b',
  );
  const text = renderPlanText(p);
  const lines = text.split('\n');
  assert.equal(lines[0], 'QUERY PLAN');
  assert.match(lines[1], /^\|--SCAN b {2}\[book: \d+ rows\]$/);
  assert.equal(lines[2], '`--CORRELATED SCALAR SUBQUERY 1');
  assert.match(lines[3], /^ {3}`--SEARCH a USING INTEGER PRIMARY KEY \(rowid=\?\) {2}\[author: \d+ rows\]$/);
  assert.equal(lines[5], 'Warnings:');
  assert.match(lines[6], /^- Correlated subquery/);
});

test('buildPlanTree hangs rows under their parents and keeps an orphan at the top', () => {
  const roots = buildPlanTree([
    { id: 2, parent: 0, detail: 'MATERIALIZE x' },
    { id: 5, parent: 2, detail: 'SCAN t' },
    { id: 9, parent: 77, detail: 'SCAN u' },
  ]);
  assert.deepEqual(shape(roots), [['MATERIALIZE x', ['SCAN t']], 'SCAN u']);
  assert.deepEqual(
    roots.map((r) => r.kind),
    ['materialize', 'scan'],
  );
});
