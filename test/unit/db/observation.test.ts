// Expected strings are written by hand from the papers' formats (pandas to_string for `df`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderObservation } from '../../../src/core/db';
import type { ExecResult, StorageSet } from '../../../src/core/db';

const S = (p: Partial<StorageSet>): StorageSet => ({
  integer: false,
  real: false,
  text: false,
  blob: false,
  null: false,
  ...p,
});

const players: ExecResult = {
  ok: true,
  errorClass: null,
  error: null,
  ms: 1,
  truncated: false,
  rowCount: 3,
  rowCountExact: true,
  columns: ['id', 'name', 'rating', 'note'],
  rows: [
    [1, 'Ada', 7.5, null],
    [2, 'Bo', 10, null],
    [3, 'Cy', null, null],
  ],
  columnStorage: [S({ integer: true }), S({ text: true }), S({ real: true, null: true }), S({ null: true })],
};

test('df renders like pandas DataFrame.to_string(): index, right-aligned, NaN in floats, None in objects', () => {
  assert.equal(
    renderObservation(players, { format: 'df' }),
    [
      '   id name  rating  note',
      '0   1  Ada     7.5  None',
      '1   2   Bo    10.0  None',
      '2   3   Cy     NaN  None',
    ].join('\n'),
  );
});

test("df matches the SQL-Trail appendix example and pandas' empty frame", () => {
  const avg: ExecResult = {
    ...players,
    columns: ['AVG(price)'],
    rows: [[24.75]],
    rowCount: 1,
    columnStorage: [S({ real: true })],
  };
  assert.equal(renderObservation(avg), '   AVG(price)\n0       24.75');
  const empty: ExecResult = { ...players, rows: [], rowCount: 0 };
  assert.equal(renderObservation(empty), 'Empty DataFrame\nColumns: [id, name, rating, note]\nIndex: []');
});

test('df: an integer column with a NULL becomes floats, as pandas makes it float64', () => {
  const r: ExecResult = {
    ...players,
    columns: ['a', 'b'],
    rows: [
      [1, null],
      [2, 3],
    ],
    rowCount: 2,
    columnStorage: [S({ integer: true }), S({ integer: true, null: true })],
  };
  assert.equal(renderObservation(r), '   a    b\n0  1  NaN\n1  2  3.0');
});

test('df: negative numbers take the sign column and mixed columns print as objects, as in pandas', () => {
  const r: ExecResult = {
    ...players,
    columns: ['a', 'b', 'c', 'dddddd'],
    rows: [
      [-1, -1.5, 'x', 1],
      [2, null, 'yy', 2],
    ],
    rowCount: 2,
    columnStorage: [S({ integer: true }), S({ real: true, null: true }), S({ text: true }), S({ integer: true })],
  };
  assert.equal(renderObservation(r), '   a    b   c  dddddd\n0 -1 -1.5   x       1\n1  2  NaN  yy       2');
  const mixed: ExecResult = {
    ...players,
    columns: ['c'],
    rows: [['x'], [null], [1]],
    rowCount: 3,
    columnStorage: [S({ text: true, null: true, integer: true })],
  };
  assert.equal(renderObservation(mixed), '      c\n0     x\n1  None\n2     1');
});

test('table renders an ASCII grid', () => {
  assert.equal(
    renderObservation(players, { format: 'table' }),
    [
      '+----+------+--------+------+',
      '| id | name | rating | note |',
      '+----+------+--------+------+',
      '| 1  | Ada  | 7.5    | NULL |',
      '| 2  | Bo   | 10     | NULL |',
      '| 3  | Cy   | NULL   | NULL |',
      '+----+------+--------+------+',
    ].join('\n'),
  );
});

test('json gives columns and at most N records', () => {
  assert.equal(
    renderObservation(players, { format: 'json', jsonRecords: 2 }),
    '{"columns": ["id", "name", "rating", "note"], "data": [{"id": 1, "name": "Ada", "rating": 7.5, "note": null}, ' +
      '{"id": 2, "name": "Bo", "rating": 10, "note": null}], "total_rows": 3}',
  );
});

test("text is Python's str() of the rows, cut to N characters", () => {
  const quoted: ExecResult = {
    ...players,
    rows: [
      [1, 'Ada', 7.5, null],
      [2, "Bo's", 10, null],
    ],
    rowCount: 2,
  };
  assert.equal(renderObservation(quoted, { format: 'text' }), "[(1, 'Ada', 7.5, None), (2, \"Bo's\", 10.0, None)]");
  assert.equal(renderObservation(quoted, { format: 'text', textChars: 12 }), "[(1, 'Ada', ");
  const one: ExecResult = {
    ...players,
    columns: ['n'],
    rows: [[0]],
    rowCount: 1,
    columnStorage: [S({ integer: true })],
  };
  assert.equal(renderObservation(one, { format: 'text' }), '[(0,)]');
});

test('row truncation is noted, and the whole observation never exceeds its character cap', () => {
  const many: ExecResult = {
    ...players,
    columns: ['n'],
    rows: Array.from({ length: 50 }, (_, i) => [i]),
    rowCount: 1234,
    truncated: true,
    columnStorage: [S({ integer: true })],
  };
  const text = renderObservation(many);
  assert.match(text, /\n\.\.\. \(showing 50 of 1234 rows\)$/);
  const wide: ExecResult = {
    ...many,
    columns: ['s'],
    rows: Array.from({ length: 200 }, () => ['x'.repeat(100)]),
    rowCount: 200,
    columnStorage: [S({ text: true })],
  };
  for (const format of ['df', 'table', 'json', 'text'] as const) {
    const out = renderObservation(wide, { format, maxChars: 500 });
    assert.ok(out.length <= 500, `${format}: ${out.length}`);
  }
  // 200 rows of ~105 characters do not fit in 9,000: the frame is cut to 50 rows (SkyRL-SQL's rule) and that fits.
  const df = renderObservation(wide, { maxChars: 9000 });
  assert.ok(df.length < 9000);
  assert.match(df, /\n49 {2}x{100}\n\.\.\. \(showing 50 of 200 rows\)$/);
  // With a smaller cap even 50 rows are too long, so the text itself is cut, note included in the cap.
  const cut = renderObservation(wide, { maxChars: 3000 });
  assert.equal(cut.length, 3000);
  assert.match(cut, /\n\.\.\. \(showing 50 of 200 rows; truncated to 3000 characters\)$/);
});

test("errors are shown in SQLite's words", () => {
  const err: ExecResult = {
    ...players,
    ok: false,
    errorClass: 'sql',
    error: 'no such column: nope',
    rows: [],
    columns: [],
    rowCount: 0,
  };
  for (const format of ['df', 'table', 'json', 'text'] as const)
    assert.equal(renderObservation(err, { format }), 'no such column: nope');
});
