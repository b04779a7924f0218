// MTIR-SQL protocol: App. C.1 tool prompt and C.2 user prompt, tool calls read leniently with every tolerance
// recorded, <tool_response> with at most 10 records, the rethink message, <answer> with a ```sql block.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  mtirProtocol,
  MTIR_RETHINK_MESSAGE,
  MTIR_STOPS,
  MTIR_TOOL_JSON,
  readToolCall,
} from '../../../../src/core/agent/protocols/mtir';
import { getProtocol } from '../../../../src/core/agent/protocols';
import { errResult, fixture, okResult, session } from './helpers';

test('registry, defaults (B = 6) and stops', () => {
  assert.equal(getProtocol('mtir'), mtirProtocol);
  assert.equal(mtirProtocol.defaults.maxTurns, 6);
  assert.deepEqual(session(mtirProtocol).stop(), MTIR_STOPS);
});

test('system prompt declares the tool exactly; user prompt quotes App. C.2', () => {
  const [sys, user] = session(
    mtirProtocol,
    {},
    { evidence: 'French means country = France', question: 'How many French singers are there?' },
  ).start();
  assert.equal(sys.role, 'system');
  assert.ok(sys.content.includes(`<tools>\n${MTIR_TOOL_JSON}\n</tools>`));
  // The signature is valid JSON and names the paper's arguments.
  const tool = JSON.parse(MTIR_TOOL_JSON) as { name: string; parameters: { required: string[] } };
  assert.equal(tool.name, 'sql-execute_sql_query');
  assert.deepEqual(tool.parameters.required, ['db_name', 'sql']);
  assert.match(
    sys.content,
    /<tool_call>\n\{"name": <function-name>, "arguments": <args-json-object>\}\n<\/tool_call>$/,
  );
  assert.equal(user.role, 'user');
  assert.match(user.content, /^You are a helpful SQL expert assistant\./);
  assert.match(user.content, /Database: concert_singer\nDatabase Schema:\ncreate table stadium/);
  assert.match(user.content, /User Question: French means country = France How many French singers are there\?/);
  assert.match(
    user.content,
    /Important: Use EITHER thinking \+ tool calls OR thinking \+ final answer\. Do not mix the structures\./,
  );
  assert.match(user.content, /<answer>\n```sql\nYOUR_SQL_QUERY\n<\/answer>$/);
});

test("a clean call and answer (constructed: the paper's case study is only in figures)", () => {
  const s = session(mtirProtocol);
  const call = s.parse(fixture('mtir', 'constructed-call.txt'));
  assert.equal(call.kind, 'execute');
  assert.equal(call.sql, 'SELECT count(*) FROM singer');
  assert.match(call.thought ?? '', /^The question asks how many singers/);
  assert.deepEqual(call.problems, []);
  assert.deepEqual(call.mdp, ['PROPOSE', 'EXECUTE']);
  const r = s.respond(call, okResult(['count(*)'], [[6]]), 5);
  assert.deepEqual(r.observations, [
    {
      role: 'user',
      content: '<tool_response>\n{"columns": ["count(*)"], "data": [{"count(*)": 6}]}\n</tool_response>',
    },
  ]);
  const ans = s.parse(fixture('mtir', 'constructed-answer.txt'));
  assert.equal(ans.kind, 'answer');
  assert.equal(ans.sql, 'SELECT count(*) FROM singer');
  assert.deepEqual(ans.problems, []);
  assert.deepEqual(s.respond(ans, null, 4), {
    observations: [],
    done: true,
    end: 'answer',
    finalSql: 'SELECT count(*) FROM singer',
  });
});

test('a sloppy call: fence, single quotes, trailing commas, extra key — all read and recorded', () => {
  const a = session(mtirProtocol).parse(fixture('mtir', 'constructed-sloppy-call.txt'));
  assert.equal(a.kind, 'execute');
  assert.equal(a.sql, "SELECT name FROM singer WHERE country = 'France'");
  assert.deepEqual(a.problems, [
    'code fence around the tool-call JSON removed',
    'tool-call JSON: single-quoted string',
    'tool-call JSON: trailing comma',
    'extra keys ignored: id',
  ]);
});

test('at most 10 records, with the total when more', () => {
  const s = session(mtirProtocol);
  const a = s.parse(
    '<think>x</think><tool_call>{"name": "sql-execute_sql_query", "arguments": {"db_name": ' +
      '"concert_singer", "sql": "SELECT n FROM t"}}</tool_call>',
  );
  const r = s.respond(
    a,
    okResult(
      ['n'],
      Array.from({ length: 25 }, (_, i) => [i]),
    ),
    3,
  );
  const body = r.observations[0].content.replace(/^<tool_response>\n|\n<\/tool_response>$/g, '');
  const parsed = JSON.parse(body) as { columns: string[]; data: unknown[]; total_rows: number };
  assert.equal(parsed.data.length, 10);
  assert.equal(parsed.total_rows, 25);
});

test('tool-call variants', () => {
  const db = 'concert_singer';
  assert.deepEqual(
    readToolCall('{"name": "execute_sql_query", "arguments": {"db_name": "concert_singer", "sql": "SELECT 1"}}', db),
    { sql: 'SELECT 1', problems: ['tool name "execute_sql_query" taken as sql-execute_sql_query'] },
  );
  assert.deepEqual(
    readToolCall(
      '{"name": "sql-execute_sql_query", "arguments": "{\\"db_name\\": \\"concert_singer\\", \\"sql\\": ' +
        '\\"SELECT 1\\"}"}',
      db,
    ),
    { sql: 'SELECT 1', problems: ['"arguments" given as a JSON string'] },
  );
  assert.deepEqual(
    readToolCall('{"name": "sql-execute_sql_query", "arguments": {"db_name": "other", "sql": "SELECT 1"}}', db),
    {
      sql: 'SELECT 1',
      problems: ['db_name "other" is not this task\'s database "concert_singer"; the task\'s database is used'],
    },
  );
  assert.deepEqual(
    readToolCall('{"name": "sql-execute_sql_query", "sql": "SELECT 1", "db_name": "concert_singer"}', db),
    { sql: 'SELECT 1', problems: ['"sql" given beside "name" instead of inside "arguments"'] },
  );
  assert.equal(readToolCall('{"name": "web_search", "arguments": {"q": "x"}}', db).sql, null);
  assert.deepEqual(
    readToolCall('{"name": "sql-execute_sql_query", "arguments": {"db_name": "concert_singer", "sql": ""}}', db)
      .problems,
    ['empty "sql" argument'],
  );
  assert.match(readToolCall('SELECT 1', db).problems[0], /^tool call is not JSON \(no JSON object found\)/);
});

test(
  'neither call nor answer: the rethink text goes into the rollout (App. B line 20); budget spent ends with ' +
    'the last response',
  () => {
    // MTIR-SQL App. B, Algorithm 1 line 20: "Ask for rethink y ← y + ⟨My action is not correct. Let me rethink.⟩" — y
    // is
    // the model's own rollout, so the text is in the assistant role (joined to the model's turn), not a user message.
    const s = session(mtirProtocol);
    const a = s.parse('<think>Let me think about the schema.</think> The singer table looks right.');
    assert.equal(a.kind, 'invalid');
    assert.equal(a.thought, 'Let me think about the schema.');
    assert.deepEqual(s.respond(a, null, 2).observations, [{ role: 'assistant', content: MTIR_RETHINK_MESSAGE }]);
    const call = s.parse(
      '<think>x</think><tool_call>{"name": "sql-execute_sql_query", "arguments": {"db_name": ' +
        '"concert_singer", "sql": "SELECT nme FROM singer"}}</tool_call>',
    );
    const r = s.respond(call, errResult('no such column: nme'), 0);
    assert.equal(r.done, true);
    assert.equal(r.end, 'budget');
    assert.equal(r.observations[0].content, '<tool_response>\nno such column: nme\n</tool_response>');
    assert.equal(s.finalCall(), null);
    assert.deepEqual(s.parse('<think>y</think><answer>```sql\nSELECT name FROM singer\n```</answer>').mdp, [
      'SELF-CORRECT',
      'FINALIZE',
    ]);
  },
);

test('answer and tool call in one turn: the first one wins, the mix is recorded', () => {
  const s = session(mtirProtocol);
  const a = s.parse(
    '<think>x</think><answer>```sql\nSELECT 2\n```</answer><tool_call>{"name": "sql-execute_sql_query", ' +
      '"arguments": {"db_name": "concert_singer", "sql": "SELECT 1"}}</tool_call>',
  );
  assert.equal(a.kind, 'answer');
  assert.equal(a.sql, 'SELECT 2');
  assert.match(a.problems[0], /a tool call and an answer in one turn/);
  const b = s.parse(
    '<think>x</think><tool_call>{"name": "sql-execute_sql_query", "arguments": {"db_name": ' +
      '"concert_singer", "sql": "SELECT 1"}}</tool_call><answer>SELECT 2</answer>',
  );
  assert.equal(b.kind, 'execute');
  assert.equal(b.sql, 'SELECT 1');
});

test("answer without a fence, with the paper's curly-quote fence, and empty", () => {
  const s = session(mtirProtocol);
  const plain = s.parse('<think>x</think><answer>SELECT 1</answer>');
  assert.equal(plain.sql, 'SELECT 1');
  assert.deepEqual(plain.problems, ['no ```sql block in <answer>; its text is taken as the SQL']);
  const curly = s.parse('<think>x</think><answer> ‘‘‘sql SELECT 3 </answer>');
  assert.equal(curly.sql, 'SELECT 3');
  const empty = s.parse('<think>x</think><answer>```sql\n```</answer>');
  assert.equal(empty.kind, 'invalid');
  assert.ok(empty.problems.includes('empty <answer>'));
});

test('restoreStop: </tool_call> restored, a stop at <tool_response> left alone', () => {
  const s = session(mtirProtocol);
  assert.equal(s.restoreStop('<tool_call>{"a": 1}', '</tool_call>', 'stop'), '<tool_call>{"a": 1}</tool_call>');
  assert.equal(s.restoreStop('<tool_call>{"a": 1}', null, 'stop'), '<tool_call>{"a": 1}</tool_call>');
  assert.equal(
    s.restoreStop('<tool_call>{"a": 1}</tool_call>\n', '<tool_response>', 'stop'),
    '<tool_call>{"a": 1}</tool_call>\n',
  );
});

test('Qwen3 turn opened by the chat template: the text before </think> is the thought', () => {
  const a = session(mtirProtocol).parse(
    'Count the singers.\n</think>\n<tool_call>{"name": "sql-execute_sql_query", "arguments": {"db_name": ' +
      '"concert_singer", "sql": "SELECT count(*) FROM singer"}}</tool_call>',
  );
  assert.equal(a.kind, 'execute');
  assert.equal(a.thought, 'Count the singers.');
  assert.equal(a.problems.length, 1);
  assert.match(a.problems[0], /^no opening <think> before <\/think>/);
});
