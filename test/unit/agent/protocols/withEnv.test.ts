// Each protocol driven through the real environment and SQL sandbox with scripted assistant turns: the episode ends
// the way the paper's algorithm says (answer, budget, final call, first match).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { SqlAgentEnv } from '../../../../src/core/agent/env';
import { getProtocol } from '../../../../src/core/agent/protocols';
import { createSqlPool } from '../../../../src/core/db';
import { concertDb, task } from './helpers';

const pool = createSqlPool({ size: 1 });
after(() => pool.close());

test('skyrl: error, self-correction, solution', async () => {
  const env = new SqlAgentEnv({ task: task(), protocol: getProtocol('skyrl'), pool, schema: concertDb().schema });
  env.reset();
  const s1 = await env.step('<think>a</think><sql>SELECT nme FROM singer</sql>');
  assert.match(s1.observations[0].content, /OperationalError: no such column: nme\n<reminder>You have 4 turns left/);
  const s2 = await env.step('<think>b</think><sql>SELECT count(*) FROM singer</sql>');
  assert.deepEqual(s2.action.mdp, ['SELF-CORRECT', 'EXECUTE']);
  const s3 = await env.step('<think>c</think><solution>SELECT count(*) FROM singer</solution>');
  assert.equal(s3.done, true);
  assert.equal(s3.end, 'answer');
  assert.equal(s3.finalSql, 'SELECT count(*) FROM singer');
});

test('sqltrail: budget of 2 runs out, the final call answers', async () => {
  const env = new SqlAgentEnv({
    task: task(),
    protocol: getProtocol('sqltrail'),
    pool,
    schema: concertDb().schema,
    config: { maxTurns: 2 },
  });
  env.reset();
  const s1 = await env.step('<reasoning>a</reasoning><sql>SELECT name FROM singer</sql>');
  assert.match(s1.observations[0].content, /You have 2 turns left to complete the task\./);
  const s2 = await env.step('<reasoning>b</reasoning><sql>SELECT count(*) FROM singer</sql>');
  assert.equal(s2.done, false);
  // Algorithm 1 line 31: the final generation follows the last observation with no message of its own.
  assert.equal(s2.observations.length, 1);
  assert.match(s2.observations[0].content, /You have 1 turns left to complete the task\./);
  assert.equal(env.messages().at(-1)!.content, s2.observations[0].content);
  assert.deepEqual(env.session.stop(), ['</solution>']);
  const s3 = await env.step('<reasoning>c</reasoning><solution>SELECT count(*) FROM singer</solution>');
  assert.equal(s3.end, 'answer');
  assert.equal(s3.finalSql, 'SELECT count(*) FROM singer');
});

test('sqltrail adaptive: an easy question gets 2 turns', () => {
  const env = new SqlAgentEnv({
    task: task({ difficulty: 'easy' }),
    protocol: getProtocol('sqltrail'),
    pool,
    schema: concertDb().schema,
    config: { adaptive: true },
  });
  assert.equal(env.budget, 2);
});

test('mtir: tool call, tool response, answer', async () => {
  const env = new SqlAgentEnv({ task: task(), protocol: getProtocol('mtir'), pool, schema: concertDb().schema });
  const opening = env.reset();
  assert.deepEqual(
    opening.map((m) => m.role),
    ['system', 'user'],
  );
  const s1 = await env.step(
    '<think>a</think><tool_call>{"name": "sql-execute_sql_query", "arguments": {"db_name": ' +
      '"concert_singer", "sql": "SELECT name FROM singer ORDER BY name"}}</tool_call>',
  );
  assert.match(s1.observations[0].content, /^<tool_response>\n\{"columns": \["name"\], "data": \[\{"name": /);
  const s2 = await env.step('<think>b</think><answer>```sql\nSELECT count(*) FROM singer\n```</answer>');
  assert.equal(s2.end, 'answer');
});

test('progress: feedback until the oracle is satisfied', async () => {
  const gold = 'SELECT count(*) FROM singer';
  const env = new SqlAgentEnv({
    task: task({ gold }),
    protocol: getProtocol('progress'),
    pool,
    schema: concertDb().schema,
    feedback: (pred, t) => (pred.trim() === t.gold ? null : 'SELECT_ERROR, SELECT projection differs from reference.'),
  });
  env.reset();
  const s1 = await env.step('<think>a</think><sql>SELECT name FROM singer</sql>');
  assert.equal(s1.exec?.ok, true);
  assert.match(s1.observations[0].content, /^Feedback: your previous SQL has structural issues: SELECT_ERROR/);
  const s2 = await env.step(`<think>b</think><sql>${gold}</sql>`);
  assert.equal(s2.end, 'answer');
  assert.equal(s2.finalSql, gold);
});

test('progress without an oracle fails at reset with the clear message', () => {
  const env = new SqlAgentEnv({
    task: task({ gold: 'SELECT 1' }),
    protocol: getProtocol('progress'),
    pool,
    schema: concertDb().schema,
  });
  assert.throws(() => env.reset(), /progress protocol needs gold SQL and an oracle feedback source/);
});
