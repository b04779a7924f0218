// Tests of eval/disagreement: each category is named from the two result tables; agreeing verdicts need no reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Cell } from '../../../src/core/db/types';
import { classifyDisagreement } from '../../../src/core/eval/disagreement';

const t = (rows: Cell[][]) => ({ rows, floatColumns: rows[0]?.map(() => false) ?? [] });
const verdicts = {
  a: { mode: 'spider', exec: true, reason: 'match' },
  b: { mode: 'bird', exec: false, reason: 'values' },
};
const classify = (gold: Cell[][], pred: Cell[][], sql = { gold: 'SELECT a FROM t', pred: 'SELECT a FROM t' }) =>
  classifyDisagreement({ ...sql, goldResult: t(gold), predResult: t(pred), ...verdicts });

test('agreeing verdicts have no category', () => {
  assert.deepEqual(
    classifyDisagreement({ gold: '', pred: '', goldResult: null, predResult: null, a: verdicts.a, b: verdicts.a }),
    [],
  );
});

test('order, duplicates, column order, extra columns, tolerance are told apart', () => {
  assert.deepEqual(classify([[1], [2]], [[2], [1]]), ['order']);
  assert.deepEqual(classify([[1], [2]], [[1], [1], [2]]), ['duplicates']);
  assert.deepEqual(
    classify(
      [
        [1, 'a'],
        [2, 'b'],
      ],
      [
        ['a', 1],
        ['b', 2],
      ],
    ),
    ['column-order'],
  );
  assert.deepEqual(
    classify(
      [[1], [2]],
      [
        [1, 'x'],
        [2, 'y'],
      ],
    ),
    ['extra-columns'],
  );
  assert.deepEqual(classify([[1.5]], [[1.505]]), ['tolerance']);
  assert.deepEqual(classify([[1]], [[7]]), ['other']);
});

test('DISTINCT in a query, a timeout, and ORDER BY … LIMIT ties are named', () => {
  assert.deepEqual(
    classify([[1], [2]], [[1], [1], [2]], { gold: 'SELECT DISTINCT a FROM t', pred: 'SELECT a FROM t' }),
    ['distinct', 'duplicates'],
  );
  assert.deepEqual(
    classify([['x']], [['y']], {
      gold: 'SELECT n FROM t ORDER BY s LIMIT 1',
      pred: 'SELECT n FROM t ORDER BY s LIMIT 1',
    }),
    ['ties'],
  );
  assert.deepEqual(
    classifyDisagreement({
      gold: 'SELECT 1',
      pred: 'SELECT 1',
      goldResult: null,
      predResult: null,
      a: { mode: 'spider', exec: false, reason: 'pred-timeout' },
      b: { mode: 'bird', exec: true, reason: 'match' },
    }),
    ['timeout'],
  );
});
