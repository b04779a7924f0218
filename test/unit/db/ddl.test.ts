// Copy DDL: the script for a whole database rebuilds the same schema; the script for a table has it, its indexes and
// its triggers, and nothing of other tables.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqlPool } from '../../../src/core/db';
import { DDL_CATALOG_SQL, catalogEntries, formatDdl } from '../../../src/core/db/schema/ddl';
import { buildDb, tempDir } from '../../helpers/fixtures';

const pool = createSqlPool({ size: 1 });
after(() => pool.close());

const SQL = `CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE book (id INTEGER PRIMARY KEY, author_id INTEGER REFERENCES author(id), title TEXT);
CREATE INDEX book_by_author ON book(author_id);
CREATE TRIGGER book_title AFTER INSERT ON book BEGIN UPDATE book SET title = trim(NEW.title) WHERE id = NEW.id; END;
CREATE VIEW titles AS SELECT title FROM book;
CREATE UNIQUE INDEX author_name ON author(name);
INSERT INTO author VALUES (1, 'A');`;

async function catalog(db: string) {
  const r = await pool.exec({ db, sql: DDL_CATALOG_SQL, maxRows: Infinity, maxCellChars: 1_000_000 });
  assert.equal(r.ok, true, r.error ?? '');
  return catalogEntries(r.rows);
}

function schemaOf(path: string): unknown[] {
  const d = new Database(path, { readonly: true });
  try {
    return d.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid').all();
  } finally {
    d.close();
  }
}

test('the whole-database script rebuilds the same schema', async () => {
  const db = buildDb('ddl', { sql: SQL });
  const script = formatDdl(await catalog(db));
  const copy = join(tempDir(), 'copy.sqlite');
  const d = new Database(copy);
  d.exec(script);
  d.close();
  assert.deepEqual(schemaOf(copy), schemaOf(db));
  assert.match(script, /;\n\nCREATE TABLE book/);
});

test('a table script has the table, its indexes and triggers, nothing else', async () => {
  const entries = await catalog(buildDb('ddl', { sql: SQL }));
  const book = formatDdl(entries, 'book');
  assert.deepEqual(
    book.split('\n\n').map((s) => /^CREATE (TABLE|INDEX|TRIGGER|VIEW)\b/.exec(s)?.[1]),
    ['TABLE', 'INDEX', 'TRIGGER'],
  );
  assert.match(book, /END;\n$/);
  assert.doesNotMatch(book, /author_name|VIEW/);
  assert.equal(formatDdl(entries, 'titles'), 'CREATE VIEW titles AS SELECT title FROM book;\n');
  assert.throws(() => formatDdl(entries, 'nope'), /no table or view named "nope"/);
});

test('an empty database gives an empty script', () => {
  assert.equal(formatDdl([]), '');
});
