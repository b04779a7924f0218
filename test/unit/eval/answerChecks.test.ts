// Agreement of the Spider 2.0 and BIRD Soft-F1 / R-VES checks with the official scripts, item for item, on the shared
// cases of test/fixtures/answer-checks/answer-checks.json (expected outputs recorded from the official Python
// functions, see its "_how"); plus the pieces the official outputs do not isolate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cell } from '../../../src/core/db/types';
import type { ResultTable } from '../../../src/core/eval/pyValues';
import { spider2Compare } from '../../../src/core/eval/spider2Compare';
import { throughPandasCsv } from '../../../src/core/eval/pandasCsv';
import { softF1 } from '../../../src/core/eval/birdSoftF1';
import { cleanAbnormal, numpySum, rVes, timeRatio, vesReward } from '../../../src/core/eval/birdVes';
import { birdResultEq } from '../../../src/core/eval/resultEq';
import { fixturesDir } from '../../helpers/fixtures';

type JsonCell = null | number | string | { r: number };
interface JsonTable {
  width?: number;
  rows: JsonCell[][];
}
const fixture = JSON.parse(readFileSync(join(fixturesDir, 'answer-checks', 'answer-checks.json'), 'utf8')) as {
  cases: {
    spider2: { note: string; gold: JsonTable[]; pred: JsonTable; standard: Record<string, unknown> }[];
    softF1: { note: string; gold: JsonTable; pred: JsonTable }[];
    ves: { note: string; gold: JsonTable; pred: JsonTable; goldTimes: number[]; predTimes: number[] }[];
  };
  expected: { spider2: number[]; softF1: number[]; ves: number[]; vesTotal: number };
};

/** A fixture table as the SQL runner returns it: REAL cells are numbers in a column marked float (no INTEGER). */
function table(t: JsonTable): ResultTable {
  const width = t.width ?? t.rows[0]?.length ?? 0;
  const rows: Cell[][] = t.rows.map((r) => r.map((c) => (c !== null && typeof c === 'object' ? c.r : c)));
  const floatColumns = Array.from({ length: width }, (_, i) => {
    const cells = t.rows.map((r) => r[i]);
    const real = cells.some((c) => c !== null && typeof c === 'object');
    const integer = cells.some((c) => typeof c === 'number');
    return real && !integer;
  });
  return { rows, floatColumns };
}

test('spider2: every case scores as the official compare_pandas_table does', () => {
  const got = fixture.cases.spider2.map((c) => {
    const std = {
      conditionCols: c.standard.condition_cols as number[] | undefined,
      ignoreOrder: (c.standard.ignore_order as boolean | undefined) ?? false,
    };
    return spider2Compare(c.gold.map(table), table(c.pred), std) === 'match' ? 1 : 0;
  });
  const wrong = got.flatMap((g, i) =>
    g === fixture.expected.spider2[i] ? [] : [`${i} ${fixture.cases.spider2[i].note}: ${g}`],
  );
  assert.deepEqual(wrong, []);
  assert.equal(got.length, fixture.expected.spider2.length);
});

test('bird soft-F1: every case scores as the official calculate_f1_score does', () => {
  fixture.cases.softF1.forEach((c, i) => {
    const got = softF1(table(c.gold).rows, table(c.pred).rows);
    assert.ok(Math.abs(got - fixture.expected.softF1[i]) < 1e-12, `${i} ${c.note}: ${got}`);
  });
});

test('bird R-VES: the correctness gate and reward tier of every case agree with iterated_execute_sql', () => {
  const rewards = fixture.cases.ves.map((c, i) => {
    const correct = birdResultEq(table(c.gold), table(c.pred)) === 'match';
    const r = vesReward(correct, correct ? timeRatio(c.goldTimes, c.predTimes) : 0);
    assert.equal(r, fixture.expected.ves[i], `${i} ${c.note}`);
    return r;
  });
  assert.ok(Math.abs(rVes(rewards) - fixture.expected.vesTotal) < 1e-9);
});

test('pandas CSV trip: text that looks numeric becomes a number, NA spellings become NaN', () => {
  const f = throughPandasCsv([['007'], ['NA'], ['1.5']], 1, [false]);
  assert.deepEqual(f.dtypes, ['float']);
  assert.deepEqual(
    f.columns[0].map((v) => (v.k === 'float' ? v.n : null)),
    [7, Number.NaN, 1.5],
  );
  assert.deepEqual(throughPandasCsv([['a'], [1]], 1, [false]).columns[0], [
    { k: 'str', s: 'a' },
    { k: 'str', s: '1' },
  ]);
});

test('R-VES: outliers at 3 standard deviations or more are dropped; the tiers cut at 2, 1, 0.5, 0.25', () => {
  const kept = cleanAbnormal([...Array(19).fill(1), 100]);
  assert.equal(kept.length, 19);
  assert.deepEqual(
    [2, 1.99, 1, 0.5, 0.49, 0.25, 0.2].map((r) => vesReward(true, r)),
    [1.25, 1, 1, 0.75, 0.5, 0.5, 0.25],
  );
  assert.equal(vesReward(false, 3), 0);
  assert.ok(Number.isNaN(timeRatio([1, 1], [1, 1])));
});

test("R-VES: sums round as numpy's pairwise sum does (np.sum gives 134.55, a plain loop 134.55000000000007)", () => {
  const xs = Array.from({ length: 300 }, (_, i) => 0.1 * (i % 7) + 1e-3 * i);
  assert.equal(numpySum(xs), 134.55);
  assert.equal(
    xs.reduce((a, b) => a + b, 0),
    134.55000000000007,
  );
});
