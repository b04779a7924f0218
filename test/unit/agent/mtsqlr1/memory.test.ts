// The memory string and the Python reprs in it: App. D.2's "Parsed Elements" exactly, Python-style rows, the
// 200-character exec_sql result, and history results filled by running the earlier SQL in the real sandbox.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../../src/core/db/pool';
import {
  memoryString,
  parsedElementsOf,
  pyRows,
  pyStr,
  spiderSchemaOf,
  withHistoryResults,
  historyResultText,
} from '../../../../src/core/agent/protocols/mtsqlr1';
import type { ExecResult } from '../../../../src/core/db/types';
import { D1_GOLD, d1Session, d1Task, db, errResult, okResult } from './support';
import { concertDb } from '../protocols/helpers';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());

const D2_HISTORY = [
  { question: 'How many government forms are in the table?', sql: 'SELECT count ( GovernmentForm ) FROM country' },
  {
    question: 'How many of those have an average life expectancy that is longer than 72?',
    sql: 'SELECT GovernmentForm FROM country GROUP BY GovernmentForm HAVING avg ( LifeExpectancy ) > 72',
  },
];

test("App. D.2's memory: two turns, numbered from 0, with the Parsed Elements the trace prints", () => {
  const spider = spiderSchemaOf(db('world-country').schema);
  const mem = memoryString(
    D2_HISTORY.map((h, i) => ({ ...h, result: ['[(239,)]', "[('Commonwealth of the US',)]"][i] })),
    spider,
  );
  assert.equal(
    mem,
    [
      '== Turn 0 ==',
      'Question: Question: How many government forms are in the table?',
      'Ground-Truth SQL: SELECT count ( GovernmentForm ) FROM country',
      "Parsed Elements for each term: {'from': {'table_units': [('table_unit', '__country__')], 'conds': " +
        "[]}, 'select': ['__country.governmentform__'], 'where': [], 'groupBy': [], 'having': [], 'orderBy': " +
        "[], 'limit': None, 'intersect': None, 'union': None, 'except': None}",
      'SQL Results (truncated to 50 characters): [(239,)]',
      '== Turn 0 ==',
      '',
      '== Turn 1 ==',
      'Question: Question: How many of those have an average life expectancy that is longer than 72?',
      'Ground-Truth SQL: SELECT GovernmentForm FROM country GROUP BY GovernmentForm HAVING avg ( LifeExpectancy ) > 72',
      "Parsed Elements for each term: {'from': {'table_units': [('table_unit', '__country__')], 'conds': " +
        "[]}, 'select': ['__country.governmentform__'], 'where': [], 'groupBy': [(0, " +
        "'__country.governmentform__', False)], 'having': [(False, 3, (0, (5, '__country.lifeexpectancy__', " +
        "False), None), 72.0, None)], 'orderBy': [], 'limit': None, 'intersect': None, 'union': None, " +
        "'except': None}",
      "SQL Results (truncated to 50 characters): [('Commonwealth of the US',)]",
      '== Turn 1 ==',
    ].join('\n'),
  );
  assert.equal(memoryString([], spider), '', 'the first question of a dialogue has an empty memory');
});

test('parsed elements of ordering, limits, subqueries and set operations; unparseable SQL says so', () => {
  const spider = spiderSchemaOf(concertDb().schema);
  const nested = parsedElementsOf(
    spider,
    "SELECT DISTINCT name FROM singer WHERE age > (SELECT avg(age) FROM singer) AND country = 'France' " +
      'ORDER BY age DESC LIMIT 3',
  );
  assert.ok(nested.includes("'select': ['__singer.name__']"), nested);
  assert.ok(
    nested.includes(
      "'where': [(False, 3, (0, (0, '__singer.age__', False), None), {'from': {'table_units': " +
        "[('table_unit', '__singer__')], 'conds': []}, 'select': (False, [(5, (0, (0, '__singer.age__', " +
        'False), None))]), ',
    ),
    nested,
  );
  // Spider's tokenizer turns 'France' into the token "France" (case kept), and values stay the quoted token.
  assert.ok(
    nested.includes(`'and', (False, 2, (0, (0, '__singer.country__', False), None), '"France"', None)]`),
    nested,
  );
  assert.ok(nested.includes("'orderBy': ('desc', [(0, (0, '__singer.age__', False), None)]), 'limit': 3,"), nested);
  const union = parsedElementsOf(spider, 'SELECT name FROM singer UNION SELECT name FROM stadium');
  assert.match(
    union,
    new RegExp(
      /'intersect': None, 'union': \{'from': \{'table_units': \[\('table_unit', '__stadium__'\)\], /.source +
        /'conds': \[\]\}, 'select': \(False, \[\(0, \(0, \(0, '__stadium.name__', False\), None/.source +
        /\)\)\]\)/.source,
    ),
  );
  assert.match(
    parsedElementsOf(spider, 'SELECT FROM WHERE'),
    /^\(not parsed: the Spider parser rejects this SQL: .+\)$/,
  );
  assert.match(parsedElementsOf(spider, 'SELECT nope FROM singer'), /^\(not parsed/);
});

test("rows print as Python's str(fetchall()); exec_sql's message is cut to 200 characters", () => {
  assert.equal(pyRows(okResult(['n'], [[4]])), '[(4,)]');
  assert.equal(
    pyRows(
      okResult(
        ['a', 'b', 'c'],
        [
          ["it's", null, 2.5],
          ['say "hi"', 1, -0.0001],
        ],
      ),
    ),
    `[("it's", None, 2.5), ('say "hi"', 1, -0.0001)]`,
  );
  assert.equal(pyRows(okResult([], [])), '[]');
  const real: ExecResult = {
    ...okResult(['x'], [[193]]),
    columnStorage: [{ integer: false, real: true, text: false, blob: false, null: false }],
  };
  assert.equal(pyRows(real), '[(193.0,)]');
  assert.equal(pyStr('a\nb\\'), "'a\\nb\\\\'");
  assert.equal(pyRows(okResult(['n'], [[1], [2], [3]]), 2), '[(1,), (2,)]');

  const forms = [
    'Administrated by the UN',
    'Autonomous Area',
    'Co-administrated',
    'Commonwealth of the US',
    'Constitutional Monarchy',
    'Constitutional Monarchy (Emirate)',
  ];
  const rows = forms.map((f, i) => [f, [885000, 3101000, 0, 3947000, 405893000, 2441000][i]]);
  const s = d1Session();
  const r = s.respond(
    s.parse(
      '<tool_call>{"name": "exec_sql", "arguments": {"code": "SELECT GovernmentForm, SUM(Population) FROM ' +
        'country GROUP BY GovernmentForm"}}</tool_call>',
    ),
    okResult(['GovernmentForm', 'SUM(Population)'], rows),
    3,
  );
  const line = /- SQL execution results \(truncated to 200 characters\): (.*)\n/.exec(r.observations[0].content)![1];
  assert.equal(line.length, 200);
  assert.equal(line, ('The sql results example is: ' + pyRows(okResult(['g', 'p'], rows))).slice(0, 200));
  assert.ok(
    line.startsWith("The sql results example is: [('Administrated by the UN', 885000), ('Autonomous Area', 3101000)"),
  );

  const e = d1Session();
  const er = e.respond(
    e.parse('<tool_call>{"name": "exec_sql", "arguments": {"code": "SELECT nme FROM car_makers"}}</tool_call>'),
    errResult('no such column: nme'),
    3,
  );
  assert.match(er.observations[0].content, /\): The sql execution failed: OperationalError: no such column: nme\n/);
});

test('history results come from running the earlier SQL in the sandbox; existing results are kept', async () => {
  const task = await withHistoryResults(d1Task(), pool);
  assert.deepEqual(task.history, [
    {
      question: 'Can you list the number of car makers on each continent?',
      sql: D1_GOLD,
      result: "[('america', 4), ('asia', 7), ('europe', 11)]",
    },
  ]);
  const broken = await withHistoryResults(
    d1Task({
      history: [
        { question: 'q', sql: 'SELECT nope FROM car_makers' },
        { question: 'q2', sql: 'SELECT 1', result: 'kept' },
      ],
    }),
    pool,
  );
  assert.deepEqual(
    broken.history!.map((h) => h.result),
    ['OperationalError: no such column: nope', 'kept'],
  );
  const many = await withHistoryResults(
    d1Task({ history: [{ question: 'all makers', sql: 'SELECT Id FROM car_makers' }] }),
    pool,
    { maxRows: 3 },
  );
  assert.equal(many.history![0].result, '[(1,), (2,), (3,)]');
  assert.equal(historyResultText(okResult(['n'], [[1], [2]]), 1), '[(1,)]');
  const unchanged = d1Task({ history: [] });
  assert.equal(await withHistoryResults(unchanged, pool), unchanged);
});
