// Malformed and unusual turns: each case states what the parser decides. parse() never throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  INITIAL_STATE,
  parseTurn,
  type Mtsqlr1Action,
  type TurnState,
} from '../../../../src/core/agent/protocols/mtsqlr1';
import { call } from './support';

const START: TurnState = { ...INITIAL_STATE, hasHistory: true };
const AFTER_EXEC: TurnState = {
  phase: 'executed',
  candidate: 'SELECT name FROM singer',
  executedAny: true,
  memoryAny: false,
  hasHistory: true,
};
const AFTER_MEMORY: TurnState = { ...AFTER_EXEC, phase: 'memory', memoryAny: true };

function p(text: unknown, state: TurnState = START): Mtsqlr1Action {
  return parseTurn(text, state) as Mtsqlr1Action;
}

function hasProblem(a: Mtsqlr1Action, re: RegExp): void {
  assert.ok(
    a.problems.some((x) => re.test(x)),
    `expected a problem matching ${re}, got ${JSON.stringify(a.problems)}`,
  );
}

test(
  'unclosed tags: a complete tool call without </tool_call> runs; a cut-off one and an unclosed answer are ' +
    'refused',
  () => {
    const complete = p('<think>x</think>\n<tool_call>\n{"name": "exec_sql", "arguments": {"code": "SELECT 1"}}');
    assert.deepEqual([complete.kind, complete.sql], ['execute', 'SELECT 1']);
    hasProblem(complete, /unclosed <tool_call>; its JSON is complete/);

    const cut = p('<think>x</think>\n<tool_call>\n{"name": "exec_sql", "arguments": {"code": "SELECT na');
    assert.deepEqual([cut.kind, cut.sql], ['invalid', null]);
    hasProblem(cut, /cut off/);

    const answer = p('<think>x</think>\n<answer_sql>SELECT name FROM singer');
    assert.equal(answer.kind, 'invalid');
    hasProblem(answer, /unclosed <answer_sql>/);

    const think = p('<think>still thinking about <answer_sql> and more');
    assert.equal(think.kind, 'invalid', 'an unclosed <think> ends at the first action tag, which is itself unclosed');
    const thinkOnly = p('<think>I will write the SQL later');
    assert.equal(thinkOnly.kind, 'invalid');
    hasProblem(thinkOnly, /unclosed <think>: the whole response is reasoning/);
    assert.equal(thinkOnly.thought, 'I will write the SQL later');
  },
);

test('nested tags: the innermost text is the SQL, the nesting is reported', () => {
  const a = p('<answer_sql><answer_sql>SELECT 1</answer_sql></answer_sql>', AFTER_MEMORY);
  assert.deepEqual([a.kind, a.sql], ['answer', 'SELECT 1']);
  hasProblem(a, /nested <answer_sql>/);
  const t = p('<tool_call><tool_call>{"name": "exec_sql", "arguments": {"code": "SELECT 2"}}</tool_call></tool_call>');
  assert.deepEqual([t.kind, t.sql], ['execute', 'SELECT 2']);
  hasProblem(t, /nested <tool_call>/);
});

test('two tool calls in one turn: the first is carried out, the second reported', () => {
  const a = p(call('exec_sql', 'SELECT 1') + '\n' + call('memory_retrieve', 'SELECT 1', ''));
  assert.deepEqual([a.kind, a.tool, a.sql, a.mdp], ['execute', 'exec_sql', 'SELECT 1', ['PROPOSE', 'EXECUTE']]);
  hasProblem(a, /2 action blocks in one turn; only the first \(<tool_call>\) is used/);
  const m = p(call('memory_retrieve', 'SELECT name FROM singer') + call('exec_sql', 'SELECT 9', ''), AFTER_EXEC);
  assert.deepEqual([m.kind, m.mdp], ['memory', ['E-VERIFY', 'M-VERIFY']]);
});

test('answer plus tool call: whichever comes first in the text is the action', () => {
  const callFirst = p(call('exec_sql', 'SELECT 1') + '\n<answer_sql>SELECT 1</answer_sql>');
  assert.equal(callFirst.kind, 'execute');
  hasProblem(callFirst, /<answer_sql> ignored/);
  const answerFirst = p(
    '<answer_sql>SELECT name FROM singer</answer_sql>\n' + call('exec_sql', 'SELECT 1', ''),
    AFTER_MEMORY,
  );
  assert.deepEqual(
    [answerFirst.kind, answerFirst.sql, answerFirst.mdp],
    ['answer', 'SELECT name FROM singer', ['M-VERIFY', 'FINALIZE']],
  );
  hasProblem(answerFirst, /<tool_call> ignored/);
});

test('empty answer, empty code, unknown tool, missing arguments: invalid with the reason', () => {
  const cases: Array<[string, RegExp]> = [
    ['<answer_sql>  </answer_sql>', /empty <answer_sql>/],
    ['<answer_sql>```sql\n```</answer_sql>', /empty <answer_sql>/],
    ['<tool_call>{"name": "exec_sql", "arguments": {"code": ""}}</tool_call>', /exec_sql called with empty "code"/],
    [
      '<tool_call>{"name": "run_sql", "arguments": {"code": "SELECT 1"}}</tool_call>',
      /unknown tool "run_sql"; the tools are exec_sql and memory_retrieve/,
    ],
    ['<tool_call>{"name": "memory_retrieve"}</tool_call>', /memory_retrieve called without an "arguments" object/],
    ['<tool_call>{"arguments": {"code": "SELECT 1"}}</tool_call>', /has no "name"/],
    ['<tool_call>exec_sql(SELECT 1)</tool_call>', /not JSON/],
    ['', /no <tool_call> and no <answer_sql> \(empty response\)/],
  ];
  for (const [text, re] of cases) {
    const a = p(text, AFTER_EXEC);
    assert.deepEqual([a.kind, a.sql], ['invalid', null], text);
    hasProblem(a, re);
  }
  assert.deepEqual(p(null).problems, ['the response is not text']);
  assert.equal(p(42 as unknown).kind, 'invalid');
});

test('code fences inside tags are removed and reported', () => {
  const a = p('<answer_sql>\n```sql\nSELECT name FROM singer\n```\n</answer_sql>', AFTER_MEMORY);
  assert.deepEqual([a.kind, a.sql], ['answer', 'SELECT name FROM singer']);
  hasProblem(a, /code fence inside <answer_sql> removed/);
  const j = p('<tool_call>\n```json\n{"name": "exec_sql", "arguments": {"code": "SELECT 1"}}\n```\n</tool_call>');
  assert.deepEqual([j.kind, j.sql], ['execute', 'SELECT 1']);
  hasProblem(j, /code fence around the tool-call JSON removed/);
  const c = p('<tool_call>{"name": "exec_sql", "arguments": {"code": "```sql\\nSELECT 3\\n```"}}</tool_call>');
  assert.deepEqual([c.kind, c.sql], ['execute', 'SELECT 3']);
  hasProblem(c, /code fence inside "code" removed/);
});

test('verdict tags: read after the matching tool result; ignored without a preceding execution or retrieval', () => {
  const early = p('<exec_verify>pass</exec_verify>\n' + call('exec_sql', 'SELECT 1', ''));
  assert.equal(early.verify, undefined);
  assert.deepEqual(early.mdp, ['PROPOSE', 'EXECUTE']);
  hasProblem(early, /<exec_verify> without a preceding exec_sql result; the verdict is ignored/);

  const noMemory = p('<memory_verify>pass</memory_verify><answer_sql>SELECT name FROM singer</answer_sql>', AFTER_EXEC);
  assert.equal(noMemory.verify, undefined);
  hasProblem(noMemory, /<memory_verify> without a preceding memory_retrieve result/);
  hasProblem(noMemory, /answer without memory_retrieve/);

  const fail = p(
    '<think>wrong column</think>\n<exec_verify>no_pass</exec_verify>\n' +
      call('exec_sql', 'SELECT name, age FROM singer', ''),
    AFTER_EXEC,
  );
  assert.deepEqual([fail.verify, fail.mdp], [{ exec: 'no_pass' }, ['E-VERIFY', 'SELF-CORRECT', 'EXECUTE']]);

  const pass = p(
    '<exec_verify>pass</exec_verify>\n' + call('memory_retrieve', 'SELECT name FROM singer', ''),
    AFTER_EXEC,
  );
  assert.deepEqual([pass.verify, pass.mdp], [{ exec: 'pass' }, ['E-VERIFY', 'M-VERIFY']]);

  const final = p(
    "<memory_verify>'pass'</memory_verify>\n<answer_sql>SELECT name FROM singer</answer_sql>",
    AFTER_MEMORY,
  );
  assert.deepEqual([final.verify, final.mdp, final.problems], [{ memory: 'pass' }, ['M-VERIFY', 'FINALIZE'], []]);

  const spelled = p(
    '<exec_verify>No Pass</exec_verify><exec_verify>fail</exec_verify>' + call('exec_sql', 'SELECT 2', ''),
    AFTER_EXEC,
  );
  assert.deepEqual(spelled.verify, { exec: 'no_pass' });
  hasProblem(spelled, /2 <exec_verify> verdicts; the last one is used/);

  const odd = p('<exec_verify>maybe</exec_verify>' + call('exec_sql', 'SELECT 2', ''), AFTER_EXEC);
  assert.equal(odd.verify, undefined);
  hasProblem(odd, /<exec_verify> is not pass or no_pass \("maybe"\)/);

  const verdictOnly = p('<exec_verify>no_pass</exec_verify> I will fix it next.', AFTER_EXEC);
  assert.deepEqual(
    [verdictOnly.kind, verdictOnly.verify, verdictOnly.mdp],
    ['invalid', { exec: 'no_pass' }, ['E-VERIFY']],
  );
});

test(
  'MDP labels: PROPOSE only for the first SQL; SELF-CORRECT only when the SQL changes (literals count, ' +
    'spacing does not)',
  () => {
    assert.deepEqual(p(call('exec_sql', 'select  name from singer;'), AFTER_EXEC).mdp, ['E-VERIFY', 'EXECUTE']);
    assert.deepEqual(p(call('exec_sql', "SELECT name FROM singer WHERE country = 'usa'"), AFTER_EXEC).mdp, [
      'E-VERIFY',
      'SELF-CORRECT',
      'EXECUTE',
    ]);
    assert.deepEqual(p(call('exec_sql', 'SELECT 1'), AFTER_MEMORY).mdp, ['M-VERIFY', 'SELF-CORRECT', 'EXECUTE']);
    const early = p(call('memory_retrieve', 'SELECT 1'));
    assert.deepEqual(early.mdp, ['PROPOSE', 'M-VERIFY']);
    hasProblem(early, /memory_retrieve before any exec_sql/);
    const changed = p('<answer_sql>SELECT age FROM singer</answer_sql>', AFTER_MEMORY);
    assert.deepEqual(changed.mdp, ['M-VERIFY', 'SELF-CORRECT', 'FINALIZE']);
    hasProblem(changed, /never executed as written/);
  },
);

test(
  'tolerated shapes: Markdown-escaped tags, arguments as a JSON string, "sql" for "code", a Qwen3 ' +
    'template-opened think',
  () => {
    const esc = p('<answer\\_sql>SELECT name FROM singer</answer\\_sql>', AFTER_MEMORY);
    assert.deepEqual([esc.kind, esc.sql], ['answer', 'SELECT name FROM singer']);
    hasProblem(esc, /Markdown-escaped tag names/);
    const str = p('<tool_call>{"name": "exec_sql", "arguments": "{\\"code\\": \\"SELECT 5\\"}"}</tool_call>');
    assert.deepEqual([str.kind, str.sql], ['execute', 'SELECT 5']);
    hasProblem(str, /"arguments" given as a JSON string/);
    const alias = p('<tool_call>{"name": "Exec_SQL", "arguments": {"sql": "SELECT 6"}}</tool_call>');
    assert.deepEqual([alias.kind, alias.tool, alias.sql], ['execute', 'exec_sql', 'SELECT 6']);
    hasProblem(alias, /"sql" read as "code"/);
    const qwen = p('drafting the query\n</think>\n\n' + call('exec_sql', 'SELECT 7', ''));
    assert.deepEqual([qwen.kind, qwen.thought], ['execute', 'drafting the query']);
    const mention = p('<think>I must return it inside <answer_sql> and </answer_sql> later</think>\nno action here');
    assert.equal(mention.kind, 'invalid', 'tags mentioned inside a closed <think> are not actions');
    hasProblem(mention, /appears only inside <think>/);
  },
);

test('a 100 KB response parses, is reported as long, and keeps its action', () => {
  const long =
    '<think>' +
    'the singer table has a name column. '.repeat(2900) +
    '</think>\n' +
    call('exec_sql', 'SELECT name FROM singer', '');
  assert.ok(long.length > 100_000);
  const a = p(long);
  assert.deepEqual([a.kind, a.sql], ['execute', 'SELECT name FROM singer']);
  hasProblem(a, /very long response \(\d+ characters\)/);
  const junk = '<'.repeat(50_000) + '<tool_call>'.repeat(3000) + '</think>'.repeat(2000);
  assert.equal(p(junk).kind, 'invalid');
  const manyThinks = p('<think>a</think>'.repeat(7000) + call('exec_sql', 'SELECT 1', ''));
  assert.deepEqual([manyThinks.kind, manyThinks.sql], ['execute', 'SELECT 1']);
});
