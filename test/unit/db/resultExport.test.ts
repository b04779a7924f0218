// Results as CSV / TSV / JSON and as JSON-safe webview cells, from real query results (bigints, blobs, NULLs, quotes).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import {
  cellText,
  compareCells,
  sortedRowIndices,
  toCsv,
  toJsonRecords,
  toTsv,
  wireCell,
  wireRows,
  WIRE_BLOB_BYTES,
} from '../../../src/core/db/resultExport';
import { buildDb } from '../../helpers/fixtures';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const db = buildDb('odd', {
  sql: `CREATE TABLE t (id INTEGER, label TEXT, data BLOB, big INTEGER, r REAL);
INSERT INTO t VALUES (1, 'plain', x'00ff10', 9007199254740993, 1.5);
INSERT INTO t VALUES (2, 'comma, "quoted"' || char(10) || 'line', NULL, 42, NULL);
INSERT INTO t VALUES (3, ' padded', randomblob(100), -9007199254740993, -0.25);`,
});

async function rows() {
  const r = await pool.exec({ db, sql: 'SELECT id, label, data, big, r FROM t ORDER BY id', maxRows: 10 });
  assert.equal(r.ok, true, r.error ?? '');
  return r;
}

test('wire cells survive JSON exactly: bigint digits, blob hex (cut), NULL, numbers', async () => {
  const r = await rows();
  const wire = wireRows(r.rows);
  assert.deepEqual(JSON.parse(JSON.stringify(wire)), wire, 'JSON round trip is lossless');
  assert.equal(wire[0][3], '9007199254740993', 'beyond 2^53, still exact');
  assert.equal(wire[0][2], "x'00ff10'");
  assert.equal(wire[1][2], null);
  assert.equal(wire[0][4], 1.5);
  assert.match(String(wire[2][2]), new RegExp(`^x'[0-9a-f]{${WIRE_BLOB_BYTES * 2}}'… \\(100 bytes\\)$`));
  assert.equal(wireCell(Infinity), 'Infinity');
  assert.equal(wireCell(wire[0][3]), '9007199254740993', 'idempotent on wire cells');
});

test('CSV: header, RFC 4180 quoting of commas, quotes, newlines and edge spaces; NULL empty; CRLF', async () => {
  const r = await rows();
  const csv = toCsv(r.columns, r.rows);
  const lines = csv.split('\r\n');
  assert.equal(lines[0], 'id,label,data,big,r');
  assert.equal(lines[1], '1,plain,00ff10,9007199254740993,1.5');
  assert.equal(lines[2], '2,"comma, ""quoted""\nline",,42,');
  assert.ok(lines[3].startsWith('3," padded",'), lines[3]);
  assert.ok(csv.endsWith('\r\n'));
  assert.equal(toCsv(['a'], []), 'a\r\n', 'no rows: just the header');
});

test('TSV for the clipboard: one line per row, tabs and newlines in cells flattened', async () => {
  const r = await rows();
  const tsv = toTsv(r.columns, r.rows).split('\n');
  assert.equal(tsv[0], 'id\tlabel\tdata\tbig\tr');
  assert.equal(tsv[2], '2\tcomma, "quoted" line\t\t42\t');
  assert.equal(tsv.length, 5, 'header, three rows, final newline');
});

test('JSON records: one object per row, duplicate columns kept with suffixes, bigints exact, blobs hex', async () => {
  const r = await pool.exec({ db, sql: 'SELECT id, id, big, data FROM t WHERE id = 1' });
  const parsed = JSON.parse(toJsonRecords(r.columns, r.rows)) as Record<string, unknown>[];
  assert.deepEqual(parsed, [{ id: 1, id_2: 1, big: '9007199254740993', data: '00ff10' }]);
  const small = await pool.exec({ db, sql: 'SELECT big FROM t WHERE id = 2' });
  assert.deepEqual(JSON.parse(toJsonRecords(small.columns, small.rows)), [{ big: 42 }]);
  assert.equal(cellText(null), '');
});

test(
  'sortedRowIndices: NULLs first, numbers numerically ' + '(exact past 2^53), then text; stable; descending reverses',
  async () => {
    const r = await pool.exec({
      db,
      sql: "SELECT big FROM t UNION ALL SELECT NULL UNION ALL SELECT 5 UNION ALL SELECT 'x'",
    });
    // Query order: 9007199254740993, 42, -9007199254740993, NULL, 5, 'x'
    assert.deepEqual(
      sortedRowIndices(r.rows, { column: 0, descending: false }).map((i) => cellText(r.rows[i][0])),
      ['', '-9007199254740993', '5', '42', '9007199254740993', 'x'],
    );
    assert.deepEqual(
      sortedRowIndices(r.rows, { column: 0, descending: true }).map((i) => cellText(r.rows[i][0])),
      ['x', '9007199254740993', '42', '5', '-9007199254740993', ''],
    );
    assert.deepEqual(sortedRowIndices(r.rows, null), [0, 1, 2, 3, 4, 5], 'no order: the query order');
    const ties = [
      [1, 'b'],
      [0, 'a'],
      [1, 'a'],
      [0, 'b'],
    ];
    assert.deepEqual(sortedRowIndices(ties, { column: 0, descending: false }), [1, 3, 0, 2], 'ties keep their order');
    assert.ok(compareCells('9007199254740993', '9007199254740992') > 0, 'digit strings beyond 2^53 compare exactly');
    assert.ok(compareCells(2.5, '10') < 0 && compareCells('abc', 1e300) > 0);
  },
);
