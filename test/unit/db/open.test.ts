// Tests of db/open: a missing file, a directory, an empty file and a text file are told apart; a file with a SQLite
// header but damaged pages is reported as corrupt
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  writeFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  copyFileSync,
  openSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openReadOnly, DatabaseOpenError, createSqlPool, type OpenErrorKind } from '../../../src/core/db';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { createHash } from 'node:crypto';

function kindOf(path: string, busyTimeoutMs = 50): OpenErrorKind | 'ok' {
  try {
    openReadOnly(path, { busyTimeoutMs }).close();
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof DatabaseOpenError, String(err));
    return err.kind;
  }
}

test('a missing file, a directory, an empty file and a text file are told apart', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'empty.sqlite'), '');
  writeFileSync(join(dir, 'notes.sqlite'), 'hello, this is not a database\n'.repeat(10));
  mkdirSync(join(dir, 'folder.sqlite'));
  assert.equal(kindOf(join(dir, 'nope.sqlite')), 'missing');
  assert.equal(kindOf(join(dir, 'folder.sqlite')), 'directory');
  assert.equal(kindOf(join(dir, 'empty.sqlite')), 'empty');
  assert.equal(kindOf(join(dir, 'notes.sqlite')), 'not-sqlite');
  assert.throws(() => openReadOnly(join(dir, 'notes.sqlite')), /is not a SQLite database/);
});

test('a file with a SQLite header but damaged pages is reported as corrupt', () => {
  const dir = tempDir();
  const good = buildDb('db-sandbox', { dir });
  const truncated = join(dir, 'truncated.sqlite');
  writeFileSync(truncated, readFileSync(good).subarray(0, 60));
  assert.equal(kindOf(truncated), 'corrupt');
  const scrambled = join(dir, 'scrambled.sqlite');
  copyFileSync(good, scrambled);
  const fd = openSync(scrambled, 'r+');
  writeSync(fd, Buffer.alloc(3000, 0xab), 0, 3000, 100);
  closeSync(fd);
  assert.equal(kindOf(scrambled), 'corrupt');
});

test('a database under an exclusive lock is reported as locked, and readable once released', () => {
  const file = buildDb('db-sandbox');
  const writer = new Database(file);
  writer.exec('BEGIN EXCLUSIVE; UPDATE team SET name = name;');
  try {
    assert.equal(kindOf(file), 'locked');
  } finally {
    writer.exec('ROLLBACK');
    writer.close();
  }
  assert.equal(kindOf(file), 'ok');
});

test('reading a WAL-mode database leaves its directory and bytes untouched', () => {
  const dir = tempDir();
  const file = buildDb('db-sandbox', { dir });
  const w = new Database(file);
  w.pragma('journal_mode = WAL');
  w.close();
  const before = readdirSync(dir).sort();
  const hash = createHash('sha256').update(readFileSync(file)).digest('hex');
  assert.deepEqual(before, ['db-sandbox.sqlite']);
  const db = openReadOnly(file);
  assert.equal(db.prepare('SELECT count(*) FROM player').pluck().get(), 3);
  assert.deepEqual(readdirSync(dir).sort(), before);
  db.close();
  assert.deepEqual(readdirSync(dir).sort(), before);
  assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), hash);
});

test("a WAL database with a live writer shows the writer's committed rows", () => {
  const file = buildDb('db-sandbox');
  const w = new Database(file);
  w.pragma('journal_mode = WAL');
  w.exec("INSERT INTO team VALUES (3, 'Foxes')");
  try {
    const db = openReadOnly(file);
    assert.equal(db.prepare('SELECT count(*) FROM team').pluck().get(), 3);
    db.close();
  } finally {
    w.close();
  }
});

test(
  'a lock held by another process-level connection ' + 'reaches pool callers as a locked-database input error',
  async () => {
    const file = buildDb('db-sandbox');
    const writer = new Database(file);
    writer.exec('BEGIN EXCLUSIVE; UPDATE team SET name = name;');
    const pool = createSqlPool({ size: 1, spares: 0 });
    try {
      const r = await pool.exec({ db: file, sql: 'SELECT count(*) FROM team' });
      assert.equal(r.ok, false);
      assert.equal(r.openErrorKind, 'locked');
      assert.match(r.error ?? '', /database is locked/);
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
      await pool.close();
    }
  },
);

test('in WAL mode an exclusive writer does not block readers, who see only committed rows', () => {
  const file = buildDb('db-sandbox');
  const w = new Database(file);
  w.pragma('journal_mode = WAL');
  w.exec("BEGIN EXCLUSIVE; INSERT INTO team VALUES (3, 'Foxes');");
  try {
    const db = openReadOnly(file);
    assert.equal(db.prepare('SELECT count(*) FROM team').pluck().get(), 2);
    db.close();
  } finally {
    w.exec('ROLLBACK');
    w.close();
  }
});
