// WAL databases and symbolic links (issue 9, item 6): the latest committed rows are read, and nothing is ever created
// beside a user's database (or beside a link to it).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { copyFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSqlPool } from '../../../src/core/db/pool';
import { tempDir } from '../../helpers/fixtures';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const count = async (db: string) => {
  const r = await pool.exec({ db, sql: 'SELECT count(*) FROM t' });
  assert.equal(r.ok, true, r.error ?? '');
  return r.rows[0][0];
};

/**
 * A WAL database with 6 rows checkpointed and a 7th only in its -wal, copied while the writer is open: db + -wal, no
 * -shm.
 */
function walWithoutShm(): { dir: string; db: string } {
  const live = tempDir();
  const src = join(live, 'src.sqlite');
  const w = new Database(src);
  w.pragma('journal_mode = WAL');
  w.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1),(2),(3),(4),(5),(6);');
  w.pragma('wal_checkpoint(TRUNCATE)');
  w.pragma('wal_autocheckpoint = 0');
  w.exec('INSERT INTO t VALUES (7)');
  const dir = tempDir();
  const db = join(dir, 'copy.sqlite');
  copyFileSync(src, db);
  copyFileSync(src + '-wal', db + '-wal');
  w.close();
  return { dir, db };
}

test('a WAL database with a -wal but no -shm: all 7 committed rows read, no -shm created beside it', async () => {
  const { dir, db } = walWithoutShm();
  const before = readdirSync(dir).sort();
  assert.equal(await count(db), 7);
  assert.deepEqual(readdirSync(dir).sort(), before);
});

test(
  'through a symbolic link the -wal beside the real file ' + 'is read; nothing appears beside the link or the target',
  async () => {
    const { dir, db } = walWithoutShm();
    const linkDir = tempDir();
    const link = join(linkDir, 'link.sqlite');
    symlinkSync(db, link);
    writeFileSync(link + '-wal', 'stray bytes beside the link, not a WAL of anything');
    const beforeTarget = readdirSync(dir).sort();
    const beforeLink = readdirSync(linkDir).sort();
    assert.equal(await count(link), 7);
    assert.deepEqual(readdirSync(dir).sort(), beforeTarget);
    assert.deepEqual(readdirSync(linkDir).sort(), beforeLink);
  },
);

test('a long-lived pool sees rows another process commits after its first read', async () => {
  const dir = tempDir();
  const db = join(dir, 'grow.sqlite');
  const setup = new Database(db);
  setup.pragma('journal_mode = WAL');
  setup.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1);');
  setup.close(); // checkpointed: no -wal left, so the pool reads it as an immutable file
  assert.equal(await count(db), 1);
  const writer = new Database(db);
  try {
    writer.exec('INSERT INTO t VALUES (2), (3)');
    assert.equal(await count(db), 3);
    writer.exec('INSERT INTO t VALUES (4)');
    assert.equal(await count(db), 4);
  } finally {
    writer.close();
  }
});
