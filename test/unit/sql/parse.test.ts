// Tests of sql/parse: parse failures are returned, never thrown; INTERSECT and EXCEPT, which the grammar rejects, are
// split and parsed (rewrite R1), left to right
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSql } from '../../../src/core/sql';
import { selectToSql } from '../../../src/core/sql/parse';

test('parse failures are returned, never thrown', () => {
  for (const bad of ['SELEC x FROM t', '', ';', 'SELECT (', "SELECT 'x", 'DROP TABLE t', 'SELECT 1; SELECT 2']) {
    const r = parseSql(bad);
    assert.equal(r.ok, false, bad);
    if (!r.ok) assert.ok(r.error.length > 0);
  }
});

test('INTERSECT and EXCEPT, which the grammar rejects, are split and parsed (rewrite R1), left to right', () => {
  const r = parseSql('SELECT a FROM t INTERSECT SELECT a FROM u EXCEPT SELECT a FROM v UNION SELECT a FROM w;');
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.query.kind, 'set');
  if (r.query.kind !== 'set') return;
  assert.equal(r.query.op, 'except');
  assert.equal(r.query.left.kind === 'set' && r.query.left.op, 'intersect');
  assert.equal(r.query.right.kind === 'set' && r.query.right.op, 'union');
  assert.deepEqual(r.rewrites, ['R3 trailing semicolon dropped', 'R1 split at top-level INTERSECT, EXCEPT']);
});

test('nested INTERSECT inside IN (...) is cut out as a placeholder subquery (rewrite R2)', () => {
  const r = parseSql("SELECT x FROM s WHERE id IN (SELECT id FROM a WHERE k = 'INTERSECT' INTERSECT SELECT id FROM b)");
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.subqueries.size, 1);
  const sub = r.subqueries.get('__quarry_sub_0');
  assert.equal(sub?.kind === 'set' && sub.op, 'intersect');
});

test('a plain query needs no rewrite; UNION ALL stays a union all', () => {
  const r = parseSql('SELECT a FROM t UNION ALL SELECT b FROM u');
  assert.ok(r.ok && r.rewrites.length === 0 && r.query.kind === 'set' && r.query.op === 'union all');
});

test('[bracketed] names (R4) and backslashes in strings (R5) are rewritten so the grammar accepts them', () => {
  const r = parseSql("SELECT [my col] FROM [t] WHERE a LIKE '%\\_%' ESCAPE '\\'");
  assert.ok(r.ok, r.ok ? '' : r.error);
  if (!r.ok || r.query.kind !== 'select') return;
  assert.deepEqual(r.rewrites, ['R4 2 [bracketed] names double-quoted', 'R5 backslashes doubled in 2 strings']);
  assert.equal(r.query.ast.from[0].table, 't');
  assert.equal(r.query.ast.where.right.escape.value.value, '\\\\'); // kept raw, doubled (see R5)
});

test('names with letters beyond ASCII (R6) parse as the same names, and print back runnable', () => {
  const sql = 'SELECT T1.größe FROM flughäfen AS T1 JOIN flüge AS T2 ON T1.code = T2.ziel WHERE T1.stadt = "Köln"';
  const r = parseSql(sql);
  assert.ok(r.ok, r.ok ? '' : r.error);
  if (!r.ok || r.query.kind !== 'select') return;
  assert.deepEqual(r.rewrites, ['R6 3 names beyond ASCII backquoted']);
  assert.deepEqual(
    r.query.ast.from.map((f: { table: string }) => f.table),
    ['flughäfen', 'flüge'],
  );
  assert.equal(r.query.ast.columns[0].expr.column, 'größe');
  assert.equal(r.query.ast.where.right.value, 'Köln'); // a "string" stays a string, its letters untouched
  const printed = selectToSql(r.query.ast);
  assert.match(printed, /FROM "flughäfen" AS "T1"/);
  assert.ok(parseSql(printed).ok, printed);
});
