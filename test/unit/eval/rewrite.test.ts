// Tests of eval/rewrite: remove_distinct drops DISTINCT words in any case, never inside strings, quoted names or
// longer words; remove_distinct keeps only the first statement, as sqlparse.parse(s)[0] does
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  removeDistinct,
  joinSplitOperators,
  replaceCurrentYear,
  plugValuePlaceholder,
  goldOrderMatters,
} from '../../../src/core/eval/rewrite';
import { evalMode } from '../../../src/core/eval/modes';
import { parseGold, parsePredictions } from '../../../src/core/eval/inputFiles';
import { formatScoreTable, scoreByHardness, pyFixed3 } from '../../../src/core/eval/scores';

test('remove_distinct drops DISTINCT words in any case, never inside strings, quoted names or longer words', () => {
  assert.equal(removeDistinct('SELECT DISTINCT a FROM t'), 'SELECT  a FROM t');
  assert.equal(removeDistinct('select count(distinct a) from t'), 'select count( a) from t');
  assert.equal(
    removeDistinct(`SELECT 'distinct', "distinct", distinct_id FROM t`),
    `SELECT 'distinct', "distinct", distinct_id FROM t`,
  );
});

test('remove_distinct keeps only the first statement, as sqlparse.parse(s)[0] does', () => {
  assert.equal(removeDistinct('SELECT 1; SELECT 2'), 'SELECT 1; ');
  assert.equal(removeDistinct("SELECT ';' ; "), "SELECT ';' ; ");
});

test('the other official rewrites', () => {
  assert.equal(joinSplitOperators('a > = 1 AND b < = 2 AND c ! = 3'), 'a >= 1 AND b <= 2 AND c != 3');
  assert.equal(replaceCurrentYear('SELECT year(curdate()) - 1'), 'SELECT 2020- 1');
  assert.equal(plugValuePlaceholder('SELECT a FROM t WHERE b = value '), 'SELECT a FROM t WHERE b = 1 ');
  assert.equal(goldOrderMatters('SELECT a FROM t order  by a'), false);
  assert.equal(goldOrderMatters('SELECT a FROM t ORDER BY a'), true);
});

test('spider mode prepares both queries; ORDER BY is read from the gold only; --keep-distinct keeps DISTINCT', () => {
  const m = evalMode('spider');
  const p = m.prepare('SELECT DISTINCT a FROM t ORDER BY a', 'SELECT DISTINCT a FROM t\tignored field', {});
  assert.deepEqual(p, { gold: 'SELECT  a FROM t ORDER BY a', pred: 'SELECT  a FROM t', orderMatters: true });
  assert.equal(m.prepare('SELECT DISTINCT a FROM t', 'x', { keepDistinct: true }).gold, 'SELECT DISTINCT a FROM t');
  assert.deepEqual(evalMode('bird').prepare('SELECT DISTINCT a FROM t', 'SELECT a  > = 1', {}), {
    gold: 'SELECT DISTINCT a FROM t',
    pred: 'SELECT a  > = 1',
    orderMatters: false,
  });
  assert.equal(evalMode('omnisql').defaultTimeoutMs, 10_000);
  assert.throws(() => evalMode('nope'), /unknown mode/);
});

test('gold and prediction files in the official formats', () => {
  assert.deepEqual(parseGold('SELECT 1\tdb1\n\nSELECT 2\tdb2\r\n'), [
    { sql: 'SELECT 1', dbId: 'db1', line: 1 },
    { sql: 'SELECT 2', dbId: 'db2', line: 3 },
  ]);
  assert.throws(() => parseGold('SELECT 1\n'), /line 1/);
  assert.deepEqual(parsePredictions('SELECT 1\n\nSELECT 3\n'), ['SELECT 1', '', 'SELECT 3']);
});

test('the per-hardness table has the layout of the official print_scores', () => {
  const table = scoreByHardness(
    [
      { hardness: 'easy', exec: true },
      { hardness: 'easy', exec: false },
      { hardness: 'hard', exec: true },
      { hardness: undefined, exec: true },
    ],
    { exec: true, match: false },
  );
  assert.deepEqual(table.easy, { count: 2, exec: 0.5 });
  assert.deepEqual(table.all, { count: 4, exec: 0.75 });
  const lines = formatScoreTable(table).split('\n');
  assert.equal(
    lines[0],
    ' '.repeat(20) + ' ' + ['easy', 'medium', 'hard', 'extra', 'all'].map((s) => s.padEnd(20)).join(' '),
  );
  assert.equal(lines[1], 'count'.padEnd(20) + ' ' + ['2', '0', '1', '0', '4'].map((s) => s.padEnd(20)).join(' '));
  assert.equal(lines[2], '=====================   EXECUTION ACCURACY     =====================');
  assert.equal(
    lines[3],
    'execution'.padEnd(20) + ' ' + ['0.500', '0.000', '1.000', '0.000', '0.750'].map((s) => s.padEnd(20)).join(' '),
  );
  assert.equal(pyFixed3(0.0625), '0.062');
  assert.equal(pyFixed3(0.1875), '0.188');
  assert.equal(pyFixed3(2 / 3), '0.667');
});
