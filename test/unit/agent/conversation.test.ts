// Follow-up questions: a conversation keeps the protocol its first question ran with; the follow-up carries the
// earlier questions, their SQL and the results the user was shown in that protocol's format (MTSQL-R1's memory, or
// the others' "Earlier in this conversation" block). Real SQLite, real sandbox, a scripted model.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode } from '../../../src/core/agent/loop';
import { withHistoryResults } from '../../../src/core/agent/protocols/mtsqlr1';
import {
  answered,
  exchangeResult,
  nextTask,
  protocolForNext,
  type Exchange,
} from '../../../src/core/agent/conversation';
import { buildDb } from '../../helpers/fixtures';
import { scriptedModel } from './envSupport';
import { earlierInConversation } from '../../../src/core/agent/protocols/common';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const db = buildDb('bookshop');

test("the first question uses the chosen protocol; follow-ups keep the conversation's, never mtsqlr1 unasked", () => {
  assert.equal(protocolForNext([], 'skyrl'), 'skyrl');
  assert.equal(protocolForNext([{ question: 'q', sql: 'SELECT 1', protocol: 'skyrl' }], 'skyrl'), 'skyrl');
  assert.equal(protocolForNext([{ question: 'q', sql: 'SELECT 1', protocol: 'mtir' }], 'skyrl'), 'mtir');
  assert.equal(
    protocolForNext([{ question: 'q', sql: null, protocol: 'sqltrail' }], 'progress'),
    'sqltrail',
    'the conversation started with sqltrail even though that question got no SQL',
  );
  assert.equal(protocolForNext([{ question: 'q', sql: 'SELECT 1' }], 'mtsqlr1'), 'mtsqlr1', 'only when chosen');
});

test(
  'nextTask: answered exchanges become the history in ' + 'order, with results where known; empty questions refused',
  () => {
    const earlier: Exchange[] = [
      { question: 'How many authors?', sql: 'SELECT count(*) FROM author', result: '[(8,)]' },
      { question: 'Stopped one', sql: null },
      { question: 'Which countries?', sql: 'SELECT DISTINCT country FROM author' },
    ];
    assert.deepEqual(
      answered(earlier).map((e) => e.question),
      ['How many authors?', 'Which countries?'],
    );
    const task = nextTask('  And from Canada?  ', '/x/shop.sqlite', earlier);
    assert.deepEqual(task, {
      question: 'And from Canada?',
      dbPath: '/x/shop.sqlite',
      history: [
        { question: 'How many authors?', sql: 'SELECT count(*) FROM author', result: '[(8,)]' },
        { question: 'Which countries?', sql: 'SELECT DISTINCT country FROM author' },
      ],
    });
    assert.deepEqual(
      nextTask('First?', '/x/shop.sqlite', []),
      { question: 'First?', dbPath: '/x/shop.sqlite' },
      'no history key at all',
    );
    assert.throws(() => nextTask(' \n ', '/x/shop.sqlite', []), /the question is empty/);
  },
);

test('exchangeResult: Python rows of what the user saw, or the error text', async () => {
  const ok = await pool.exec({ db, sql: "SELECT name, birth_year FROM author WHERE country = 'Canada'" });
  assert.equal(exchangeResult(ok), "[('Margaret Atwood', 1939)]");
  const bad = await pool.exec({ db, sql: 'SELECT nme FROM author' });
  assert.match(exchangeResult(bad), /no such column: nme/);
  const many = await pool.exec({ db, sql: 'SELECT author_id FROM author ORDER BY author_id' });
  assert.equal(exchangeResult(many, 2), '[(1,), (2,)]', 'capped at the rows asked for');
});

test('an mtsqlr1 follow-up: its memory has the earlier question, SQL and shown result; the record too', async () => {
  const firstSql = "SELECT name FROM author WHERE country = 'Canada'";
  const first = await runEpisode({
    task: nextTask('Which authors are Canadian?', db, []),
    protocolName: protocolForNext([], 'skyrl'),
    pool,
    model: scriptedModel([`<think>filter</think>\n<solution>${firstSql}</solution>`]),
  });
  assert.equal(first.end, 'answer', first.error ?? '');
  const shown = await pool.exec({ db, sql: first.finalSql! });
  const exchanges: Exchange[] = [
    { question: first.task.question, sql: first.finalSql, result: exchangeResult(shown), protocol: 'mtsqlr1' },
  ];

  const followSql = "SELECT birth_year FROM author WHERE country = 'Canada'";
  const model = scriptedModel([`<think>same author</think>\n<answer_sql>${followSql}</answer_sql>`]);
  // Nothing left to fill: the editor passes the results it showed, so no SQL is run again for the memory.
  const task = await withHistoryResults(nextTask('When was she born?', db, exchanges), pool);
  const second = await runEpisode({ task, protocolName: protocolForNext(exchanges, 'skyrl'), pool, model });
  // The conversation was an mtsqlr1 one (its first exchange says so), whatever the setting now says.
  assert.equal(second.protocol.name, 'mtsqlr1');
  assert.equal(second.end, 'answer', second.error ?? '');
  assert.equal(second.finalSql, followSql);
  assert.deepEqual(second.task.history, [
    { question: 'Which authors are Canadian?', sql: firstSql, result: "[('Margaret Atwood',)]" },
  ]);
  const prompt = model.requests[0].messages.map((m) => m.content).join('\n');
  assert.ok(prompt.includes('When was she born?'), 'the new question is asked');
  // The first question and its result are what the memory_retrieve tool returns, not the opening prompt; ask for it.
  const recall = scriptedModel([
    '<think>check memory</think>\n' +
      `<tool_call>{"name": "memory_retrieve", "arguments": {"code": "${followSql}"}}</tool_call>`,
    `<answer_sql>${followSql}</answer_sql>`,
  ]);
  const third = await runEpisode({ task, protocolName: 'mtsqlr1', pool, model: recall });
  const memory = third.turns[0].observations.map((o) => o.content).join('\n');
  assert.ok(memory.includes('Which authors are Canadian?'), memory);
  assert.ok(memory.includes(firstSql), memory);
  assert.ok(memory.includes("[('Margaret Atwood',)]"), memory);
});

const FOLLOW_ANSWERS: Record<string, string> = {
  skyrl: '<think>x</think>\n<solution>SELECT birth_year FROM author</solution>',
  sqltrail: '<think>x</think>\n<solution>SELECT birth_year FROM author</solution>',
  mtir: '<think>x</think>\n<answer>SELECT birth_year FROM author</answer>',
  progress: '<think>x</think>\n<sql>SELECT birth_year FROM author</sql>',
};

for (const protocol of ['skyrl', 'sqltrail', 'mtir', 'progress'] as const) {
  test(`a ${protocol} follow-up stays ${protocol} and its prompt has "Earlier in this conversation"`, async () => {
    const exchanges: Exchange[] = [
      {
        question: 'Which authors are Canadian?',
        sql: "SELECT name FROM author\n WHERE country = 'Canada'",
        result: "[('Margaret Atwood',)]",
        protocol,
      },
      { question: 'A stopped one', sql: null, protocol },
    ];
    const model = scriptedModel([FOLLOW_ANSWERS[protocol]]);
    const task = nextTask('When was she born?', db, exchanges);
    const protocolName = protocolForNext(exchanges, 'mtsqlr1');
    const config = protocol === 'progress' ? { feedback: 'none' } : undefined;
    const rec = await runEpisode({ task, protocolName, config, pool, model });
    assert.equal(rec.protocol.name, protocol);
    const user = model.requests[0].messages
      .filter((m) => m.role === 'user')
      .map((m) => m.content)
      .join('\n');
    const block = [
      'Earlier in this conversation:',
      '1. Question: Which authors are Canadian?',
      "   Final SQL: SELECT name FROM author WHERE country = 'Canada'",
      "   Result: [('Margaret Atwood',)]",
    ].join('\n');
    assert.ok(user.includes(block), user);
    assert.ok(!user.includes('A stopped one'), 'unanswered questions are not remembered');
    assert.ok(user.indexOf(block) < user.lastIndexOf('When was she born?'), 'the memory comes before the question');
  });
}

test('earlierInConversation: a long result is cut and says so; a result never run says so', () => {
  const text = earlierInConversation([
    { question: 'q1', sql: 'SELECT 1', result: `[${'(1,), '.repeat(100)}]` },
    { question: 'q2', sql: 'SELECT 2' },
  ]);
  assert.match(text, /Result: \[\(1,\), .{290,}… \(cut\)\n/);
  assert.match(text, /2\. Question: q2\n {3}Final SQL: SELECT 2\n {3}Result: \(not run\)$/);
  assert.equal(earlierInConversation([]), '');
});
