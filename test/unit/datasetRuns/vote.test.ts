// Tests of datasetRuns/vote: the largest group of equal results wins; failed samples cast no vote; ties go to the
// group whose first member has the lowest sample index
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { majorityVote, passAtK, passAtKEstimate, sameResultIn, type VoteBallot } from '../../../src/core/eval/vote';
import { evalMode } from '../../../src/core/eval/modes';
import type { Cell } from '../../../src/core/db/types';

const table = (rows: Cell[][], floats?: boolean[]): VoteBallot => ({
  rows,
  floatColumns: floats ?? (rows[0] ?? []).map(() => false),
});
const spiderSame = sameResultIn(evalMode('spider'));
const birdSame = sameResultIn(evalMode('bird'));

test('the largest group of equal results wins; failed samples cast no vote', () => {
  const a = table([[1], [2]]);
  const b = table([[3]]);
  const out = majorityVote([b, null, a, table([[2], [1]]), null, table([[1], [2]])], spiderSame);
  assert.equal(out.winner, 2, 'rows as a multiset: [[1],[2]] and [[2],[1]] agree, three votes against one');
  assert.deepEqual(out.groups, [[2, 3, 5], [0]]);
});

test('ties go to the group whose first member has the lowest sample index', () => {
  const x = table([['x']]),
    y = table([['y']]);
  assert.deepEqual(majorityVote([x, y, y, x], spiderSame), {
    winner: 0,
    groups: [
      [0, 3],
      [1, 2],
    ],
  });
  assert.deepEqual(majorityVote([null, y, x, x, y], spiderSame), {
    winner: 1,
    groups: [
      [1, 4],
      [2, 3],
    ],
  });
  // Three singletons: the first executed sample wins.
  assert.equal(majorityVote([null, table([[1]]), table([[2]]), table([[3]])], spiderSame).winner, 1);
});

test('all samples failing gives no winner; K = 1 votes for the only sample when it executed', () => {
  assert.deepEqual(majorityVote([null, null, null], spiderSame), { winner: null, groups: [] });
  assert.deepEqual(majorityVote([], spiderSame), { winner: null, groups: [] });
  assert.deepEqual(majorityVote([table([[7]])], spiderSame), { winner: 0, groups: [[0]] });
  assert.deepEqual(majorityVote([null], spiderSame), { winner: null, groups: [] });
});

test(
  "equality is the mode's comparator: spider permutes columns and counts duplicates, bird compares sets of " + 'tuples',
  () => {
    const ab = table([
      [1, 'a'],
      [2, 'b'],
    ]);
    const ba = table([
      ['a', 1],
      ['b', 2],
    ]);
    const dup = table([
      [1, 'a'],
      [1, 'a'],
      [2, 'b'],
    ]);
    assert.equal(spiderSame(ab!, ba!), true);
    assert.equal(birdSame(ab!, ba!), false);
    assert.equal(spiderSame(ab!, dup!), false);
    assert.equal(birdSame(ab!, dup!), true);
    // Python semantics: 1 == 1.0, '1' != 1; two empty results agree.
    assert.equal(spiderSame(table([[1]])!, table([[1.0]], [true])!), true);
    assert.equal(spiderSame(table([[1]])!, table([['1']])!), false);
    assert.equal(spiderSame(table([])!, table([])!), true);
    assert.deepEqual(majorityVote([ba, ab, dup], birdSame).groups, [[1, 2], [0]]);
    assert.deepEqual(majorityVote([ba, ab, dup], spiderSame).groups, [[0, 1], [2]]);
  },
);

test('pass@K is any correct sample', () => {
  assert.equal(passAtK([false, false, true]), true);
  assert.equal(passAtK([false, false]), false);
  assert.equal(passAtK([true]), true);
  assert.equal(passAtK([]), false);
});

test('unbiased pass@k estimator matches 1 - C(n-c,k)/C(n,k)', () => {
  const choose = (n: number, k: number): number => (k < 0 || k > n ? 0 : k === 0 ? 1 : (choose(n - 1, k - 1) * n) / k);
  for (const [n, c, k] of [
    [8, 0, 1],
    [8, 1, 1],
    [8, 3, 2],
    [10, 5, 5],
    [6, 1, 6],
    [20, 2, 8],
    [5, 5, 3],
  ]) {
    const exact = 1 - choose(n - c, k) / choose(n, k);
    assert.ok(
      Math.abs(passAtKEstimate(n, c, k) - exact) < 1e-12,
      `n=${n} c=${c} k=${k}: ${passAtKEstimate(n, c, k)} vs ${exact}`,
    );
  }
  assert.ok(Math.abs(passAtKEstimate(8, 3, 1) - 3 / 8) < 1e-12, 'pass@1 is the fraction correct');
  assert.equal(passAtKEstimate(4, 0, 4), 0);
  assert.equal(passAtKEstimate(4, 1, 4), 1);
  assert.throws(() => passAtKEstimate(3, 4, 1), RangeError);
  assert.throws(() => passAtKEstimate(3, 1, 4), RangeError);
  assert.throws(() => passAtKEstimate(0, 0, 1), RangeError);
});
