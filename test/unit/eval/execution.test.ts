// Tests of eval/execution: spider: row order matters only when the gold query has ORDER BY; spider: DISTINCT is
// removed from both queries, columns may be permuted, 1 equals 1.0
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createSqlPool } from '../../../src/core/db';
import { evaluateExecution, type EvalItem } from '../../../src/core/eval/execution';
import { evalMode } from '../../../src/core/eval/modes';
import { runEval } from '../../../src/core/eval/runEval';
import { noSpiderScorer } from '../../../src/core/eval/spiderHooks';
import { buildDb, tempDir } from '../../helpers/fixtures';

// <dir>/shop/shop.sqlite, and a test suite <dir>/suite/ holding the shop database and a variant of it.
const dbDir = tempDir('quarry-eval-');
for (const id of ['shop', 'suite']) mkdirSync(join(dbDir, id));
buildDb('eval-shop', { dir: join(dbDir, 'shop'), file: 'shop.sqlite' });
buildDb('eval-shop', { dir: join(dbDir, 'suite'), file: 'suite.sqlite' });
buildDb('eval-shop-variant', { dir: join(dbDir, 'suite'), file: 'suite_variant.sqlite' });

const pool = createSqlPool({ size: 2 });
after(() => pool.close());
const run = (reqs: Parameters<typeof pool.execBatch>[0]) => pool.execBatch(reqs);

async function verdicts(
  mode: string,
  pairs: [gold: string, pred: string | undefined, dbId?: string][],
  timeoutMs = 5000,
) {
  const items: EvalItem[] = pairs.map(([gold, pred, dbId], index) => ({ index, dbId: dbId ?? 'shop', gold, pred }));
  return evaluateExecution(items, { mode: evalMode(mode), dbDir, timeoutMs, run });
}

test('spider: row order matters only when the gold query has ORDER BY', async () => {
  const v = await verdicts('spider', [
    ['SELECT name FROM item ORDER BY id', 'SELECT name FROM item ORDER BY id DESC'],
    ['SELECT name FROM item', 'SELECT name FROM item ORDER BY id DESC'],
    ['SELECT name FROM item ORDER BY id', 'SELECT name FROM item ORDER BY id'],
  ]);
  assert.deepEqual(
    v.map((x) => x.reason),
    ['order', 'match', 'match'],
  );
  assert.deepEqual(
    v.map((x) => x.exec),
    [false, true, true],
  );
});

test('spider: DISTINCT is removed from both queries, columns may be permuted, 1 equals 1.0', async () => {
  const v = await verdicts('spider', [
    ['SELECT DISTINCT tag FROM item', 'SELECT tag FROM item'],
    ['SELECT name, qty FROM item', 'SELECT qty, name FROM item'],
    ['SELECT price FROM item WHERE id = 1', 'SELECT qty - 2 FROM item WHERE id = 1'],
    ['SELECT tag FROM item WHERE id = 4', 'SELECT NULL'],
  ]);
  assert.deepEqual(
    v.map((x) => x.reason),
    ['match', 'match', 'match', 'match'],
  );
});

test('bird: set semantics — duplicates ignored, but column order and DISTINCT are taken as written', async () => {
  const v = await verdicts('bird', [
    ['SELECT DISTINCT name FROM item', 'SELECT name FROM item'],
    ['SELECT name, qty FROM item', 'SELECT qty, name FROM item'],
    ['SELECT name FROM item ORDER BY id', 'SELECT name FROM item ORDER BY id DESC'],
  ]);
  assert.deepEqual(
    v.map((x) => x.reason),
    ['match', 'values', 'match'],
  );
});

test('spider: every *.sqlite of a test suite must agree', async () => {
  const v = await verdicts('spider', [
    // Equal on suite.sqlite (leek costs 1.0 there) but not on suite_variant.sqlite.
    ['SELECT name FROM item WHERE price = 1.0', "SELECT name FROM item WHERE name IN ('apple', 'leek')", 'suite'],
    ['SELECT name FROM item WHERE price = 1.0', 'SELECT name FROM item WHERE price < 2', 'suite'],
  ]);
  assert.equal(v[0].exec, false);
  assert.equal(v[0].reason, 'row-count');
  assert.match(v[0].detail ?? '', /suite_variant\.sqlite/);
  assert.equal(v[1].exec, true);
});

test(
  'errors: prediction error, gold error, empty and missing ' + 'predictions are all scored wrong with their reason',
  async () => {
    const v = await verdicts('spider', [
      ['SELECT name FROM item', 'SELECT nope FROM item'],
      ['SELECT nope FROM item', 'SELECT name FROM item'],
      ['SELECT name FROM item', ''],
      ['SELECT name FROM item', undefined],
    ]);
    assert.deepEqual(
      v.map((x) => [x.exec, x.reason]),
      [
        [false, 'pred-error'],
        [false, 'gold-error'],
        [false, 'empty-prediction'],
        [false, 'missing-prediction'],
      ],
    );
    assert.match(v[0].detail ?? '', /no such column: nope/);
  },
);

const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c';

test('a runaway prediction and a runaway gold query are told apart', async () => {
  const v = await verdicts(
    'omnisql',
    [
      ['SELECT count(*) FROM item', RUNAWAY],
      [RUNAWAY, 'SELECT count(*) FROM item'],
    ],
    300,
  );
  assert.deepEqual(
    v.map((x) => [x.exec, x.reason]),
    [
      [false, 'pred-timeout'],
      [false, 'gold-timeout'],
    ],
  );
});

test('runEval warns about empty gold results, gold timeouts and a prediction file of the wrong length', async () => {
  const gold = [
    { sql: "SELECT name FROM item WHERE tag = 'meat'", dbId: 'shop', line: 1 },
    { sql: RUNAWAY, dbId: 'shop', line: 2 },
    { sql: 'SELECT count(*) FROM item', dbId: 'shop', line: 3 },
  ];
  const report = await runEval(gold, ['SELECT name FROM item WHERE id > 99', 'SELECT 1'], {
    mode: evalMode('spider'),
    etype: 'exec',
    dbDir,
    timeoutMs: 300,
    run,
    scorer: noSpiderScorer,
  });
  assert.deepEqual(
    report.items.map((i) => [i.index, i.exec, i.reason]),
    [
      [0, true, 'match'],
      [1, false, 'gold-timeout'],
      [2, false, 'missing-prediction'],
    ],
  );
  const w = report.totals.warnings.join('\n');
  assert.match(w, /LENGTH MISMATCH: 2 predictions for 3 gold/);
  assert.match(w, /1 items have an EMPTY gold result.*: 0$/m);
  assert.match(w, /1 gold queries TIMED OUT.*: 1$/m);
  assert.equal(report.totals.exec, 1 / 3);
  assert.deepEqual(report.totals.reasons, { match: 1, 'gold-timeout': 1, 'missing-prediction': 1 });
});
