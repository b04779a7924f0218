// The loop with the paper protocols from the registry: skyrl's budget end and SQL-Trail's adaptive budget and final
// call.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode, EpisodeSetupError } from '../../../src/core/agent/loop';
import { turnBudget } from '../../../src/core/agent/budget';
import { SqlAgentEnv, SchemaCache } from '../../../src/core/agent/env';
import { getProtocol } from '../../../src/core/agent/protocols';
import { buildDb } from '../../helpers/fixtures';
import { scriptedModel } from './envSupport';
import type { Hardness } from '../../../src/core/sql/hardness';

const db = buildDb('spider-concert');
const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const schemaCache = new SchemaCache();

test('turn budgets: fixed maxTurns, SQL-Trail adaptive by difficulty only when asked for', () => {
  const cfg = { maxTurns: 10, adaptive: true };
  const task = (difficulty?: Hardness) => ({ question: 'q', dbPath: db, difficulty });
  assert.deepEqual(
    (['easy', 'medium', 'hard', 'extra', undefined] as const).map((d) => turnBudget('sqltrail', cfg, task(d))),
    [2, 3, 10, 10, 10],
  );
  assert.equal(turnBudget('sqltrail', { maxTurns: 10, adaptive: false }, task('easy')), 10);
  assert.equal(turnBudget('skyrl', cfg, task('easy')), 10, 'only sqltrail adapts');
  assert.equal(turnBudget('sqltrail', { maxTurns: 1, adaptive: true }, task('medium')), 1, 'never above T');
  const env = new SqlAgentEnv({
    task: task('medium'),
    protocol: getProtocol('sqltrail'),
    config: { adaptive: true },
    pool,
    schemaCache,
  });
  assert.equal(env.budget, 3);
});

test('skyrl: an answer after exploring; the budget ends the episode without a final call', async () => {
  const answered = await runEpisode({
    task: { question: 'How many singers are there?', dbPath: db },
    protocolName: 'skyrl',
    pool,
    schemaCache,
    model: scriptedModel([
      '<think>count rows</think>\n<sql>SELECT count(*) FROM singer</sql>',
      '<think>done</think>\n<solution>SELECT count(*) FROM singer</solution>',
    ]),
  });
  assert.deepEqual(
    [answered.end, answered.finalSql, answered.protocol.name, answered.protocol.budget],
    ['answer', 'SELECT count(*) FROM singer', 'skyrl', 5],
  );
  assert.match(
    answered.turns[0].observations[0].content,
    /<reminder>You have 4 turns left to complete the task\.<\/reminder><\/observation>$/,
  );
  assert.equal(answered.turns[0].assistant, '<think>count rows</think>\n<sql>SELECT count(*) FROM singer</sql>');

  const model = scriptedModel(['<sql>SELECT 1</sql>', '<sql>SELECT 2</sql>', '<solution>never asked</solution>']);
  const spent = await runEpisode({
    task: { question: 'q', dbPath: db },
    protocolName: 'skyrl',
    config: { maxTurns: 2 },
    pool,
    schemaCache,
    model,
  });
  assert.deepEqual([spent.end, spent.turns.length, model.requests.length], ['budget', 2, 2]);
});

test(
  'skyrl single-turn evaluation (§5, Table 1 "Single-Turn"): --max-turns 1 is one generation, scored from ' +
    'its <solution>',
  async () => {
    // skyrl-gym ends an episode once turns >= max_turns and scores the <solution> in the history; there is no final
    // call.
    const answered = scriptedModel(['<think>count</think>\n<solution>SELECT count(*) FROM singer</solution>']);
    const a = await runEpisode({
      task: { question: 'q', dbPath: db },
      protocolName: 'skyrl',
      config: { maxTurns: 1 },
      pool,
      schemaCache,
      model: answered,
    });
    assert.deepEqual(
      [a.end, a.finalSql, a.turns.length, answered.requests.length],
      ['answer', 'SELECT count(*) FROM singer', 1, 1],
    );
    const probed = scriptedModel([
      '<think>look first</think>\n<sql>SELECT * FROM singer</sql>',
      '<solution>never asked</solution>',
    ]);
    const p = await runEpisode({
      task: { question: 'q', dbPath: db },
      protocolName: 'skyrl',
      config: { maxTurns: 1 },
      pool,
      schemaCache,
      model: probed,
    });
    assert.deepEqual([p.end, p.finalSql, p.turns.length, probed.requests.length], ['budget', null, 1, 1]);
  },
);

test(
  'sqltrail adaptive (Algorithm 1): an easy question gets 2 turns; </reasoning> ends a turn; the final call ' +
    'is from the history',
  async () => {
    // SQL-Trail Algorithm 1: a turn ends at </reasoning>, </sql>, </solution> or <eos> (line 10); a turn with neither
    // <solution> nor <sql> appends no observation (lines 15-28) but still counts (line 29); after T turns the final
    // <solution> is generated from (x, h) alone (line 31).
    const model = scriptedModel([
      '<reasoning>look</reasoning><sql>SELECT name FROM singer</sql>',
      '<sql>SELECT count(*) FROM singer</sql>',
      '<solution>SELECT count(*) FROM singer</solution>',
    ]);
    const r = await runEpisode({
      task: { question: 'How many singers are there?', dbPath: db, difficulty: 'easy' },
      protocolName: 'sqltrail',
      config: { adaptive: true },
      pool,
      schemaCache,
      model,
    });
    assert.deepEqual(
      [r.end, r.finalSql, r.turns.length, r.protocol.budget],
      ['answer', 'SELECT count(*) FROM singer', 3, 2],
    );
    assert.equal(r.protocol.config.maxTurns, 10);
    assert.deepEqual(model.requests[0].sampling.stop, ['</sql>', '</solution>', '</reasoning>']);
    assert.equal(r.turns[0].assistant, '<reasoning>look</reasoning>', 'the first generation stopped at </reasoning>');
    assert.deepEqual(r.turns[0].observations, [], 'a turn with no action gets no observation');
    const second = model.requests[1].messages;
    assert.equal(second.at(-1)!.role, 'assistant', 'the second turn continues from the history, no message added');
    // Turn t = 1 (0-based) of T = 2: "You have (T - t) turns left".
    assert.match(r.turns[1].observations[0].content, /You have 1 turns left/);
    const lastAsk = model.requests[2];
    assert.match(
      lastAsk.messages.at(-1)!.content,
      /^<observation>[\s\S]*You have 1 turns left/,
      'line 31: no user message is added',
    );
    assert.deepEqual(lastAsk.sampling.stop, ['</solution>'], 'the final call stops only at </solution>');
  },
);

test(
  'mtir (App. B line 20): after a turn with no action ' + "the next generation continues the model's own turn",
  async () => {
    const model = scriptedModel([
      '<think>The singer table looks right.</think>',
      '<answer>```sql\nSELECT count(*) FROM singer\n```</answer>',
    ]);
    const r = await runEpisode({
      task: { question: 'How many singers?', dbPath: db },
      protocolName: 'mtir',
      pool,
      schemaCache,
      model,
    });
    assert.deepEqual([r.end, r.finalSql], ['answer', 'SELECT count(*) FROM singer']);
    const second = model.requests[1].messages;
    assert.deepEqual(second.at(-1), {
      role: 'assistant',
      content: '<think>The singer table looks right.</think>\nMy action is not correct. Let me rethink.',
    });
    assert.equal(
      second.filter((m) => m.role === 'user').length,
      model.requests[0].messages.filter((m) => m.role === 'user').length,
      'no user message was added',
    );
  },
);

test('a protocol that refuses the task at reset is a setup error (progress without an oracle)', async () => {
  const model = scriptedModel([]);
  await assert.rejects(
    runEpisode({
      task: { question: 'q', dbPath: db, gold: 'SELECT 1' },
      protocolName: 'progress',
      pool,
      schemaCache,
      model,
    }),
    (err: Error) =>
      err instanceof EpisodeSetupError && /^the progress protocol cannot start this task: .*oracle/.test(err.message),
  );
  assert.equal(model.requests.length, 0);
});

test('progress with an oracle: feedback turns until the SQL matches, recorded like any other episode', async () => {
  const gold = 'SELECT count(*) FROM singer';
  const r = await runEpisode({
    task: { question: 'How many singers?', dbPath: db, gold },
    protocolName: 'progress',
    pool,
    schemaCache,
    feedback: (pred, t) => (pred.trim() === t.gold ? null : 'SELECT_ERROR, SELECT projection differs from reference.'),
    model: scriptedModel([`<think>a</think><sql>SELECT name FROM singer</sql>`, `<think>b</think><sql>${gold}</sql>`]),
  });
  assert.deepEqual([r.end, r.finalSql, r.turns.length], ['answer', gold, 2]);
  assert.match(r.turns[0].observations[0].content, /^Feedback: /);
});
