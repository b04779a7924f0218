// The session around the parser: the opening prompt (App. D), tool schemas (App. B.0.1), stop strings, invalid turns,
// the turn budget and the switches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getProtocol } from '../../../../src/core/agent/protocols';
import { mtsqlr1Protocol, NOT_EXECUTED, type Mtsqlr1Session } from '../../../../src/core/agent/protocols/mtsqlr1';
import type { ProtocolConfig, Task } from '../../../../src/core/agent/types';
import { call, d1Session, d1Task, db, okResult } from './support';

function worldSession(task: Partial<Task> = {}): Mtsqlr1Session {
  const t: Task = {
    question: 'What is the population of each of those government forms?',
    dbPath: db('world-country').path,
    history: [
      { question: 'How many government forms are in the table?', sql: 'SELECT count ( GovernmentForm ) FROM country' },
      {
        question: 'How many of those have an average life expectancy that is longer than 72?',
        sql: 'SELECT GovernmentForm FROM country GROUP BY GovernmentForm HAVING avg ( LifeExpectancy ) > 72',
      },
    ],
    ...task,
  };
  return mtsqlr1Protocol.create({
    task: t,
    config: { ...mtsqlr1Protocol.defaults },
    schema: db('world-country').schema,
  }) as Mtsqlr1Session;
}

test("registered as mtsqlr1 with the paper's budget: 4 generations (verl multi_turn.max_turns: 4)", () => {
  assert.equal(getProtocol('mtsqlr1'), mtsqlr1Protocol);
  assert.equal(mtsqlr1Protocol.defaults.maxTurns, 4);
  assert.equal(d1Session().finalCall(), null);
});

test(
  "the opening: tool schemas of App. B.0.1 in the system message, App. D's prompt with the dialogue in the " +
    'user message',
  () => {
    const [system, user] = worldSession().start();
    assert.equal(system.role, 'system');
    assert.ok(
      system.content.includes(
        '<tools>\n{"type": "function", "function": {"name": "exec_sql", "description": "A tool for ' +
          'executing sql and return the query results", "parameters": {"type": "object", "properties": ' +
          '{"code": {"type": "string", "description": "The current generated SQL that will be executed"}}, ' +
          '"required": ["code"]}}}\n' +
          '{"type": "function", "function": {"name": "memory_retrieve", "description": "A tool for ' +
          'retrieving the historical questions and ground-truth SQL in this dialogue", "parameters": ' +
          '{"type": "object", "properties": {"code": {"type": "string", "description": "The current ' +
          'generated SQL that needs to be verified coherence with the given historical memory"}}, ' +
          '"required": ["code"]}}}\n</tools>',
      ),
      system.content,
    );
    assert.ok(
      system.content.endsWith('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'),
    );
    assert.equal(user.role, 'user');
    const u = user.content;
    assert.ok(
      u.startsWith(
        'You are a SQL expert. Your task is to translate a natural language question into SQL through ' +
          'step-by-step reasoning. Please follow the steps:\n\n1. Reasoning\n   - Always think step by step ' +
          "before calling the tool. Draft the SQL.\n2. Calling 'exec_sql' tool (Please call 'exec_sql' tool at " +
          'least once)\n',
      ),
      u,
    );
    assert.ok(
      u.includes(
        '2. Return the final SQL enclosed in: <answer_sql> ... </answer_sql>\n\nHere are previous question ' +
          'and corresponding correct SQL in this dialogue:\n\n## Turn 1 ##\nUser: "Database schema:\ncreate ' +
          'table country (\n    Code TEXT,',
      ),
      u,
    );
    assert.ok(u.includes('/*\n1 example rows from table country:\nCode'), 'one example row per table, as App. D shows');
    assert.ok(
      u.includes(
        'Question: How many government forms are in the table? "\nCorresponding Correct SQL: "SELECT count ' +
          '( GovernmentForm ) FROM country"\n\n## Turn 2 ##\nUser: "Question: How many of those have an ' +
          'average life expectancy that is longer than 72? "\nCorresponding Correct SQL: "SELECT ' +
          'GovernmentForm FROM country GROUP BY GovernmentForm HAVING avg ( LifeExpectancy ) > 72"\n\n',
      ),
      u,
    );
    assert.ok(
      u.endsWith(
        'Now please translate the following question to SQL step by step\nQuestion: What is the population ' +
          'of each of those government forms? (Note you only need to translate the question to SQL instead ' +
          'answer the question. Once you feel you are ready for the final SQL, directly return the SQL inside ' +
          "<answer_sql> and </answer_sql> at the end of your response.\nNote please call 'exec_sql' tool at " +
          'least once)',
      ),
      u,
    );
  },
);

test('the first question of a dialogue: no history header, the schema stands before the question', () => {
  const u = worldSession({ history: undefined, question: 'Question: How many countries are there?' }).start()[1]
    .content;
  assert.ok(!u.includes('Here are previous question'));
  assert.ok(u.includes('<answer_sql> ... </answer_sql>\n\nDatabase schema:\ncreate table country ('), u);
  assert.ok(
    u.includes(
      '\nNow please translate the following question to SQL step by step\nQuestion: How many countries ' +
        'are there? (Note',
    ),
    'no doubled "Question:" prefix',
  );
});

test('stop strings: the turn ends at </tool_call>, which restoreStop puts back', () => {
  const s = d1Session();
  assert.deepEqual(s.stop(), ['</tool_call>']);
  assert.deepEqual(d1Session(undefined, { stopAtToolCall: false }).stop(), []);
  const cut = '<think>x</think>\n<tool_call>\n{"name": "exec_sql", "arguments": {"code": "SELECT 1"}}\n';
  assert.equal(s.restoreStop(cut, '</tool_call>', 'stop'), cut + '</tool_call>');
  assert.equal(s.restoreStop(cut, null, 'stop'), cut + '</tool_call>', 'inferred from the unclosed <tool_call>');
  assert.equal(s.restoreStop(cut, null, 'length'), cut, 'a length cut is not a stop');
  assert.equal(s.restoreStop('<answer_sql>SELECT 1</answer_sql>', null, 'stop'), '<answer_sql>SELECT 1</answer_sql>');
  assert.equal(s.restoreStop(cut + '</tool_call>', '</tool_call>', 'stop'), cut + '</tool_call>');
  assert.equal(s.parse(s.restoreStop(cut, '</tool_call>', 'stop')).problems.length, 0);
});

test('an invalid turn gets a message naming the problem; the state is unchanged so labels continue', () => {
  const s = d1Session();
  const bad = s.parse('<think>hmm</think>\n<tool_call>{"name": "run", "arguments": {"code": "SELECT 1"}}</tool_call>');
  const r = s.respond(bad, null, 3);
  assert.deepEqual([r.done, r.end, r.observations.length, r.observations[0].role], [false, null, 1, 'user']);
  assert.match(
    r.observations[0].content,
    new RegExp(
      /^Your response did not contain a usable action \(unknown tool "run"; the tools are exec_sql /.source +
        /and memory_retrieve\)\.\nCall a tool via <tool_call>/.source,
    ),
  );
  assert.deepEqual(s.parse(call('exec_sql', 'SELECT 1')).mdp, ['PROPOSE', 'EXECUTE']);
});

test("memory_retrieve shows the SQL's earlier exec_sql result, or says it was not executed", () => {
  const s = d1Session();
  const m = s.respond(s.parse(call('memory_retrieve', 'SELECT Maker FROM car_makers')), null, 3);
  assert.ok(m.observations[0].content.includes(`The execution results of the proposed SQL: ${NOT_EXECUTED}\n`));
  s.respond(s.parse(call('exec_sql', 'SELECT Maker FROM car_makers LIMIT 1')), okResult(['Maker'], [['amc']]), 2);
  const again = s.respond(s.parse(call('memory_retrieve', 'select maker from car_makers limit 1;')), null, 1);
  assert.ok(
    again.observations[0].content.includes(
      "The execution results of the proposed SQL: The sql results example is: [('amc',)]\n",
    ),
    'same SQL up to spelling',
  );
});

test(
  'budget: a tool call on the last turn is not answered (verl stops after max_turns generations); optional ' +
    'fallback SQL',
  () => {
    for (const [config, expected] of [
      [{}, null],
      [{ fallbackToLastSql: true }, 'SELECT 2'],
    ] as Array<[Partial<ProtocolConfig>, string | null]>) {
      const s = d1Session(d1Task(), config);
      s.respond(s.parse(call('exec_sql', 'SELECT 1')), okResult(['1'], [[1]]), 1);
      const last = s.respond(s.parse(call('exec_sql', 'SELECT 2')), okResult(['2'], [[2]]), 0);
      assert.deepEqual(last, { observations: [], done: true, end: 'budget', finalSql: expected });
    }
  },
);

test("toolRole 'tool': tool results as tool messages without the <tool_response> wrapper", () => {
  const s = d1Session(d1Task(), { toolRole: 'tool' });
  const r = s.respond(s.parse(call('exec_sql', 'SELECT 1')), okResult(['1'], [[1]]), 3);
  assert.equal(r.observations[0].role, 'tool');
  assert.ok(r.observations[0].content.startsWith('Recap:\n'));
});
