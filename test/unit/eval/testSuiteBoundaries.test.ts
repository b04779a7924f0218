// Tests of the test-suite builder's boundary variants (boundaries.ts, boundaryVariant.ts): on a small real SQLite
// database where `>` and `>=` answer alike — no score equals the average of all scores, no student averages exactly
// 60 — the built suite tells `score > (SELECT avg(score) …)` from `>=` and `HAVING avg(score) > 60` from `>= 60`,
// with the gold still answering rows there; the same seed gives the same bytes; the variants keep foreign keys and
// CHECKs; the boundaries are read from the queries as expected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { createSqlPool } from '../../../src/core/db';
import { comparisonBoundaries } from '../../../src/core/eval/testSuite/boundaries';
import { buildSuite } from '../../../src/core/eval/testSuite/buildSuite';
import { judgePairs } from '../../../src/core/eval/testSuite/judgePairs';
import { suiteDatabases } from '../../../src/core/eval/testSuite/suiteMode';

const SCHEMA = `
PRAGMA foreign_keys = ON;
CREATE TABLE student (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE exam (
  exam_id INTEGER PRIMARY KEY,
  student_id INTEGER NOT NULL REFERENCES student (id),
  score INTEGER NOT NULL CHECK (score BETWEEN 0 AND 100)
);
INSERT INTO student VALUES (1, 'Ann'), (2, 'Bo'), (3, 'Cy'), (4, 'Di'), (5, 'Ed');
INSERT INTO exam VALUES
  (10, 1, 52), (11, 1, 71), (12, 2, 88), (13, 2, 93), (14, 3, 41),
  (15, 3, 57), (16, 4, 66), (17, 4, 79), (18, 5, 35), (19, 5, 48);
`;

const SUBQUERY = 'SELECT exam_id FROM exam WHERE score > (SELECT avg(score) FROM exam)';
const HAVING =
  'SELECT T1.name FROM student AS T1 JOIN exam AS T2 ON T1.id = T2.student_id GROUP BY T1.id HAVING avg(T2.score) > 60';
const PAIRS = [
  { gold: SUBQUERY, pred: SUBQUERY.replace('>', '>=') },
  { gold: HAVING, pred: HAVING.replace('> 60', '>= 60') },
];

const dir = tempDir('quarry-ts-boundary-');
mkdirSync(join(dir, 'exams'));
const original = buildDb('exams', { sql: SCHEMA, dir: join(dir, 'exams'), file: 'exams.sqlite' });

test('boundaries: literals (HAVING aggregates and BETWEEN ends too), column pairs, scalar queries, groups', () => {
  const b = comparisonBoundaries([
    HAVING,
    SUBQUERY,
    "SELECT name FROM t WHERE a < b AND c BETWEEN 3 AND 5 AND d = 'x' AND e > '2001-01-01'",
  ]);
  assert.deepEqual(
    b.literals.map((l) => [l.column, l.value]),
    [
      ['score', 60n],
      ['c', 3n],
      ['c', 5n],
      ['e', '2001-01-01'],
    ],
  );
  assert.deepEqual(b.columnPairs, [
    ['id', 'student_id'],
    ['a', 'b'],
  ]);
  assert.deepEqual(b.subqueries, [{ column: 'score', sql: 'SELECT AVG("score") FROM "exam"' }]);
  assert.deepEqual(b.groupColumns, ['id', 'student_id'], 'the GROUP BY column and its join partner');
});

test('the suite tells `>` from `>=` at an average and at a HAVING literal, the gold still answering rows', async () => {
  const pool = createSqlPool({ size: 1 });
  try {
    const onOriginal = await judgePairs(PAIRS, [original], pool, 10_000);
    assert.deepEqual(
      onOriginal[0].map((v) => v.exec),
      [true, true],
      'both are single-database false positives',
    );
    const out = join(dir, 'ts');
    const build = (outDir: string) =>
      buildSuite([{ dbId: 'exams', source: original, golds: PAIRS.map((p) => p.gold) }], {
        outDir,
        jobs: 1,
        seed: 1,
        variants: 4,
        candidates: 16,
        maxNeighbours: 24,
        timeoutMs: 10_000,
      });
    const { report } = await build(out);
    assert.deepEqual(report.failed, []);
    const files = suiteDatabases(out, 'exams');
    await build(join(dir, 'ts-again'));
    const again = suiteDatabases(join(dir, 'ts-again'), 'exams');
    assert.deepEqual(
      again.map((f) => readFileSync(f).toString('base64')),
      files.map((f) => readFileSync(f).toString('base64')),
      'the same seed gives byte-identical files',
    );
    const verdicts = await judgePairs(PAIRS, files, pool, 10_000);
    PAIRS.forEach((p, i) => {
      const apart = verdicts.filter((vs) => !vs[i].exec && !vs[i].goldEmpty);
      assert.ok(apart.length > 0, `no database of the suite tells apart ${p.pred}`);
    });
    for (const f of files) {
      const db = new Database(f, { readonly: true });
      try {
        assert.deepEqual(db.prepare('PRAGMA foreign_key_check').all(), [], f);
        const bad = db.prepare('SELECT count(*) AS n FROM exam WHERE score NOT BETWEEN 0 AND 100').get() as {
          n: number;
        };
        assert.equal(bad.n, 0, f);
      } finally {
        db.close();
      }
    }
  } finally {
    await pool.close();
  }
});
