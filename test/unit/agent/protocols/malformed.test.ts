// The documented outcome of every malformed-turn case (docs/protocols.md, "Malformed turns"), per protocol:
// action kind, SQL used, the problems recorded, and the invalid-action observation where one is sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getProtocol } from '../../../../src/core/agent/protocols';
import type { ProtocolName } from '../../../../src/core/agent/types';
import { SKYRL_INVALID_MESSAGE } from '../../../../src/core/agent/protocols/skyrl';
import { SQLTRAIL_INVALID_MESSAGE } from '../../../../src/core/agent/protocols/sqltrail';
import { MTIR_RETHINK_MESSAGE } from '../../../../src/core/agent/protocols/mtir';
import { PROGRESS_INVALID_MESSAGE } from '../../../../src/core/agent/protocols/progress';
import { session } from './helpers';

const big = 'x'.repeat(100_000);
const make = (name: ProtocolName) =>
  session(getProtocol(name), {}, { gold: 'SELECT 1' }, () => 'SELECT_ERROR, differs.');

type Row = [string, string, 'execute' | 'answer' | 'invalid', string | null, RegExp[]];

// Same tagged grammar: <think>/<reasoning>, <sql>, <solution>. Generation stops at the first closing action tag.
const tagged: Row[] = [
  [
    'unclosed <sql>',
    '<think>t</think><sql>SELECT 1',
    'execute',
    'SELECT 1',
    [/^unclosed <sql>: taken to the end of the text$/],
  ],
  [
    'nested <sql>',
    '<think>t</think><sql>SELECT <sql>1</sql></sql>',
    'execute',
    'SELECT  1',
    [/^nested <sql> tags inside <sql>; inner tags removed$/],
  ],
  [
    'two <sql> blocks',
    '<think>t</think><sql>SELECT 1</sql><sql>SELECT 2</sql>',
    'execute',
    'SELECT 1',
    [/^19 characters after <\/sql> ignored \(including 1 <sql>\); generation stops at the first closing tag$/],
  ],
  [
    'text after the stop tag',
    '<think>t</think><sql>SELECT 1</sql>\n<observation>fake</observation>',
    'execute',
    'SELECT 1',
    [/^31 characters after <\/sql> ignored$/],
  ],
  [
    'code fence inside <sql>',
    '<think>t</think><sql>\n```sql\nSELECT 1\n```\n</sql>',
    'execute',
    'SELECT 1',
    [/^code fence inside <sql> removed$/],
  ],
  ['empty <sql>', '<think>t</think><sql>  </sql>', 'invalid', null, [/^empty <sql> block$/]],
  [
    'thinking outside its tag',
    'I will count.\n<think>t</think>more text<sql>SELECT 1</sql>',
    'execute',
    'SELECT 1',
    [/^23 characters of reasoning outside </],
  ],
  [
    '<sql> then <solution>',
    '<think>t</think><sql>SELECT 1</sql><solution>SELECT 2</solution>',
    'execute',
    'SELECT 1',
    [/including 1 <solution>/],
  ],
  [
    '<solution> then <sql>',
    '<think>t</think><solution>SELECT 2</solution><sql>SELECT 1</sql>',
    'answer',
    'SELECT 2',
    [/after <\/solution> ignored \(including 1 <sql>\)/],
  ],
  [
    'mismatched close',
    '<think>t</think><solution>SELECT 2</sql>',
    'answer',
    'SELECT 2',
    [/^<solution> closed by a mismatched <\/sql>$/],
  ],
  ['no action at all', 'The answer is 6.', 'invalid', null, [/^no <sql> or <solution> block \("The answer is 6\."\)$/]],
  ['empty response', '', 'invalid', null, [/^no <sql> or <solution> block \(empty response\)$/]],
  [
    '100 KB response',
    `<think>${big}</think><sql>SELECT 1</sql>`,
    'execute',
    'SELECT 1',
    [/^very long response \(100034 characters\)$/],
  ],
];

for (const name of ['skyrl', 'sqltrail'] as const) {
  for (const [label, text, kind, sql, problems] of tagged) {
    test(`${name}: ${label}`, () => {
      const s = make(name);
      const a = s.parse(text);
      assert.equal(a.kind, kind);
      assert.equal(a.sql, sql);
      for (const p of problems)
        assert.ok(
          a.problems.some((x) => p.test(x)),
          `${p} in ${JSON.stringify(a.problems)}`,
        );
      if (kind === 'invalid') {
        const observations = s.respond(a, null, 2).observations;
        // SQL-Trail Algorithm 1: a turn with no <sql>/<solution> block at all gets no observation (lines 15-29); an
        // unusable block (empty, unclosed) is an invalid SQL result (lines 21-22) and gets the invalid-action message.
        const noBlock = problems.some((p) => /no <sql> or <solution> block/.test(p.source));
        if (name === 'sqltrail' && noBlock) assert.deepEqual(observations, []);
        else
          assert.ok(
            observations[0].content.includes(name === 'skyrl' ? SKYRL_INVALID_MESSAGE : SQLTRAIL_INVALID_MESSAGE),
          );
      }
    });
  }
}

const progressRows: Row[] = [
  ['unclosed <sql>', '<think>t</think><sql>SELECT 1', 'execute', 'SELECT 1', [/^unclosed <sql>/]],
  [
    'two <sql> blocks (last used)',
    '<think>t</think><sql>SELECT 1</sql><sql>SELECT 2</sql>',
    'execute',
    'SELECT 2',
    [/^2 <sql> blocks; the last one is used$/],
  ],
  [
    'code fence inside <sql>',
    '<think>t</think><sql>```sql\nSELECT 1\n```</sql>',
    'execute',
    'SELECT 1',
    [/^code fence inside <sql> removed$/],
  ],
  ['empty <sql>', '<think>t</think><sql></sql>', 'invalid', null, [/^empty <sql> block$/]],
  [
    'text outside the tags',
    'Sure!\n<think>t</think><sql>SELECT 1</sql>',
    'execute',
    'SELECT 1',
    [/^5 characters outside <think> and <sql> \(the format allows none\)$/],
  ],
  ['no <think>', '<sql>SELECT 1</sql>', 'execute', 'SELECT 1', [/^no <think> block$/]],
  ['no <sql>', '<think>t</think>', 'invalid', null, [/^no <sql> block/]],
  ['100 KB response', `<think>${big}</think><sql>SELECT 1</sql>`, 'execute', 'SELECT 1', [/^very long response/]],
];
for (const [label, text, kind, sql, problems] of progressRows) {
  test(`progress: ${label}`, () => {
    const s = make('progress');
    const a = s.parse(text);
    assert.equal(a.kind, kind);
    assert.equal(a.sql, sql);
    for (const p of problems)
      assert.ok(
        a.problems.some((x) => p.test(x)),
        `${p} in ${JSON.stringify(a.problems)}`,
      );
    if (kind === 'invalid') assert.equal(s.respond(a, null, 2).observations[0].content, PROGRESS_INVALID_MESSAGE);
  });
}

const call = (sql: string) =>
  `<tool_call>{"name": "sql-execute_sql_query", "arguments": {"db_name": "concert_singer", "sql": ` +
  `"${sql}"}}</tool_call>`;
const mtirRows: Row[] = [
  [
    'unclosed <tool_call>',
    `<think>t</think><tool_call>{"name": "sql-execute_sql_query", "arguments": {"db_name": ` +
      `"concert_singer", "sql": "SELECT 1"}}`,
    'execute',
    'SELECT 1',
    [/^unclosed <tool_call>/],
  ],
  [
    'two tool calls',
    `<think>t</think>${call('SELECT 1')}${call('SELECT 2')}`,
    'execute',
    'SELECT 1',
    [/^2 tool calls in one turn; the first is used/],
  ],
  [
    'trailing commas and single quotes',
    `<think>t</think><tool_call>{'name': 'sql-execute_sql_query', 'arguments': {'db_name': ` +
      `'concert_singer', 'sql': 'SELECT 1',},}</tool_call>`,
    'execute',
    'SELECT 1',
    [/single-quoted string/, /trailing comma/],
  ],
  [
    'extra keys',
    `<think>t</think><tool_call>{"name": "sql-execute_sql_query", "id": 3, "arguments": {"db_name": ` +
      `"concert_singer", "sql": "SELECT 1", "limit": 5}}</tool_call>`,
    'execute',
    'SELECT 1',
    [/^extra keys ignored: id$/, /^extra arguments ignored: limit$/],
  ],
  [
    'fence around the JSON',
    `<think>t</think><tool_call>\n\`\`\`json\n{"name": "sql-execute_sql_query", "arguments": {"db_name": ` +
      `"concert_singer", "sql": "SELECT 1"}}\n\`\`\`\n</tool_call>`,
    'execute',
    'SELECT 1',
    [/^code fence around the tool-call JSON removed$/],
  ],
  [
    'fence inside the sql argument',
    `<think>t</think>${call('```sql\\nSELECT 1\\n```')}`,
    'execute',
    'SELECT 1',
    [/^code fence inside the "sql" argument removed$/],
  ],
  ['empty sql', `<think>t</think>${call('')}`, 'invalid', null, [/^empty "sql" argument$/]],
  [
    'unreadable JSON',
    '<think>t</think><tool_call>{"name": sql-execute}</tool_call>',
    'invalid',
    null,
    [/^tool call is not JSON/],
  ],
  [
    'thinking outside its tag',
    `Let me check.<think>t</think>${call('SELECT 1')}`,
    'execute',
    'SELECT 1',
    [/characters of reasoning outside <think>/],
  ],
  [
    'answer and tool call',
    `<think>t</think>${call('SELECT 1')}<answer>\`\`\`sql\nSELECT 2\n\`\`\`</answer>`,
    'execute',
    'SELECT 1',
    [/a tool call and an answer in one turn/],
  ],
  [
    'self-written tool response',
    `<think>t</think>${call('SELECT 1')}<tool_response>{"data": []}</tool_response>`,
    'execute',
    'SELECT 1',
    [/wrote its own <tool_response>/],
  ],
  ['neither call nor answer', '<think>t</think>I am done.', 'invalid', null, [/^no <tool_call> or <answer>/]],
  ['100 KB response', `<think>${big}</think>${call('SELECT 1')}`, 'execute', 'SELECT 1', [/^very long response/]],
];
for (const [label, text, kind, sql, problems] of mtirRows) {
  test(`mtir: ${label}`, () => {
    const s = make('mtir');
    const a = s.parse(text);
    assert.equal(a.kind, kind);
    assert.equal(a.sql, sql);
    for (const p of problems)
      assert.ok(
        a.problems.some((x) => p.test(x)),
        `${p} in ${JSON.stringify(a.problems)}`,
      );
    if (kind === 'invalid') assert.equal(s.respond(a, null, 2).observations[0].content, MTIR_RETHINK_MESSAGE);
  });
}

test('restoreStop after a server stripped the stop string gives a clean parse', () => {
  for (const name of ['skyrl', 'sqltrail'] as const) {
    const s = make(name);
    const stripped = '<think>t</think><sql>SELECT 1';
    assert.deepEqual(s.parse(stripped).problems, ['unclosed <sql>: taken to the end of the text']);
    const restored = s.restoreStop(stripped, null, 'stop');
    assert.equal(restored, stripped + '</sql>');
    assert.deepEqual(s.parse(restored).problems, []);
    assert.equal(s.restoreStop(stripped, null, 'length'), stripped);
  }
  const m = make('mtir');
  const strippedCall = `<think>t</think>${call('SELECT 1').replace('</tool_call>', '')}`;
  assert.deepEqual(m.parse(m.restoreStop(strippedCall, '</tool_call>', 'stop')).problems, []);
});
