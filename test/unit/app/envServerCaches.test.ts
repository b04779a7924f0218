// What `quarry serve-env` remembers between requests, on real SQLite files over a real loopback socket: the rewards'
// shared executions and analyses are dropped when a database changes on disk (its file rewritten, or a commit into its
// -wal), a gold SQL that failed is run again once the database can answer it, concurrent rewards on different
// databases never take each other's results, and the --db-dir confinement asks the file system on every request (a
// name answered once is refused once its folder becomes a link out of the roots).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startEnvServer, type EnvServer } from '../../../src/app/envService/server';
import { tempDir } from '../../helpers/fixtures';

const root = tempDir();
const outside = tempDir();
let server: EnvServer;

/** ROOT/<id>/<id>.sqlite with table t(x) holding `x`, in the given journal mode. */
function makeDb(dir: string, id: string, x: number, journal: 'delete' | 'wal' = 'delete'): string {
  mkdirSync(join(dir, id), { recursive: true });
  const path = join(dir, id, `${id}.sqlite`);
  const db = new Database(path);
  try {
    db.pragma(`journal_mode = ${journal}`);
    db.exec(`CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (${x})`);
  } finally {
    db.close();
  }
  return path;
}

before(async () => {
  makeDb(root, 'a', 1);
  makeDb(root, 'b', 2);
  makeDb(root, 'w', 1, 'wal');
  makeDb(root, 'late', 1);
  makeDb(outside, 'late', 99);
  server = await startEnvServer({ dbDirs: [root] });
});
after(async () => {
  await server.close();
});

async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** The skyrl panel's exec term for predSql against goldSql on `db`: 1 when the results match, else 0. */
async function exec(db: string, goldSql: string, predSql: string): Promise<{ value: number; explanation: string }> {
  const r = await post('/v1/reward', { panel: 'skyrl', db, goldSql, predSql });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const term = r.body.terms.find((t: { name: string }) => t.name === 'exec');
  return { value: term.value, explanation: term.explanation };
}

/** Writes to a database as another program would, with its own connection. */
function write(path: string, sql: string): void {
  const db = new Database(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

test('a database rewritten on disk is read again: the reward follows its new content', async () => {
  const path = join(root, 'a', 'a.sqlite');
  assert.equal((await exec('a', 'SELECT x FROM t', 'SELECT 1')).value, 1);
  assert.equal((await exec('a', 'SELECT x FROM t', 'SELECT 5')).value, 0);
  write(path, 'UPDATE t SET x = 5');
  assert.equal((await exec('a', 'SELECT x FROM t', 'SELECT 5')).value, 1, 'the gold result read before the change');
  assert.equal((await exec('a', 'SELECT x FROM t', 'SELECT 1')).value, 0);
});

test('a commit into the -wal of a WAL database is seen before any checkpoint', async () => {
  const path = join(root, 'w', 'w.sqlite');
  assert.equal((await exec('w', 'SELECT x FROM t', 'SELECT 1')).value, 1);
  const db = new Database(path);
  try {
    db.pragma('wal_autocheckpoint = 0');
    db.exec('UPDATE t SET x = 7');
    // The writer stays open, so its commit is only in the -wal; the main file is untouched.
    assert.equal((await exec('w', 'SELECT x FROM t', 'SELECT 7')).value, 1);
  } finally {
    db.close();
  }
});

test('a gold SQL that fails is run again once the database can answer it', async () => {
  const path = join(root, 'b', 'b.sqlite');
  const first = await exec('b', 'SELECT y FROM u', 'SELECT 3');
  assert.equal(first.value, 0);
  assert.match(first.explanation, /^gold SQL failed/);
  // Asked again unchanged, it fails the same way (cached or not, the answer is the database's).
  assert.match((await exec('b', 'SELECT y FROM u', 'SELECT 3')).explanation, /^gold SQL failed/);
  write(path, 'CREATE TABLE u(y INTEGER); INSERT INTO u VALUES (3)');
  const later = await exec('b', 'SELECT y FROM u', 'SELECT 3');
  assert.equal(later.value, 1, later.explanation);
});

test('concurrent rewards on different databases each get their own, before and after one changes', async () => {
  const c = makeDb(root, 'c', 10);
  const d = makeDb(root, 'd', 20);
  const round = async (expect: Record<string, number>) => {
    const asks = Array.from({ length: 40 }, (_, i) => {
      const db = i % 2 === 0 ? 'c' : 'd';
      // The same SQL texts on both databases: only the database tells the answers apart.
      return exec(db, 'SELECT x FROM t', `SELECT ${i % 4 < 2 ? expect.c : expect.d}`).then((r) => ({ db, i, r }));
    });
    for (const { db, i, r } of await Promise.all(asks)) {
      const predicted = i % 4 < 2 ? expect.c : expect.d;
      assert.equal(r.value, predicted === expect[db] ? 1 : 0, `request ${i} on ${db}: ${r.explanation}`);
    }
  };
  await round({ c: 10, d: 20 });
  write(c, 'UPDATE t SET x = 30');
  await round({ c: 30, d: 20 });
  write(d, 'UPDATE t SET x = 40');
  await round({ c: 30, d: 40 });
});

test('--db-dir confinement is asked on every request: a folder swapped for a link out is refused', async () => {
  assert.equal((await exec('late', 'SELECT x FROM t', 'SELECT 1')).value, 1);
  // The same name now leads out of the roots, to a database that would answer 99.
  renameSync(join(root, 'late'), join(root, 'late-moved'));
  symlinkSync(join(outside, 'late'), join(root, 'late'));
  const refused = await post('/v1/reward', {
    panel: 'skyrl',
    db: 'late',
    goldSql: 'SELECT x FROM t',
    predSql: 'SELECT 99',
  });
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.equal(refused.body.error.kind, 'outside-roots');
  // Gone altogether: not found; back in the roots: answered again.
  rmSync(join(root, 'late'));
  const missing = await post('/v1/execute', { db: 'late', sql: 'SELECT x FROM t' });
  assert.equal(missing.body.error.kind, 'not-found');
  renameSync(join(root, 'late-moved'), join(root, 'late'));
  assert.equal((await exec('late', 'SELECT x FROM t', 'SELECT 1')).value, 1);
});
