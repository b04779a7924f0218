// A pool with `pipeline` > 1 hands a worker several statements at once (exec-batch, eval). Every safety property of
// one-at-a-time dispatch must hold: a timeout kills the statement that was running and no other, statements queued
// behind a killed, crashed or cancelled one still run, and a statement's budget does not include the time it
// waited behind another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db';
import { buildDb } from '../../helpers/fixtures';

const db = buildDb('db-sandbox');
const forever = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
/** Finishes, after a few hundred milliseconds or more (ten million recursive steps). */
const slow =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) ' + 'SELECT count(*) FROM c';

test('a timeout stops the statement that ran past its budget; the ones queued behind it run elsewhere', async () => {
  const pool = createSqlPool({ size: 1, spares: 1, pipeline: 4 });
  try {
    const before = pool.pids()[0];
    const results = await pool.execBatch([
      { db, sql: 'SELECT 1' },
      { db, sql: forever, timeoutMs: 300 },
      { db, sql: 'SELECT 2' },
      { db, sql: 'SELECT 3' },
    ]);
    assert.deepEqual(
      results.map((r) => r.errorClass),
      [null, 'timeout', null, null],
    );
    assert.deepEqual(
      [results[0], results[2], results[3]].map((r) => r.rows[0][0]),
      [1, 2, 3],
    );
    assert.match(results[1].error ?? '', /timed out after 300 ms/);
    assert.notEqual(pool.pids()[0], before, 'the worker that ran it was replaced');
  } finally {
    await pool.close();
  }
});

test('a statement queued behind a slow one gets its whole budget once it starts', async () => {
  const pool = createSqlPool({ size: 1, spares: 0, pipeline: 2 });
  try {
    const [first, second] = await pool.execBatch([
      { db, sql: slow, timeoutMs: 60_000 },
      { db, sql: 'SELECT 42', timeoutMs: 200 },
    ]);
    assert.deepEqual(first.rows, [[10_000_000]], first.error ?? '');
    assert.ok(first.ms > 200, `the slow statement took ${first.ms} ms: too fast to show anything`);
    assert.equal(second.errorClass, null, second.error ?? '');
    assert.deepEqual(second.rows, [[42]]);
  } finally {
    await pool.close();
  }
});

test('cancelling a statement queued on a busy worker rejects it; the others still finish', async () => {
  const pool = createSqlPool({ size: 1, spares: 1, pipeline: 3 });
  try {
    const ac = new AbortController();
    const head = pool.exec({ db, sql: slow, timeoutMs: 60_000 });
    const queued = pool.exec({ db, sql: 'SELECT 2' }, ac.signal);
    const last = pool.exec({ db, sql: 'SELECT 3' });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(queued, { name: 'AbortError' });
    assert.deepEqual((await head).rows, [[10_000_000]]);
    assert.deepEqual((await last).rows, [[3]]);
  } finally {
    await pool.close();
  }
});

test('a worker killed from outside: its running statement fails, those queued behind it run on the spare', async () => {
  const pool = createSqlPool({ size: 1, spares: 1, pipeline: 3 });
  try {
    assert.equal((await pool.exec({ db, sql: 'SELECT 1' })).ok, true);
    const [runner] = pool.pids();
    const batch = pool.execBatch([
      { db, sql: forever, timeoutMs: 60_000 },
      { db, sql: 'SELECT 2' },
      { db, sql: 'SELECT 3' },
    ]);
    await new Promise((res) => setTimeout(res, 150));
    process.kill(runner, 'SIGKILL');
    const [killed, two, three] = await batch;
    assert.match(killed.error ?? '', /worker process stopped while running this statement \(SIGKILL\)/);
    assert.deepEqual([two.rows, three.rows], [[[2]], [[3]]]);
  } finally {
    await pool.close();
  }
});
