// Tests of db/pool: results carry columns, typed cells and exact big integers; SQL errors read as SQLite words them
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool, ROW_COUNT_CEILING } from '../../../src/core/db';
import { buildDb, tempDir } from '../../helpers/fixtures';

const db = buildDb('db-sandbox');
const forever = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A SIGKILLed child lingers as a zombie until Node reaps it; give that a moment. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((res) => setTimeout(res, 20));
  return !alive(pid);
}

const pool = createSqlPool({ size: 2 });
after(() => pool.close());

test('results carry columns, typed cells and exact big integers', async () => {
  const r = await pool.exec({ db, sql: 'SELECT id, name, rating, big, photo FROM player ORDER BY id' });
  assert.equal(r.ok, true, r.error ?? '');
  assert.deepEqual(r.columns, ['id', 'name', 'rating', 'big', 'photo']);
  assert.equal(r.rowCount, 3);
  assert.equal(r.truncated, false);
  assert.deepEqual(r.rows[0].slice(0, 3), [1, 'Ada', 7.5]);
  assert.equal(r.rows[0][3], 9007199254740993n);
  assert.deepEqual(Array.from(r.rows[0][4] as Uint8Array), [0, 1, 2, 3]);
  assert.deepEqual(r.rows[1].slice(2), [10, 1, null]);
});

test('SQL errors read as SQLite words them', async () => {
  const [col, syntax, table] = await pool.execBatch([
    { db, sql: 'SELECT nope FROM player' },
    { db, sql: 'SELECT * FROM' },
    { db, sql: 'SELECT * FROM ghosts' },
  ]);
  assert.deepEqual([col.errorClass, col.error], ['sql', 'no such column: nope']);
  assert.deepEqual([syntax.errorClass, syntax.error], ['sql', 'incomplete input']);
  assert.deepEqual([table.errorClass, table.error], ['sql', 'no such table: ghosts']);
});

test('a file that is not a database is an input error, not a crash', async () => {
  const r = await pool.exec({ db: tempDir(), sql: 'SELECT 1' });
  assert.equal(r.ok, false);
  assert.equal(r.openErrorKind, 'directory');
});

test('rows stop at the cap but are still counted; long cells are cut and marked', async () => {
  const r = await pool.exec({ db, sql: 'SELECT n FROM numbers', maxRows: 5 });
  assert.equal(r.rows.length, 5);
  assert.equal(r.rowCount, 200);
  assert.equal(r.truncated, true);
  assert.equal(r.rowCountExact, true);
  const all = await pool.exec({ db, sql: 'SELECT n FROM numbers', maxRows: Infinity });
  assert.equal(all.rows.length, 200);
  assert.equal(all.truncated, false);
  // Statements that cannot be wrapped in a counting subquery are counted by running them again.
  const pragma = await pool.exec({ db, sql: 'PRAGMA table_info(player)', maxRows: 2 });
  assert.deepEqual([pragma.rows.length, pragma.rowCount, pragma.truncated], [2, 6, true]);
  const commented = await pool.exec({ db, sql: 'SELECT n FROM numbers WHERE n > 10; -- the rest', maxRows: 5 });
  assert.deepEqual([commented.rows.length, commented.rowCount, commented.rows[0][0]], [5, 190, 11]);
  const long = await pool.exec({ db, sql: "SELECT printf('%.*c', 5000, 'x') AS s", maxCellChars: 10 });
  assert.equal(long.rows[0][0], 'xxxxxxxxxx…');
  assert.equal(long.truncated, true);
});

test('counting past the cap stops at the documented ceiling', async () => {
  const r = await pool.exec({
    db,
    sql:
      `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT ${ROW_COUNT_CEILING + 10}) ` +
      `SELECT x FROM c`,
    maxRows: 3,
  });
  assert.equal(r.rowCount, ROW_COUNT_CEILING);
  assert.equal(r.rowCountExact, false);
  assert.equal(r.rows.length, 3);
});

test('memory bombs fail as resource errors and the pool keeps answering', async () => {
  const bombs = [
    'SELECT randomblob(2000000000)',
    'SELECT zeroblob(2000000000)',
    "SELECT length(group_concat(printf('%.*c', 1000000, 'x'))) FROM numbers a, numbers b",
    // Each value is legal; together they exceed the worker's memory limit.
    `SELECT ${Array.from({ length: 8 }, () => 'zeroblob(300000000)').join(', ')}`,
  ];
  for (const sql of bombs) {
    const r = await pool.exec({ db, sql, timeoutMs: 20000 });
    assert.equal(r.errorClass, 'resource', `${sql}: ${r.errorClass} ${r.error}`);
  }
  const huge = await pool.exec({
    db,
    sql: 'SELECT a.n, b.n, c.n FROM numbers a, numbers b, numbers c',
    maxRows: Infinity,
    timeoutMs: 20000,
  });
  assert.equal(huge.errorClass, 'resource', `${huge.errorClass} ${huge.error}`);
  assert.match(huge.error ?? '', /result too large/);
  assert.equal((await pool.exec({ db, sql: 'SELECT 1' })).ok, true);
});

test('a runaway query times out within its budget and the pool answers the next query', async () => {
  const before = pool.pids();
  const r = await pool.exec({ db, sql: forever, timeoutMs: 300 });
  assert.equal(r.errorClass, 'timeout');
  assert.match(r.error ?? '', /timed out after 300 ms/);
  const next = await pool.exec({ db, sql: 'SELECT count(*) FROM player' });
  assert.deepEqual(next.rows, [[3]]);
  const killed = before.filter((p) => !pool.pids().includes(p));
  assert.equal(killed.length, 1, 'exactly one worker was replaced');
  assert.equal(await gone(killed[0]), true, 'the killed worker is gone');
});

test('an AbortSignal cancels a running query and kills its worker', async () => {
  const ac = new AbortController();
  const running = pool.exec({ db, sql: forever, timeoutMs: 60000 }, ac.signal);
  setTimeout(() => ac.abort(), 100);
  await assert.rejects(running, { name: 'AbortError' });
  assert.equal((await pool.exec({ db, sql: 'SELECT 1' })).ok, true);
});

test('a worker killed from outside mid-query gives a clear error and the pool recovers', async () => {
  const solo = createSqlPool({ size: 1, spares: 1 });
  try {
    assert.equal((await solo.exec({ db, sql: 'SELECT 1' })).ok, true);
    const [runner, spare] = solo.pids();
    const running = solo.exec({ db, sql: forever, timeoutMs: 60000 });
    await new Promise((res) => setTimeout(res, 150));
    process.kill(runner, 'SIGKILL');
    const r = await running;
    assert.equal(r.ok, false);
    assert.match(r.error ?? '', /worker process stopped while running this statement \(SIGKILL\)/);
    assert.equal(solo.pids()[0], spare, 'the warm spare took over');
    const results = await solo.execBatch([1, 2, 3].map((i) => ({ db, sql: `SELECT ${i}` })));
    assert.deepEqual(
      results.map((x) => x.rows[0][0]),
      [1, 2, 3],
    );
  } finally {
    await solo.close();
  }
});

test('an infinite budget means no timeout rather than an instant one', async () => {
  // Long enough (tens of ms) that a 1 ms timer would have killed it.
  const r = await pool.exec({
    db,
    sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) FROM c',
    timeoutMs: Infinity,
  });
  assert.deepEqual(r.rows, [[300000]], r.error ?? '');
});

test('batch results come back in input order', async () => {
  const reqs = Array.from({ length: 30 }, (_, i) => ({
    db,
    sql: i % 3 === 0 ? `SELECT ${i} FROM numbers WHERE n < 150 ORDER BY random() LIMIT 1` : `SELECT ${i}`,
  }));
  let progress = 0;
  const results = await pool.execBatch(reqs, {
    onProgress: (done) => {
      progress = done;
    },
  });
  assert.deepEqual(
    results.map((r) => r.rows[0][0]),
    reqs.map((_, i) => i),
  );
  assert.equal(progress, 30);
});

test('close() ends every worker process', async () => {
  const p = createSqlPool({ size: 2, spares: 1 });
  await p.exec({ db, sql: 'SELECT 1' });
  const pids = p.pids();
  assert.equal(pids.length, 3);
  await p.close();
  for (const pid of pids) assert.equal(await gone(pid), true, `worker ${pid} still running`);
  await assert.rejects(p.exec({ db, sql: 'SELECT 1' }), /closed/);
});
