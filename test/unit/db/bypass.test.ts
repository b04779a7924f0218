// The bypass suite: whatever a model writes, nothing reaches the database file or its directory.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { createSqlPool } from '../../../src/core/db';
import { buildDb, tempDir } from '../../helpers/fixtures';

const dir = tempDir();
const file = buildDb('db-sandbox', { dir });
// A WAL-mode twin: the mode in which a careless read-only open creates files beside the database.
const walFile = buildDb('db-sandbox', { dir, file: 'wal.sqlite' });
{
  const w = new Database(walFile);
  w.pragma('journal_mode = WAL');
  w.close();
}
const outside = tempDir();
const attached = join(outside, 'attached.sqlite');
const vacuumed = join(outside, 'vacuumed.sqlite');

const hash = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const listing = readdirSync(dir).sort();
const hashes = [hash(file), hash(walFile)];

const pool = createSqlPool({ size: 2 });
after(() => pool.close());

const attempts: string[] = [
  'DELETE FROM player',
  'UPDATE player SET name = 1',
  "INSERT INTO team VALUES (9, 'x')",
  "REPLACE INTO team VALUES (1, 'x')",
  'CREATE TABLE x (a)',
  'DROP TABLE player',
  'ALTER TABLE team ADD COLUMN c',
  'CREATE INDEX i ON team(name)',
  'DROP INDEX player_team',
  'CREATE VIEW v AS SELECT 1',
  'CREATE TRIGGER tr AFTER INSERT ON team BEGIN SELECT 1; END',
  'WITH x AS (SELECT 1) DELETE FROM player',
  "WITH x AS (SELECT 1) INSERT INTO team SELECT 9, 'x' FROM x",
  'WITH x AS (SELECT 1) UPDATE team SET name = 2',
  'SELECT 1; DROP TABLE player',
  'SELECT 1; DELETE FROM player;',
  'SELECT 1;/* */ UPDATE team SET name = 1',
  "ATTACH ':memory:' AS m",
  `ATTACH '${attached}' AS a`,
  `ATTACH DATABASE '${attached}' AS a`,
  'DETACH main',
  'DETACH DATABASE temp',
  'VACUUM',
  `VACUUM INTO '${vacuumed}'`,
  `VACUUM main INTO '${vacuumed}'`,
  'PRAGMA journal_mode = delete',
  'PRAGMA journal_mode = wal',
  'PRAGMA user_version = 5',
  'PRAGMA writable_schema = 1',
  'PRAGMA query_only = 0',
  'PRAGMA query_only = OFF',
  'PRAGMA foreign_keys = 1',
  'PRAGMA main.user_version = 7',
  'PRAGMA schema_version = 99',
  'PRAGMA cache_size = 10',
  'PRAGMA temp_store = memory',
  'PRAGMA wal_checkpoint(TRUNCATE)',
  'PRAGMA query_only/**/=0',
  'PRAGMA query_only --x\n= 0',
  'PRAGMA "query_only" = 0',
  'PRAGMA main."query_only"(0)',
  'PRAGMA [foreign_keys] = ON',
  'PRAGMA optimize',
  'PRAGMA shrink_memory',
  'PRAGMA incremental_vacuum',
  'PRAGMA user_version(5)',
  "SELECT load_extension('x')",
  "SELECT load_extension('/tmp/nothing.so', 'init')",
  'CREATE TEMP TABLE t (a)',
  'CREATE TEMPORARY TABLE t AS SELECT * FROM player',
  'CREATE TEMP VIEW v AS SELECT 1',
  'CREATE TEMP TRIGGER tr AFTER INSERT ON team BEGIN SELECT 1; END',
  'REINDEX',
  'REINDEX player_team',
  'ANALYZE',
  'ANALYZE player',
  'BEGIN',
  'BEGIN IMMEDIATE',
  'BEGIN EXCLUSIVE',
  'COMMIT',
  'END',
  'ROLLBACK',
  'SAVEPOINT s',
  'RELEASE s',
  '/* x */ DELETE FROM player',
  '--c\nDROP TABLE player',
  '\tVaCuUm',
  '\u00a0\u2003DELETE FROM player',
  '\ufeffdElEtE FROM player',
  '  /* a */ -- b\n /* c */ pragma USER_VERSION = 3',
  ';;DELETE FROM player',
  'EXPLAIN DELETE FROM player; DELETE FROM player',
  'PRAGMA query_only = 0; SELECT 1',
  'SELECT * FROM pragma_query_only(0)',
  "SELECT * FROM pragma_journal_mode('delete')",
  'SELECT * FROM pragma_user_version(5)',
  // EXPLAIN compiles what it wraps, and SQLite applies PRAGMA settings while compiling (issue 9, item 1).
  'EXPLAIN PRAGMA case_sensitive_like=1',
  'EXPLAIN PRAGMA query_only=0',
  'EXPLAIN PRAGMA reverse_unordered_selects=1',
  'EXPLAIN PRAGMA full_column_names=1',
  'EXPLAIN PRAGMA short_column_names=0',
  'EXPLAIN PRAGMA locking_mode=EXCLUSIVE',
  'EXPLAIN QUERY PLAN PRAGMA case_sensitive_like=1',
  'EXPLAIN /* x */ PRAGMA case_sensitive_like = 1',
  'explain\n explain pragma case_sensitive_like = 1',
  'EXPLAIN QUERY PLAN DELETE FROM player',
  'EXPLAIN UPDATE team SET name = 1',
];
/** SQLite cannot even parse these (it does not treat these spaces as whitespace); a syntax error is also a refusal. */
const unparsable = (sql: string) => /[\u00a0\u2003\ufeff]/.test(sql);

test('every write, setting change, attach, extension and transaction attempt is rejected', async () => {
  for (const db of [file, walFile]) {
    const results = await pool.execBatch(attempts.map((sql) => ({ db, sql })));
    results.forEach((r, i) => {
      const why = `${JSON.stringify(attempts[i])} → ${r.errorClass}: ${r.error}`;
      assert.equal(r.ok, false, `ran: ${JSON.stringify(attempts[i])}`);
      if (unparsable(attempts[i])) assert.ok(r.errorClass === 'rejected' || r.errorClass === 'sql', why);
      // Table-valued pragma functions only exist for pragmas without side effects; SQLite refuses the rest itself.
      else if (/pragma_\w+\(/.test(attempts[i])) assert.ok(r.errorClass === 'rejected' || r.errorClass === 'sql', why);
      else assert.equal(r.errorClass, 'rejected', why);
    });
  }
});

test('read-only queries and informational PRAGMAs still run', async () => {
  const ok = [
    'SELECT count(*) FROM player',
    'WITH x AS (SELECT 1 AS a) SELECT a FROM x',
    'VALUES (1), (2)',
    'PRAGMA table_info(player)',
    'PRAGMA table_xinfo(player)',
    'PRAGMA index_list(player)',
    'PRAGMA foreign_key_list(player)',
    'PRAGMA main.index_info(player_team)',
    "PRAGMA table_info('player');",
    'PRAGMA "table_info"([player])',
    'PRAGMA user_version',
    'PRAGMA foreign_keys',
    'PRAGMA integrity_check',
    "SELECT name FROM pragma_table_info('player')",
    'EXPLAIN QUERY PLAN SELECT * FROM player WHERE team_id = 1',
    '/* leading comment */ SELECT 1',
    '  select 1  ;  ',
    'SELECT 1 -- trailing comment',
  ];
  const results = await pool.execBatch(ok.map((sql) => ({ db: file, sql })));
  results.forEach((r, i) => assert.equal(r.ok, true, `${ok[i]}: ${r.error}`));
});

test('after the suite the files, their bytes and the directories are unchanged', async () => {
  assert.deepEqual(readdirSync(dir).sort(), listing);
  assert.deepEqual([hash(file), hash(walFile)], hashes);
  assert.equal(existsSync(attached), false, 'ATTACH created a file');
  assert.equal(existsSync(vacuumed), false, 'VACUUM INTO created a file');
  assert.deepEqual(readdirSync(outside), []);
  // The settings writes did not stick on the cached handles either.
  const [uv, qo] = await pool.execBatch([
    { db: file, sql: 'PRAGMA user_version' },
    { db: file, sql: 'PRAGMA query_only' },
  ]);
  assert.deepEqual(uv.rows, [[0]]);
  assert.deepEqual(qo.rows, [[1]]);
  assert.equal(readFileSync(walFile)[18], 2, 'still a WAL-mode file');
});

test(
  "a refused PRAGMA leaves the connection's settings " + 'as they were (SQLite applies PRAGMAs while compiling)',
  async () => {
    const solo = createSqlPool({ size: 1, spares: 0 });
    try {
      for (const sql of [
        'PRAGMA query_only/**/=0',
        'PRAGMA query_only = 0',
        'PRAGMA "query_only"(0)',
        'PRAGMA foreign_keys --c\n= 0',
      ]) {
        assert.equal((await solo.exec({ db: file, sql })).errorClass, 'rejected', sql);
      }
      const [qo, fk] = await solo.execBatch([
        { db: file, sql: 'PRAGMA query_only' },
        { db: file, sql: 'PRAGMA foreign_keys' },
      ]);
      assert.deepEqual([qo.rows, fk.rows], [[[1]], [[1]]]); // better-sqlite3 turns foreign_keys on
    } finally {
      await solo.close();
    }
  },
);

test(
  'no statement of the suite changes what another returns: ' + 'probes before and after each give the same answers',
  async () => {
    // One worker and one cached handle serve everything, as in a long eval or score run.
    const solo = createSqlPool({ size: 1, spares: 0 });
    const probes = [
      "SELECT 'a' LIKE 'A'",
      'SELECT name FROM player',
      'SELECT player.name, t.name FROM player JOIN team AS t ON t.id = player.team_id',
      'PRAGMA query_only',
      'PRAGMA foreign_keys',
    ];
    const probe = async () =>
      (await solo.execBatch(probes.map((sql) => ({ db: file, sql })))).map((r) => ({
        ok: r.ok,
        columns: r.columns,
        rows: r.rows,
      }));
    const accepted = [
      'SELECT count(*) FROM player',
      'PRAGMA table_info(player)',
      'PRAGMA user_version',
      'PRAGMA integrity_check',
      "SELECT name FROM pragma_table_info('player')",
      'EXPLAIN QUERY PLAN SELECT * FROM player WHERE team_id = 1',
      'EXPLAIN SELECT 1',
      'EXPLAIN PRAGMA table_info(player)',
    ];
    try {
      const before = await probe();
      assert.ok(
        before.every((p) => p.ok),
        JSON.stringify(before),
      );
      for (const sql of [...attempts, ...accepted]) {
        await solo.exec({ db: file, sql });
        assert.deepEqual(await probe(), before, `after ${JSON.stringify(sql)}`);
      }
    } finally {
      await solo.close();
    }
  },
);
