// Tests of eval/resultEq: spider: without ORDER BY rows compare as a multiset, with it in order; spider: duplicates
// count (multiset, not set) and row counts must agree
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Cell } from '../../../src/core/db/types';
import { spiderResultEq, birdResultEq } from '../../../src/core/eval/resultEq';
import { pyFloatRepr, pySortKey, cellKey } from '../../../src/core/eval/pyValues';

const t = (rows: Cell[][], floatColumns: boolean[] = []) => ({ rows, floatColumns });

test('spider: without ORDER BY rows compare as a multiset, with it in order', () => {
  const gold = t([
    [1, 'a'],
    [2, 'b'],
  ]);
  const swapped = t([
    [2, 'b'],
    [1, 'a'],
  ]);
  assert.equal(spiderResultEq(gold, swapped, false), 'match');
  assert.equal(spiderResultEq(gold, swapped, true), 'order');
  assert.equal(
    spiderResultEq(
      gold,
      t([
        [1, 'a'],
        [2, 'b'],
      ]),
      true,
    ),
    'match',
  );
});

test('spider: duplicates count (multiset, not set) and row counts must agree', () => {
  assert.equal(spiderResultEq(t([[1], [1], [2]]), t([[1], [2], [2]]), false), 'values');
  assert.equal(spiderResultEq(t([[1], [1]]), t([[1]]), false), 'row-count');
  assert.equal(spiderResultEq(t([]), t([]), false), 'match');
  assert.equal(spiderResultEq(t([]), t([[1]]), false), 'row-count');
});

test("spider: the prediction's columns may be permuted, but the column count must agree", () => {
  const gold = t([
    [1, 'a', null, 2.5],
    [2, 'b', 7, 0.5],
  ]);
  assert.equal(
    spiderResultEq(
      gold,
      t([
        ['a', 2.5, 1, null],
        ['b', 0.5, 2, 7],
      ]),
      false,
    ),
    'match',
  );
  assert.equal(
    spiderResultEq(
      gold,
      t([
        ['a', 2.5, 1, null],
        ['b', 0.5, 2, 8],
      ]),
      false,
    ),
    'values',
  );
  assert.equal(spiderResultEq(t([[1, 'a']]), t([[1]]), false), 'columns');
});

test('spider: the permutation must be one for all rows, not one per row', () => {
  // Each row alone is a permutation of the gold row, but no single column order fits both rows.
  assert.equal(
    spiderResultEq(
      t([
        [1, 2],
        [3, 4],
      ]),
      t([
        [2, 1],
        [3, 4],
      ]),
      false,
    ),
    'values',
  );
});

test("Python values: 1 == 1.0, None == None, '1' != 1, bytes != str", () => {
  assert.equal(spiderResultEq(t([[1, null]]), t([[1.0, null]], [true, false]), false), 'match');
  assert.equal(spiderResultEq(t([['1']]), t([[1]]), false), 'values');
  assert.equal(spiderResultEq(t([[new Uint8Array([97])]]), t([['a']]), false), 'values');
  assert.equal(cellKey(2 ** 60), cellKey(BigInt(2) ** BigInt(60)));
});

test('spider reproduces unorder_row: int 1 and float 1.0 sort differently inside a row', () => {
  // str(1.5) < str(1)+"<class 'int'>" but "1.0<class 'float'>" < "1.5…": the unordered rows differ, so the official
  // quick_rej rejects although the rows are equal cell by cell.
  assert.equal(spiderResultEq(t([[1, 1.5]], [false, true]), t([[1.0, 1.5]], [true, true]), false), 'values');
  assert.equal(spiderResultEq(t([[1, 1.5]], [false, true]), t([[1, 1.5]], [false, true]), false), 'match');
});

test('Python float repr and sort keys', () => {
  assert.equal(pyFloatRepr(1), '1.0');
  assert.equal(pyFloatRepr(0.0001), '0.0001');
  assert.equal(pyFloatRepr(0.00001), '1e-05');
  assert.equal(pyFloatRepr(1e16), '1e+16');
  assert.equal(pyFloatRepr(123456789012345.6), '123456789012345.6');
  assert.equal(pyFloatRepr(-2.5e-7), '-2.5e-07');
  assert.equal(pySortKey(null, false), "None<class 'NoneType'>");
  assert.equal(pySortKey(3, true), "3.0<class 'float'>");
  assert.equal(pySortKey(new Uint8Array([0, 39]), false), "b\"\\x00'\"<class 'bytes'>");
});

test('bird: set equality — duplicates and row order ignored, column order matters', () => {
  assert.equal(
    birdResultEq(
      t([
        [1, 'a'],
        [1, 'a'],
        [2, 'b'],
      ]),
      t([
        [2, 'b'],
        [1, 'a'],
      ]),
    ),
    'match',
  );
  assert.equal(birdResultEq(t([[1, 'a']]), t([['a', 1]])), 'values');
  assert.equal(birdResultEq(t([[1, 'a']]), t([[1]])), 'columns');
  assert.equal(birdResultEq(t([[1]]), t([[1.0]], [true])), 'match');
  assert.equal(birdResultEq(t([]), t([])), 'match');
});
