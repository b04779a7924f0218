// Pages of a whole result through the real sandbox pool: a 9,959-row trip table (bike_1-like, built here) is paged,
// sorted and filtered by SQLite, so the largest duration is the table's largest, not the largest of the first page;
// REAL columns are marked, PRAGMA results are said to be unpaged, writes stay rejected, exports stream whole.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import { ResultPages } from '../../../src/core/db/resultPages';
import { filterCondition, pageableSql, pageSql } from '../../../src/core/db/pagedQuery';
import { ExportText, realText, toMarkdown } from '../../../src/core/db/resultExport';
import { buildDb } from '../../helpers/fixtures';

const TRIPS = 9959;
const db = buildDb('trips', {
  sql: `CREATE TABLE trip(id INTEGER PRIMARY KEY, duration INTEGER, start_station TEXT, fare REAL, note TEXT);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${TRIPS})
    INSERT INTO trip SELECT i, (i * 7919) % 100003, 'station ' || (i % 70), (i % 5) * 1.0,
      CASE WHEN i % 2 = 0 THEN NULL ELSE 'NULL' END FROM n;`,
});
const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const source = (sql: string) => new ResultPages(pool, { db, sql, timeoutMs: 10_000 });
const spec = { offset: 0, limit: 200, order: null, filters: [] };

test('the first page carries the whole count, later pages come from SQLite', async () => {
  const pages = source('SELECT * FROM trip');
  const first = await pages.page(spec);
  assert.ok(first.ok);
  assert.equal(first.total, TRIPS);
  assert.equal(first.rows.length, 200);
  assert.deepEqual(first.columns, ['id', 'duration', 'start_station', 'fare', 'note']);
  const second = await pages.page({ ...spec, offset: 200 });
  assert.ok(second.ok);
  assert.equal(second.rows[0][0], 201);
  assert.equal(second.total, TRIPS);
  const last = await pages.page({ ...spec, offset: 9800 });
  assert.ok(last.ok);
  assert.equal(last.rows.length, TRIPS - 9800);
});

test('sorting by a header sorts the whole table, not the page', async () => {
  const largest = Number((await pool.exec({ db, sql: 'SELECT max(duration) FROM trip' })).rows[0][0]);
  const firstPageMax = Number(
    (await pool.exec({ db, sql: 'SELECT max(duration) FROM (SELECT duration FROM trip LIMIT 200)' })).rows[0][0],
  );
  assert.notEqual(largest, firstPageMax, 'the fixture must put its largest duration past the first page');
  const pages = source('SELECT * FROM trip');
  const desc = await pages.page({ ...spec, order: { column: 1, descending: true } });
  assert.ok(desc.ok);
  assert.equal(desc.rows[0][1], largest);
  assert.equal(desc.total, TRIPS);
  // Pages of a sorted result neither repeat nor skip rows, even where values tie.
  const byStation = { column: 2, descending: false };
  const a = await pages.page({ ...spec, limit: 100, order: byStation });
  const b = await pages.page({ ...spec, limit: 100, offset: 100, order: byStation });
  assert.ok(a.ok && b.ok);
  const ids = new Set([...a.rows, ...b.rows].map((r) => r[0]));
  assert.equal(ids.size, 200);
});

test('a filter per column runs in SQLite and the total follows it', async () => {
  const pages = source('SELECT * FROM trip;  ');
  const station = await pages.page({ ...spec, filters: [{ column: 2, text: 'station 7' }] });
  assert.ok(station.ok);
  const expected = (await pool.exec({ db, sql: "SELECT count(*) FROM trip WHERE start_station LIKE '%station 7%'" }))
    .rows[0][0];
  assert.equal(station.total, expected);
  const big = await pages.page({ ...spec, filters: [{ column: 1, text: '>= 99000' }] });
  assert.ok(big.ok);
  assert.ok(big.rows.every((r) => Number(r[1]) >= 99000));
  const nulls = await pages.page({ ...spec, filters: [{ column: 4, text: 'is null' }] });
  assert.ok(nulls.ok);
  assert.equal(nulls.total, Math.floor(TRIPS / 2));
  const text = await pages.page({ ...spec, filters: [{ column: 4, text: '=NULL' }] });
  assert.ok(text.ok);
  assert.equal(text.total, Math.ceil(TRIPS / 2), "the string 'NULL' is not NULL");
});

test('a result over one page with short cells says nothing is cut (the row cap is not a cut cell)', async () => {
  // The first plain page runs the statement with the page's row cap: rows past it are the rest of the result, not
  // cells cut short (Refresh, Run Again and a history re-run all start here).
  const first = await source('SELECT * FROM trip').page(spec);
  assert.ok(first.ok);
  assert.equal(first.rows.length, 200);
  assert.deepEqual(first.notes, []);
  const sorted = await source('SELECT * FROM trip').page({ ...spec, order: { column: 1, descending: true } });
  assert.ok(sorted.ok);
  assert.deepEqual(sorted.notes, []);
  // A cell that is cut is still said to be, on a capped first page and on an unpaged one.
  const long = await source("SELECT id, printf('%.3000c', 'x') AS long FROM trip").page(spec);
  assert.ok(long.ok);
  assert.match(long.notes.join(' '), /cells longer than 2,000 characters are cut/);
  const pragma = await source('PRAGMA table_info(trip)').page(spec);
  assert.ok(pragma.ok);
  assert.doesNotMatch(pragma.notes.join(' '), /cut/);
});

test('REAL columns are marked, so 14.0 can be shown as 14.0', async () => {
  const r = await source('SELECT id, fare FROM trip').page(spec);
  assert.ok(r.ok);
  assert.deepEqual(r.realColumns, [false, true]);
});

test('a user statement with its own WITH, ORDER BY and trailing comment pages too', async () => {
  const sql = 'WITH t AS (SELECT id, id FROM trip WHERE id <= 450) SELECT * FROM t ORDER BY 1 DESC -- mine';
  const pages = source(sql);
  const p = await pages.page({ ...spec, offset: 400 });
  assert.ok(p.ok);
  assert.equal(p.total, 450);
  assert.deepEqual(p.rows[0], [50, 50]);
});

test('PRAGMA results are not paged by SQLite, and the page says so', async () => {
  assert.equal(pageableSql('PRAGMA table_info(trip)'), null);
  const p = await source('PRAGMA table_info(trip)').page(spec);
  assert.ok(p.ok);
  assert.equal(p.pageable, false);
  assert.equal(p.total, 5);
  assert.match(p.notes.join(' '), /not paged/);
});

test('the wrapper never lets a write through: the sandbox still judges the text', async () => {
  const p = await source('SELECT 1; DELETE FROM trip').page(spec);
  assert.equal(p.ok, false);
  assert.ok(!p.ok && p.errorClass === 'rejected');
  const q = await source('WITH x AS (SELECT 1) DELETE FROM trip').page(spec);
  assert.ok(!q.ok && q.errorClass === 'rejected');
  assert.equal(Number((await pool.exec({ db, sql: 'SELECT count(*) FROM trip' })).rows[0][0]), TRIPS);
});

test('filter boxes are quoted, never spliced in', () => {
  assert.equal(filterCondition('c0', ''), null);
  assert.equal(filterCondition('c0', "=O'Brien"), "c0 = 'O''Brien'");
  assert.equal(filterCondition('c0', '50%'), "CAST(c0 AS TEXT) LIKE '%50\\%%' ESCAPE '\\'");
  assert.match(pageSql('SELECT 1', 1, { ...spec, limit: 5, offset: 10 }), /LIMIT 5 OFFSET 10$/);
});

test('an export streams the whole sorted result in chunks, in each format', async () => {
  const pages = source('SELECT id, fare, note FROM trip');
  for (const format of ['csv', 'json', 'markdown'] as const) {
    let out = '';
    let ex: ExportText | null = null;
    let chunks = 0;
    for await (const c of pages.allRows({ column: 0, descending: true }, [], 3000)) {
      ex ??= new ExportText(format, c.columns);
      out += ex.chunk(c.rows);
      chunks++;
    }
    out += ex!.end();
    assert.equal(chunks, 4);
    if (format === 'json') {
      const rows = JSON.parse(out) as { id: number }[];
      assert.equal(rows.length, TRIPS);
      assert.equal(rows[0].id, TRIPS);
    } else if (format === 'csv') {
      const lines = out.trimEnd().split('\r\n');
      assert.equal(lines.length, TRIPS + 1);
      assert.equal(lines[0], 'id,fare,note');
      assert.equal(lines[1], `${TRIPS},4.0,NULL`, 'fare is REAL: 4.0, not 4; the text NULL stays NULL');
      assert.equal(lines[2], `${TRIPS - 1},3.0,`, 'SQL NULL is an empty field');
    } else {
      const lines = out.trimEnd().split('\n');
      assert.equal(lines.length, TRIPS + 2);
      assert.equal(lines[1], '| ---: | ---: | --- |');
    }
  }
});

/** RFC 4180 fields of one CSV line (quotes undone), and whether each was quoted. */
function csvFields(line: string): { text: string; quoted: boolean }[] {
  const out: { text: string; quoted: boolean }[] = [];
  for (let i = 0; i <= line.length; ) {
    if (line[i] === '"') {
      let text = '';
      for (i++; i < line.length; i++) {
        if (line[i] === '"' && line[i + 1] === '"') {
          text += '"';
          i++;
        } else if (line[i] === '"') break;
        else text += line[i];
      }
      out.push({ text, quoted: true });
      i += 2;
    } else {
      const end = line.indexOf(',', i) < 0 ? line.length : line.indexOf(',', i);
      out.push({ text: line.slice(i, end), quoted: false });
      i = end + 1;
    }
  }
  return out;
}

test(
  'exports keep each cell its SQLite type: REAL as 14.0, INTEGER as 14, ' + 'NULL apart from NULL text and ""',
  async () => {
    const typed = buildDb('typed', {
      sql: `CREATE TABLE m(id INTEGER, r REAL, t TEXT, mixed);
      INSERT INTO m VALUES (1, 14.0, 'NULL', 14.0), (2, NULL, NULL, 14), (3, -0.5, '', 9007199254740993),
        (4, 1e300, 'x', 2.5);`,
    });
    const pages = new ResultPages(pool, { db: typed, sql: 'SELECT * FROM m', timeoutMs: 10_000 });
    const exported = async (format: 'csv' | 'json' | 'markdown') => {
      let out = '';
      let ex: ExportText | null = null;
      for await (const c of pages.allRows(null, [], 2)) {
        ex ??= new ExportText(format, c.columns);
        out += ex.chunk(c.rows);
      }
      return out + ex!.end();
    };
    const csv = (await exported('csv')).trimEnd().split('\r\n').map(csvFields);
    const text = (row: number) => csv[row].map((f) => f.text);
    assert.deepEqual(text(1), ['1', '14.0', 'NULL', '14.0'], 'REAL 14.0 stays 14.0, per cell, even in a mixed column');
    assert.deepEqual(text(2), ['2', '', '', '14'], 'the INTEGER 14 of the mixed column stays 14');
    assert.deepEqual(text(3), ['3', '-0.5', '', '9007199254740993']);
    assert.deepEqual(text(4), ['4', '1e+300', 'x', '2.5']);
    // Read back the way a reader of CSV does: an unquoted empty field is NULL, "" the empty text, NULL the text NULL.
    assert.equal(csv[2][2].quoted, false, 'SQL NULL: an empty, unquoted field');
    assert.equal(csv[3][2].quoted, true, "the empty text '': a quoted empty field");
    assert.equal(csv[1][2].text, 'NULL', "the text 'NULL' is written as NULL, never empty");
    // Round trip through SQLite: each field as the value it reads as (a number with a point is REAL).
    const back = (f: { text: string; quoted: boolean }) =>
      !f.quoted && f.text === ''
        ? null
        : !f.quoted && /^-?\d+$/.test(f.text)
          ? BigInt(f.text)
          : !f.quoted && /^-?[\d.e+]+$/.test(f.text)
            ? Number(f.text)
            : f.text;
    const round = await pool.exec({
      db: typed,
      sql: `SELECT ${csv
        .slice(1)
        .map((r) => `typeof(${sqlLiteral(back(r[1]))}), typeof(${sqlLiteral(back(r[3]))})`)
        .join(', ')}`,
    });
    assert.ok(round.ok, round.error ?? '');
    const original = await pool.exec({ db: typed, sql: 'SELECT typeof(r), typeof(mixed) FROM m ORDER BY id' });
    assert.deepEqual(round.rows[0], original.rows.flat(), 'every REAL reads back as REAL, every INTEGER as INTEGER');

    const json = await exported('json');
    assert.match(json, /"r": 14\.0,/);
    assert.match(json, /"mixed": 14\n/);
    const records = JSON.parse(json) as Record<string, unknown>[];
    assert.deepEqual(records[1], { id: 2, r: null, t: null, mixed: 14 });
    assert.deepEqual(records[0].t, 'NULL');
    assert.equal(records[2].mixed, '9007199254740993', 'beyond 2^53: exact, as a string');
    const md = (await exported('markdown')).split('\n');
    assert.equal(md[2], '| 1 | 14.0 | NULL | 14.0 |');
    assert.equal(md[3], '| 2 | *NULL* | *NULL* | 14 |');
  },
);

/** A value as an SQL literal (test only: numbers and simple text). */
function sqlLiteral(v: unknown): string {
  if (v === null) return 'NULL';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return realText(v);
  return `'${String(v).replace(/'/g, "''")}'`;
}

test('Markdown keeps NULL apart from the text NULL and escapes pipes', () => {
  assert.equal(toMarkdown(['a', 'b'], [[null, 'x|NULL']]), '| a | b |\n| --- | --- |\n| *NULL* | x\\|NULL |\n');
});
