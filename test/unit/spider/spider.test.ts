// Tests of spider/spider: NLTK word tokenizer: the rules that matter for SQL; official tokenize: values masked,
// lowercased, !=/>=/<= merged, "=" glued to a value stays glued
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDb, tempDir } from '../../helpers/fixtures';
import {
  nltkWordTokenize,
  spiderTokenize,
  parseSpiderSql,
  loadSpiderSchema,
  schemaFromTablesEntry,
  foreignKeyMap,
  foreignKeyMaps,
  spiderHardness,
  SpiderParseError,
  type TablesJsonEntry,
} from '../../../src/core/sql/spider/index';
import { exactSetMatch, SPIDER_PARTIAL_COMPONENTS, spiderHardnessOrder } from '../../../src/core/eval/exactMatch';
import { HARDNESS_CASES, EXACT_MATCH_CASES, CONCERT_TABLES } from './officialCases';

const dbPath = buildDb('spider-concert');
const schema = loadSpiderSchema(dbPath);
const tables = CONCERT_TABLES as unknown as TablesJsonEntry;
const fk = foreignKeyMap(tables);

// Token lists as NLTK 3.8's NLTKWordTokenizer and the official tokenize() return them.
test('NLTK word tokenizer: the rules that matter for SQL', () => {
  assert.deepEqual(nltkWordTokenize('SELECT T1.name FROM a WHERE T1.x >= 3.5 AND y<>2;'), [
    'SELECT',
    'T1.name',
    'FROM',
    'a',
    'WHERE',
    'T1.x',
    '>',
    '=',
    '3.5',
    'AND',
    'y',
    '<',
    '>',
    '2',
    ';',
  ]);
  assert.deepEqual(nltkWordTokenize('select count(*) from t where a=1 and b <= 2.'), [
    'select',
    'count',
    '(',
    '*',
    ')',
    'from',
    't',
    'where',
    'a=1',
    'and',
    'b',
    '<',
    '=',
    '2',
    '.',
  ]);
  assert.deepEqual(nltkWordTokenize('select a...b, c:d, e@f#g$h%i&j from t where k = 10.5 -- cannot'), [
    'select',
    'a',
    '...',
    'b',
    ',',
    'c',
    ':',
    'd',
    ',',
    'e',
    '@',
    'f',
    '#',
    'g',
    '$',
    'h',
    '%',
    'i',
    '&',
    'j',
    'from',
    't',
    'where',
    'k',
    '=',
    '10.5',
    '--',
    'can',
    'not',
  ]);
});

test('official tokenize: values masked, lowercased, !=/>=/<= merged, "=" glued to a value stays glued', () => {
  assert.deepEqual(spiderTokenize("SELECT `col` FROM t WHERE x LIKE '%a,b%' AND y = 1,000 AND w = -3"), [
    'select',
    '`',
    'col',
    '`',
    'from',
    't',
    'where',
    'x',
    'like',
    '"%a,b%"',
    'and',
    'y',
    '=',
    '1,000',
    'and',
    'w',
    '=',
    '-3',
  ]);
  assert.deepEqual(spiderTokenize('SELECT T1.name FROM a AS T1 WHERE T1.x >= 3.5 AND y<>2 AND z!="q";'), [
    'select',
    't1.name',
    'from',
    'a',
    'as',
    't1',
    'where',
    't1.x',
    '>=',
    '3.5',
    'and',
    'y',
    '<',
    '>',
    '2',
    'and',
    'z',
    '!',
    '=__val_62_64__',
    ';',
  ]);
  assert.throws(() => spiderTokenize("SELECT a FROM t WHERE b = 'it's'"), SpiderParseError);
});

test('schema: lowercased tables and columns, ids as the official idMap', () => {
  assert.deepEqual(schema.tables.get('singer'), ['singer_id', 'name', 'country', 'age', 'is_male']);
  assert.equal(schema.idMap.get('*'), '__all__');
  assert.equal(schema.idMap.get('concert.stadium_id'), '__concert.stadium_id__');
  assert.equal(schema.idMap.get('stadium'), '__stadium__');
  assert.equal(loadSpiderSchema(dbPath), schema, 'memoized per path');
  const fromJson = schemaFromTablesEntry(tables);
  assert.deepEqual([...fromJson.idMap].sort(), [...schema.idMap].sort());
});

test('parse: the official structure for a join with aliases, COUNT(DISTINCT), ORDER BY and LIMIT', () => {
  const sql = parseSpiderSql(
    schema,
    'SELECT T1.name , count(DISTINCT T2.concert_id) FROM singer AS T1 JOIN singer_in_concert AS T2 ON ' +
      'T1.singer_id = T2.singer_id WHERE T1.age BETWEEN 20 AND 30 GROUP BY T1.name ORDER BY count(*) DESC ' +
      'LIMIT 3',
  );
  assert.deepEqual(sql.select, [
    false,
    [
      [0, [0, [0, '__singer.name__', false], null]],
      [3, [0, [0, '__singer_in_concert.concert_id__', true], null]],
    ],
  ]);
  assert.deepEqual(sql.from, {
    table_units: [
      ['table_unit', '__singer__'],
      ['table_unit', '__singer_in_concert__'],
    ],
    conds: [
      [false, 2, [0, [0, '__singer.singer_id__', false], null], [0, '__singer_in_concert.singer_id__', false], null],
    ],
  });
  assert.deepEqual(sql.where, [[false, 1, [0, [0, '__singer.age__', false], null], 20, 30]]);
  assert.deepEqual(sql.groupBy, [[0, '__singer.name__', false]]);
  assert.deepEqual(sql.orderBy, ['desc', [[0, [3, '__all__', false], null]]]);
  assert.equal(sql.limit, 3);
  assert.equal(sql.intersect, null);
});

test('hardness of every class and the official quirks (NOT counts as an aggregate), as the official script', () => {
  for (const [sql, expected, officialError] of HARDNESS_CASES) {
    const r = spiderHardness(sql, schema);
    assert.equal(r.hardness, expected, sql);
    if (officialError) assert.match(r.error ?? '', new RegExp(officialError), sql);
  }
  const levels = new Set(HARDNESS_CASES.map((c) => c[1]));
  for (const l of ['easy', 'medium', 'hard', 'extra']) assert.ok(levels.has(l), `a case of ${l}`);
});

test('exact-set match and the failing partial components, as the official script', () => {
  for (const [gold, pred, match, predParsed, failing] of EXACT_MATCH_CASES) {
    const r = exactSetMatch(gold, pred, schema, fk);
    const label = `${gold}  VS  ${pred}`;
    assert.equal(r.match, match === 1, label);
    assert.equal(r.predParseError === undefined, predParsed, label);
    const bad = Object.entries(r.partial!)
      .filter(([, s]) => !(s.acc === 1 || (s.labelCount === 0 && s.predCount === 0)))
      .map(([k]) => k);
    assert.deepEqual(bad, failing, label);
  }
  assert.ok(EXACT_MATCH_CASES.some((c) => c[2] === 1) && EXACT_MATCH_CASES.some((c) => c[2] === 0));
});

test('exact-set match: partial scores carry counts; components in the official print order', () => {
  const r = exactSetMatch(
    'SELECT name , age FROM singer WHERE age > 1 AND country = "x"',
    'SELECT name FROM singer WHERE age > 5',
    schema,
    fk,
  );
  assert.equal(r.match, false);
  assert.deepEqual(r.partial!.select, { acc: 0, rec: 0, f1: 0, labelCount: 2, predCount: 1 });
  assert.deepEqual(r.partial!.where, { acc: 0, rec: 0, f1: 0, labelCount: 2, predCount: 1 });
  assert.deepEqual(Object.keys(r.partial!), [...SPIDER_PARTIAL_COMPONENTS]);
  assert.deepEqual(spiderHardnessOrder, ['easy', 'medium', 'hard', 'extra', 'all']);
});

test('exact-set match: an unparsable gold is reported, never thrown', () => {
  const r = exactSetMatch('SELECT nosuch FROM singer', 'SELECT name FROM singer', schema, fk);
  assert.equal(r.match, false);
  assert.match(r.goldParseError ?? '', /AssertionError/);
});

test('foreign-key maps: each key group maps to its lowest column; read once per tables.json', () => {
  assert.equal(fk.get('__singer_in_concert.singer_id__'), '__singer.singer_id__');
  assert.equal(fk.get('__singer.singer_id__'), '__singer.singer_id__');
  assert.equal(fk.get('__concert.stadium_id__'), '__stadium.stadium_id__');
  assert.equal(fk.get('__singer.name__'), undefined);
  const path = join(tempDir(), 'tables.json');
  writeFileSync(path, JSON.stringify([CONCERT_TABLES]));
  const maps = foreignKeyMaps(path);
  assert.deepEqual([...maps.get('concert')!], [...fk]);
  assert.equal(foreignKeyMaps(path), maps);
});

// Official outcomes: a FROM subquery is compared whole (values and DISTINCT included, no rebuild), and two different
// FROM subqueries make the official sorted() raise TypeError (the script would stop).
test('exact-set match: FROM subqueries as the official script compares them', () => {
  const g = 'SELECT count(*) FROM (SELECT name FROM singer WHERE age > 3)';
  assert.equal(
    exactSetMatch(g, 'SELECT count(*) FROM (SELECT name FROM singer WHERE age > 4)', schema, fk).match,
    false,
  );
  assert.equal(
    exactSetMatch(g, 'SELECT count(*) FROM (SELECT DISTINCT name FROM singer WHERE age > 3)', schema, fk).match,
    false,
  );
  assert.equal(exactSetMatch(g, g, schema, fk).match, true);
  assert.equal(spiderHardness(g, schema).hardness, 'easy');
  const two = 'SELECT count(*) FROM (SELECT name FROM singer) (SELECT age FROM singer)';
  const r = exactSetMatch(two, two, schema, fk);
  assert.equal(r.match, false);
  assert.match(r.error ?? '', /TypeError/);
});
