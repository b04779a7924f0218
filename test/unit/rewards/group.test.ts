// Tests of rewards/group: advantages: (r − mean) / (std + ε) with the sample std by default; advantages:
// zero-variance groups and lone samples give all zeros
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  groupAdvantages,
  isZeroVariance,
  zeroVarianceGroups,
  passAtG,
  passAtK,
  difficultyScore,
  rankHardButSolvable,
  curriculumBins,
  filterTrajectories,
  standardDeviation,
  DEFAULT_ADVANTAGE_EPSILON,
} from '../../../src/core/rewards/group';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} ≉ ${b}`);

test('advantages: (r − mean) / (std + ε) with the sample std by default', () => {
  const r = [1, 0, 0, 1, 1, 0];
  const a = groupAdvantages(r);
  // mean 0.5, sample std sqrt(6·0.25/5) = sqrt(0.3)
  const s = Math.sqrt(0.3);
  r.forEach((x, i) => close(a[i], (x - 0.5) / (s + DEFAULT_ADVANTAGE_EPSILON)));
  const p = groupAdvantages(r, { std: 'population', epsilon: 0 });
  r.forEach((x, i) => close(p[i], (x - 0.5) / 0.5));
  close(
    a.reduce((x, y) => x + y, 0),
    0,
  );
});

test('advantages: zero-variance groups and lone samples give all zeros', () => {
  assert.deepEqual(groupAdvantages([2, 2, 2]), [0, 0, 0]);
  assert.deepEqual(groupAdvantages([5]), [0]);
  assert.deepEqual(groupAdvantages([]), []);
});

test('advantages are invariant to shifting rewards and flip sign when rewards are negated', () => {
  const r = [0.3, -1, 2.5, 0.1];
  const a = groupAdvantages(r);
  groupAdvantages(r.map((x) => x + 7)).forEach((x, i) => close(x, a[i]));
  groupAdvantages(r.map((x) => -x)).forEach((x, i) => close(x, -a[i]));
});

test('zero-variance detection names the groups', () => {
  assert.equal(isZeroVariance([1, 1, 1]), true);
  assert.equal(isZeroVariance([1, 1, 1.5]), false);
  assert.equal(isZeroVariance([0.1 + 0.2, 0.3]), true, 'within the float tolerance');
  const groups = new Map([
    ['q1', [1, 1]],
    ['q2', [0, 1]],
    ['q3', [-1, -1, -1]],
  ]);
  assert.deepEqual(zeroVarianceGroups(groups), ['q1', 'q3']);
  assert.equal(standardDeviation([4]), 0);
});

test('pass@G is the share of correct samples; pass@k the unbiased estimator', () => {
  assert.equal(passAtG(1, 6), 1 / 6);
  assert.equal(passAtG(0, 6), 0);
  assert.equal(passAtG(0, 0), 0);
  assert.throws(() => passAtG(7, 6), /between 0 and total/);
  close(passAtK(6, 1, 1), 1 / 6);
  assert.equal(passAtK(6, 0, 3), 0);
  assert.equal(passAtK(6, 4, 3), 1, 'fewer than k wrong samples: some k-subset always has a correct one');
  close(passAtK(5, 2, 2), 1 - (3 * 2) / (5 * 4));
  assert.throws(() => passAtK(3, 1, 4), /k \(4\)/);
});

test('SQL-Trail S(q): pass@G inside (0, 1), else 1; ranking puts hard-but-solvable first', () => {
  assert.equal(difficultyScore(1 / 6), 1 / 6);
  assert.equal(difficultyScore(0), 1);
  assert.equal(difficultyScore(1), 1);
  const ranked = rankHardButSolvable([
    { id: 'always', correct: 6, total: 6 },
    { id: 'half', correct: 3, total: 6 },
    { id: 'never', correct: 0, total: 6 },
    { id: 'once', correct: 1, total: 6 },
    { id: 'twice', correct: 2, total: 6 },
  ]);
  assert.deepEqual(
    ranked.map((r) => r.id),
    ['once', 'twice', 'half', 'always', 'never'],
  );
  assert.deepEqual(
    ranked.map((r) => r.score),
    [1 / 6, 2 / 6, 3 / 6, 1, 1],
  );
  assert.deepEqual(
    rankHardButSolvable(
      [
        { id: 'a', correct: 2, total: 6 },
        { id: 'b', correct: 1, total: 6 },
      ],
      1,
    ).map((r) => r.id),
    ['b'],
  );
});

test('MTSQL-R1 curriculum: drop s = N, sort by s descending, contiguous bins, level 1 easiest', () => {
  const items = [
    { id: 'a', successes: 20 },
    { id: 'b', successes: 3 },
    { id: 'c', successes: 19 },
    { id: 'd', successes: 0 },
    { id: 'e', successes: 12 },
    { id: 'f', successes: 12 },
  ];
  const bins = curriculumBins(items, { samples: 20, binSize: 2 });
  assert.deepEqual(
    bins.discarded.map((x) => x.id),
    ['a'],
  );
  assert.deepEqual(
    bins.levels.map((l) => l.map((x) => x.id)),
    [['c', 'e'], ['f', 'b'], ['d']],
  );
  assert.equal(curriculumBins(items).levels.length, 1, 'default bin size 2000');
  assert.throws(() => curriculumBins([{ id: 'x', successes: 21 }]), /question x: successes 21/);
});

test('MTIR-SQL filter keeps F > τ (strictly)', () => {
  const items = [{ f: 0.1 }, { f: -0.1 }, { f: 0 }, { f: 0.5 }];
  const { kept, dropped } = filterTrajectories(items, (x) => x.f, 0);
  assert.deepEqual(
    kept.map((x) => x.f),
    [0.1, 0.5],
  );
  assert.deepEqual(
    dropped.map((x) => x.f),
    [-0.1, 0],
  );
});
