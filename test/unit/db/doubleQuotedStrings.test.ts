// Tests of db/doubleQuotedStrings: only the unresolved double-quoted name is turned into a string, never inside
// strings or comments; double-quoted string literals work as in Python\'s sqlite3; real column names still resolve
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { requoteAsString, unresolvedDoubleQuoted } from '../../../src/core/db/doubleQuotedStrings';
import { createSqlPool } from '../../../src/core/db';
import { buildDb } from '../../helpers/fixtures';

test('only the unresolved double-quoted name is turned into a string, never inside strings or comments', () => {
  assert.equal(
    requoteAsString('SELECT "name" FROM t WHERE name = "Ada" -- "Ada"', 'Ada'),
    'SELECT "name" FROM t WHERE name = \'Ada\' -- "Ada"',
  );
  assert.equal(requoteAsString(`SELECT '"Ada"', "it's" FROM t`, "it's"), `SELECT '"Ada"', 'it''s' FROM t`);
  assert.equal(
    unresolvedDoubleQuoted('no such column: "Ada" - should this be a string literal in single-quotes?'),
    'Ada',
  );
  assert.equal(unresolvedDoubleQuoted('no such column: nope'), null);
});

const db = buildDb('db-sandbox');
const pool = createSqlPool({ size: 1 });
after(() => pool.close());

test("double-quoted string literals work as in Python's sqlite3; real column names still resolve", async () => {
  const r = await pool.exec({ db, sql: 'SELECT "name" FROM player WHERE name = "Ada" OR name = "Bo" ORDER BY id' });
  assert.deepEqual(r.rows, [['Ada'], ['Bo']]);
  const missing = await pool.exec({ db, sql: 'SELECT nope FROM player WHERE name = "Ada"' });
  assert.equal(missing.error, 'no such column: nope');
});
