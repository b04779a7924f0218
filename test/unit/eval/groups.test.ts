// Eval groups: a gold query and the predictions judged against it run on one SQL worker, which sends back verdicts
// instead of rows (SqlPool.execGroups, core/eval/judge.ts). The verdicts must be those of running every statement
// and judging in this process; each statement keeps its own time limit; a group cut short by a timeout is finished.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createSqlPool } from '../../../src/core/db';
import type { ExecRequest } from '../../../src/core/db/types';
import { evaluateExecution, type EvalItem } from '../../../src/core/eval/execution';
import { evalMode } from '../../../src/core/eval/modes';
import { buildDb, tempDir } from '../../helpers/fixtures';

const dbDir = tempDir('quarry-eval-groups-');
for (const id of ['shop', 'suite']) mkdirSync(join(dbDir, id));
buildDb('eval-shop', { dir: join(dbDir, 'shop'), file: 'shop.sqlite' });
buildDb('eval-shop', { dir: join(dbDir, 'suite'), file: 'suite.sqlite' });
buildDb('eval-shop-variant', { dir: join(dbDir, 'suite'), file: 'suite_variant.sqlite' });
const shop = join(dbDir, 'shop', 'shop.sqlite');

const pool = createSqlPool({ size: 2, pipeline: 4, spares: 0 });
after(() => pool.close());

const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c';

/** Items over the shop databases: every comparison outcome, errors, a multi-database suite, shared golds. */
const CASES: [gold: string, pred: string | undefined, dbId?: string][] = [
  ['SELECT name FROM item ORDER BY id', 'SELECT name FROM item ORDER BY id DESC'],
  ['SELECT name FROM item', 'SELECT name FROM item ORDER BY id DESC'],
  ['SELECT name FROM item', 'SELECT name FROM item'],
  ['SELECT DISTINCT tag FROM item', 'SELECT tag FROM item'],
  ['SELECT name, qty FROM item', 'SELECT qty, name FROM item'],
  ['SELECT name, qty FROM item', 'SELECT name FROM item'],
  ['SELECT name, qty FROM item', 'SELECT name, qty FROM item WHERE id < 3'],
  ['SELECT name, qty FROM item', 'SELECT nope FROM item'],
  ['SELECT name, qty FROM item', 'SELECT name, qty FROM item'],
  ['SELECT nope FROM item', 'SELECT name FROM item'],
  ["SELECT name FROM item WHERE tag = 'meat'", 'SELECT name FROM item WHERE id > 99'],
  ['SELECT name FROM item WHERE price = 1.0', "SELECT name FROM item WHERE name IN ('apple', 'leek')", 'suite'],
  ['SELECT name FROM item WHERE price = 1.0', 'SELECT name FROM item WHERE price < 2', 'suite'],
  ['SELECT name FROM item', ''],
  ['SELECT name FROM item', undefined],
];
const items = (cases: typeof CASES): EvalItem[] =>
  cases.map(([gold, pred, dbId], index) => ({ index, dbId: dbId ?? 'shop', gold, pred }));

test('verdicts judged in the workers equal those of running every statement and judging here', async () => {
  for (const mode of ['spider', 'bird']) {
    const opts = { mode: evalMode(mode), dbDir, timeoutMs: 5000, run: (r: ExecRequest[]) => pool.execBatch(r) };
    const here = await evaluateExecution(items(CASES), opts);
    const inWorkers = await evaluateExecution(items(CASES), { ...opts, runGroups: (g) => pool.execGroups(g) });
    assert.deepEqual(inWorkers, here, mode);
    // Not all the same verdict: the cases exercise the comparator.
    assert.ok(new Set(here.map((v) => v.reason)).size >= 5, JSON.stringify(here.map((v) => v.reason)));
  }
});

test('a group: one value per statement, and it stops after a gold query that fails', async () => {
  const req = (sql: string): ExecRequest => ({ db: shop, sql, timeoutMs: 5000, maxRows: Infinity });
  const params = { mode: 'spider', orderMatters: false };
  const [ok, failed] = await pool.execGroups([
    {
      kind: 'eval',
      reqs: [req('SELECT name FROM item'), req('SELECT name FROM item ORDER BY id DESC'), req('SELECT 1')],
      params,
    },
    { kind: 'eval', reqs: [req('SELECT nope FROM item'), req('SELECT name FROM item')], params },
  ]);
  assert.equal(ok.stopped, undefined);
  assert.deepEqual(ok.values, [
    { ok: true, errorClass: null, error: null, empty: false, trivial: false },
    { ok: true, errorClass: null, error: null, outcome: 'match' },
    { ok: true, errorClass: null, error: null, outcome: 'row-count' },
  ]);
  assert.equal(failed.values.length, 1);
  assert.deepEqual(failed.values[0], {
    ok: false,
    errorClass: 'sql',
    error: 'no such column: nope',
    empty: false,
    trivial: false,
  });
});

test('a statement past its limit stops its group, naming it; the rest of the group runs again', async () => {
  const req = (sql: string): ExecRequest => ({ db: shop, sql, timeoutMs: 300, maxRows: Infinity });
  const [cut] = await pool.execGroups([
    {
      kind: 'eval',
      reqs: [req('SELECT name FROM item'), req(RUNAWAY), req('SELECT name FROM item')],
      params: { mode: 'spider', orderMatters: false },
    },
  ]);
  assert.equal(cut.values.length, 1);
  assert.equal(cut.stopped?.errorClass, 'timeout');

  // Through the evaluator: the predictions after the runaway one (same gold, so the same group) are still judged.
  const v = await evaluateExecution(
    items([
      ['SELECT name FROM item', RUNAWAY],
      ['SELECT name FROM item', 'SELECT name FROM item ORDER BY id DESC'],
      ['SELECT name FROM item', 'SELECT name FROM item WHERE id < 3'],
      [RUNAWAY, 'SELECT name FROM item'],
    ]),
    {
      mode: evalMode('omnisql'),
      dbDir,
      timeoutMs: 300,
      run: () => Promise.reject(new Error('statements go through groups here')),
      runGroups: (g) => pool.execGroups(g),
    },
  );
  assert.deepEqual(
    v.map((x) => [x.exec, x.reason]),
    [
      [false, 'pred-timeout'],
      [true, 'match'],
      [false, 'values'],
      [false, 'gold-timeout'],
    ],
  );
});

test('a gold query runs once per group; equal predictions run once; a full group starts another', async () => {
  const ran: string[] = [];
  const run = async (reqs: ExecRequest[]) => {
    ran.push(...reqs.map((r) => r.sql));
    return pool.execBatch(reqs);
  };
  const gold = 'SELECT name FROM item';
  const preds = ['SELECT name FROM item WHERE id < 2', 'SELECT name FROM item WHERE id < 3', gold];
  const cases: typeof CASES = [...preds, ...preds, 'SELECT name FROM item WHERE id < 4'].map((p) => [gold, p]);
  const v = await evaluateExecution(items(cases), {
    mode: evalMode('spider'),
    dbDir,
    timeoutMs: 5000,
    run,
    groupPreds: 2,
  });
  assert.deepEqual(
    v.map((x) => x.exec),
    [false, false, true, false, false, true, false],
  );
  // Group 1: the gold and the two distinct predictions; group 2 (full group 1): the gold again and the third one.
  assert.equal(ran.filter((s) => s === gold).length, 2);
  assert.equal(ran.length, 5);
});
