// Statements of a SQL document (semicolons in strings and comments do not split), the one under the cursor, and
// where SQLite's real error messages point, checked against messages from a real SQLite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { errorSpot, splitStatements, statementAt } from '../../../src/core/sql/statements';

const doc = `-- report
SELECT 'a;b' AS x FROM t;   /* ; */
SELECT "we;ird" FROM u
  WHERE 1;

SELECT 3`;

test('splits on semicolons outside strings, quoted names and comments', () => {
  const s = splitStatements(doc);
  assert.deepEqual(
    s.map((x) => x.text),
    ["SELECT 'a;b' AS x FROM t", 'SELECT "we;ird" FROM u\n  WHERE 1', 'SELECT 3'],
  );
  assert.equal(doc.slice(s[1].start, s[1].end), s[1].text);
  assert.deepEqual(splitStatements('  -- only a comment\n;;'), []);
});

test('the statement under the cursor, or the one just before it', () => {
  const at = (needle: string, delta = 0) => statementAt(doc, doc.indexOf(needle) + delta)?.text;
  assert.equal(at('AS x'), "SELECT 'a;b' AS x FROM t");
  assert.equal(at('WHERE'), 'SELECT "we;ird" FROM u\n  WHERE 1');
  assert.equal(at('/* ;'), "SELECT 'a;b' AS x FROM t", 'after the semicolon on its line');
  assert.equal(at('SELECT 3', 8), 'SELECT 3', 'at the very end');
  assert.equal(statementAt(doc, 0)?.text, "SELECT 'a;b' AS x FROM t", 'before the first: the first');
  assert.equal(statementAt('', 0), null);
});

function sqliteError(sql: string): string {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE singer(singer_id INTEGER, name TEXT); CREATE TABLE concert(singer_id INTEGER)');
  try {
    db.prepare(sql);
    return '';
  } catch (e) {
    return (e as Error).message;
  } finally {
    db.close();
  }
}

test('SQLite error messages point at the token they name', () => {
  const spot = (sql: string) => {
    const s = errorSpot(sql, sqliteError(sql));
    return sql.slice(s.start, s.start + s.length);
  };
  assert.equal(spot('SELECT name FORM singer'), 'singer');
  assert.equal(spot('SELECT nme FROM singer'), 'nme');
  assert.equal(spot('SELECT s.nme FROM singer AS s'), 's.nme');
  assert.equal(spot('SELECT name FROM singers'), 'singers');
  assert.equal(spot('SELECT singer_id FROM singer, concert'), 'singer_id');
  assert.equal(spot('SELECT foo(1)'), 'foo');
  assert.equal(spot('SELECT name FROM singer WHERE ('), '(');
  assert.deepEqual(errorSpot('SELECT 1', 'something else'), { start: 0, length: 8 });
});
