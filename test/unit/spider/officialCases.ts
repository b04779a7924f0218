// Expected values were produced by running the official Spider scripts (taoyds/test-suite-sql-eval evaluation.py,
// taoyds/spider process_sql.py; NLTK word tokenizer without the Punkt sentence split) on
// test/fixtures/spider-concert.sql
// with the foreign keys of CONCERT_TABLES below: hardness per query, then exact match and failing partial components
// per pair.
export const HARDNESS_CASES: Array<[sql: string, hardness: string | null, officialError?: string]> = [
  ['SELECT name FROM singer', 'easy'],
  ['SELECT name , age FROM singer WHERE age > 20', 'medium'],
  ['SELECT count(*) FROM singer WHERE age != 3', 'easy'],
  ["SELECT count(*) FROM singer WHERE name NOT IN ('a')", 'medium'],
  ['SELECT country FROM singer GROUP BY country HAVING count(*) > 1', 'easy'],
  ['SELECT country FROM singer GROUP BY country HAVING count(*) > 1 AND max(age) > 3', 'easy'],
  ['SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)', 'hard'],
  ["SELECT name FROM singer WHERE country = 'x' INTERSECT SELECT name FROM singer WHERE age > 3", 'hard'],
  [
    'SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id JOIN ' +
      'concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = 2014 ORDER BY T1.age DESC LIMIT 1',
    'extra',
  ],
  ['SELECT name , capacity FROM stadium WHERE capacity > 5 OR average < 3 ORDER BY capacity LIMIT 2', 'extra'],
  ["SELECT name FROM singer WHERE name LIKE '%a%' OR country LIKE '%b%'", 'extra'],
  ['SELECT max(capacity) , min(capacity) , avg(average) FROM stadium', 'medium'],
  ['SELECT name AS n FROM singer', null, 'AssertionError'],
  ['SELECT * FROM singer s', null, 'KeyError'],
  ["SELECT name FROM singer WHERE country = 'it's'", null, 'AssertionError'],
  ['SELECT name FROM singer , concert', null, 'KeyError'],
  ['SELECT T1.name FROM singer AS singer', null, 'AssertionError'],
];

/**
 * [gold, prediction, official exact match, prediction parsed, components whose f1 is not 1 (among those with items)]
 */
export const EXACT_MATCH_CASES: Array<
  [gold: string, pred: string, match: 0 | 1, predParsed: boolean, failing: string[]]
> = [
  ['SELECT name FROM singer WHERE age > 20', 'SELECT name FROM singer WHERE age > 99', 1, true, []],
  ['SELECT name FROM singer WHERE age > 20', 'select NAME from SINGER   where AGE>99', 1, true, []],
  [
    'SELECT name FROM singer WHERE age > 20',
    'SELECT country FROM singer WHERE age > 20',
    0,
    true,
    ['select', 'select(no AGG)'],
  ],
  ['SELECT name FROM singer WHERE age > 20', 'SELECT count(name) FROM singer WHERE age > 20', 0, true, ['select']],
  ['SELECT name FROM singer WHERE age > 20', 'SELECT name FROM singer WHERE age < 20', 0, true, ['where']],
  [
    'SELECT name FROM singer WHERE age > 20',
    'SELECT name FROM singer WHERE country > 20',
    0,
    true,
    ['where', 'where(no OP)'],
  ],
  [
    'SELECT name FROM singer WHERE age > 20',
    "SELECT name FROM singer WHERE age > 20 AND country = 'x'",
    0,
    true,
    ['where', 'where(no OP)', 'and/or'],
  ],
  [
    'SELECT name FROM singer WHERE age > 20',
    "SELECT name FROM singer WHERE age > 20 OR country = 'x'",
    0,
    true,
    ['where', 'where(no OP)', 'and/or', 'keywords'],
  ],
  ['SELECT name FROM singer WHERE age > 20', 'SELECT DISTINCT name FROM singer WHERE age > 20', 1, true, []],
  ['SELECT name FROM singer WHERE age > 20', 'SELECT name FROM singer WHERE age > value ', 1, true, []],
  [
    'SELECT name FROM singer WHERE age > 20',
    'SELECT name FROM singer WHERE age >',
    0,
    false,
    ['select', 'select(no AGG)', 'where', 'where(no OP)', 'keywords'],
  ],
  [
    'SELECT name FROM singer WHERE age > 20',
    'SELECT name FROM stadium WHERE capacity > 20',
    0,
    true,
    ['select', 'select(no AGG)', 'where', 'where(no OP)'],
  ],
  ['SELECT name , age FROM singer', 'SELECT age , name FROM singer', 1, true, []],
  [
    'SELECT country , count(*) FROM singer GROUP BY country',
    'SELECT country , count(*) FROM singer GROUP BY name',
    0,
    true,
    ['group(no Having)', 'group'],
  ],
  [
    'SELECT country FROM singer GROUP BY country HAVING count(*) > 1',
    'SELECT country FROM singer GROUP BY country HAVING count(*) > 7',
    1,
    true,
    [],
  ],
  [
    'SELECT country FROM singer GROUP BY country HAVING count(*) > 1',
    'SELECT country FROM singer GROUP BY country HAVING max(age) > 1',
    0,
    true,
    ['group'],
  ],
  [
    'SELECT country FROM singer GROUP BY country HAVING count(*) > 1',
    'SELECT country FROM singer GROUP BY country',
    0,
    true,
    ['group', 'keywords'],
  ],
  [
    'SELECT name FROM singer ORDER BY age DESC LIMIT 1',
    'SELECT name FROM singer ORDER BY age DESC LIMIT 3',
    1,
    true,
    [],
  ],
  [
    'SELECT name FROM singer ORDER BY age DESC LIMIT 1',
    'SELECT name FROM singer ORDER BY age ASC LIMIT 1',
    0,
    true,
    ['order', 'keywords'],
  ],
  [
    'SELECT name FROM singer ORDER BY age DESC LIMIT 1',
    'SELECT name FROM singer ORDER BY age DESC',
    0,
    true,
    ['order', 'keywords'],
  ],
  [
    "SELECT name FROM singer WHERE country = 'x' INTERSECT SELECT name FROM singer WHERE age > 3",
    "SELECT name FROM singer WHERE country = 'x' UNION SELECT name FROM singer WHERE age > 3",
    0,
    true,
    ['IUEN', 'keywords'],
  ],
  [
    "SELECT name FROM singer WHERE country = 'x' INTERSECT SELECT name FROM singer WHERE age > 3",
    "SELECT name FROM singer WHERE country = 'y' INTERSECT SELECT name FROM singer WHERE age > 9",
    1,
    true,
    [],
  ],
  [
    'SELECT name FROM singer WHERE singer_id NOT IN (SELECT singer_id FROM singer_in_concert)',
    'SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert)',
    0,
    true,
    ['where', 'keywords'],
  ],
  [
    'SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert)',
    'SELECT name FROM singer WHERE singer_id IN (SELECT DISTINCT singer_id FROM singer_in_concert)',
    0,
    true,
    ['where'],
  ],
  [
    "SELECT name FROM singer WHERE name LIKE '%a%'",
    "SELECT name FROM singer WHERE name = '%a%'",
    0,
    true,
    ['where', 'keywords'],
  ],
  [
    'SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id',
    'SELECT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T2.singer_id = T1.singer_id',
    1,
    true,
    [],
  ],
  [
    'SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id WHERE ' +
      'T2.singer_id = 3',
    'SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id WHERE ' +
      'T1.singer_id = 3',
    1,
    true,
    [],
  ],
  [
    'SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id',
    'SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.concert_id',
    0,
    true,
    [],
  ],
  [
    'SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id',
    'SELECT name FROM singer',
    0,
    true,
    [],
  ],
];

export const CONCERT_TABLES = {
  db_id: 'concert',
  table_names_original: ['stadium', 'singer', 'concert', 'singer_in_concert'],
  column_names_original: [
    [-1, '*'],
    [0, 'Stadium_ID'],
    [0, 'Name'],
    [0, 'Location'],
    [0, 'Capacity'],
    [0, 'Average'],
    [1, 'Singer_ID'],
    [1, 'Name'],
    [1, 'Country'],
    [1, 'Age'],
    [1, 'Is_male'],
    [2, 'concert_ID'],
    [2, 'concert_Name'],
    [2, 'Theme'],
    [2, 'Stadium_ID'],
    [2, 'Year'],
    [3, 'concert_ID'],
    [3, 'Singer_ID'],
  ],
  foreign_keys: [
    [14, 1],
    [17, 6],
    [16, 11],
  ],
};
