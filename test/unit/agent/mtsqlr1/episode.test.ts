// The protocol inside the real loop: a scripted model replays App. D.1's turns through runEpisode against a real
// SQLite file and sandbox pool, with the history's results filled by running its SQL.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../../src/core/db/pool';
import { runEpisode } from '../../../../src/core/agent/loop';
import { SchemaCache } from '../../../../src/core/agent/env';
import { withHistoryResults } from '../../../../src/core/agent/protocols/mtsqlr1';
import { validateTrajectory } from '../../../../src/core/trajectories/validate';
import { scriptedModel } from '../envSupport';
import { call, d1Task, turnText } from './support';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const schemaCache = new SchemaCache();

test(
  'App. D.1 through runEpisode: real results in the ' + 'recaps, real history results in the memory, the answer',
  async () => {
    const task = await withHistoryResults(d1Task(), pool);
    const turns = ['d1-ours-turn1.txt', 'd1-ours-turn2.txt', 'd1-ours-turn3.txt', 'd1-ours-turn4.txt'].map(turnText);
    const model = scriptedModel(turns);
    const record = await runEpisode({ task, protocolName: 'mtsqlr1', pool, schemaCache, model });
    assert.equal(record.end, 'answer', record.error ?? '');
    assert.equal(
      record.finalSql,
      'SELECT COUNT(*) FROM car_makers JOIN countries ON car_makers.Country = countries.CountryId WHERE ' +
        "countries.CountryName = 'usa';",
    );
    assert.equal(record.protocol.budget, 4);
    assert.equal(
      validateTrajectory(JSON.parse(JSON.stringify(record))),
      null,
      'a valid quarry.trajectory/1 record, history results included',
    );
    assert.equal(record.task.history[0].result, "[('america', 4), ('asia', 7), ('europe', 11)]");
    assert.deepEqual(
      record.turns.map((t) => t.action.mdp),
      [
        ['PROPOSE', 'EXECUTE'],
        ['E-VERIFY', 'SELF-CORRECT', 'EXECUTE'],
        ['E-VERIFY', 'M-VERIFY'],
        ['M-VERIFY', 'FINALIZE'],
      ],
    );
    assert.deepEqual(
      record.turns.map((t) => t.action.kind),
      ['execute', 'execute', 'memory', 'answer'],
    );
    assert.deepEqual(
      record.turns.map((t) => t.exec?.ok ?? null),
      [true, true, null, null],
    );
    assert.ok(record.turns[0].assistant.endsWith('</tool_call>'), 'the stop string the server cut is restored');
    assert.deepEqual(
      record.turns.map((t) => t.action.problems),
      [[], [], [], []],
    );
    assert.match(
      record.turns[0].observations[0].content,
      /\(truncated to 200 characters\): The sql results example is: \[\(0,\)\]\n/,
    );
    assert.match(
      record.turns[1].observations[0].content,
      /\(truncated to 200 characters\): The sql results example is: \[\(4,\)\]\n/,
    );
    const memory = record.turns[2].observations[0].content;
    assert.ok(memory.includes('The execution results of the proposed SQL: The sql results example is: [(4,)]\n'));
    assert.ok(
      memory.includes(
        "SQL Results (truncated to 50 characters): [('america', 4), ('asia', 7), ('europe', 11)]\n== Turn 0 ==",
      ),
    );
    assert.deepEqual(
      model.requests.map((r) => r.sampling.stop),
      [['</tool_call>'], ['</tool_call>'], ['</tool_call>'], ['</tool_call>']],
    );
    assert.equal(model.requests[0].messages.length, 2);
    assert.equal(
      model.requests[3].messages.length,
      8,
      'system, user, then three assistant turns with their tool responses',
    );
  },
);

test(
  'four tool calls use up the budget: the episode ends ' + 'without an answer and the fourth call is not answered',
  async () => {
    const model = scriptedModel([1, 2, 3, 4, 5].map((n) => call('exec_sql', `SELECT ${n}`)));
    const record = await runEpisode({ task: d1Task(), protocolName: 'mtsqlr1', pool, schemaCache, model });
    assert.deepEqual([record.end, record.finalSql, record.turns.length, model.requests.length], ['budget', null, 4, 4]);
    assert.deepEqual(record.turns[3].observations, []);
    assert.deepEqual(
      record.turns.map((t) => t.action.mdp[t.action.mdp.length - 2]),
      ['PROPOSE', 'SELF-CORRECT', 'SELF-CORRECT', 'SELF-CORRECT'],
    );
  },
);

test(
  'the loop runs the history SQL itself when a task arrives without results (datasets), so the memory ' + 'quotes them',
  async () => {
    const task = d1Task();
    assert.ok(
      task.history?.length && task.history.every((h) => h.result === undefined),
      'the fixture task starts without results',
    );
    const turns = ['d1-ours-turn1.txt', 'd1-ours-turn2.txt', 'd1-ours-turn3.txt', 'd1-ours-turn4.txt'].map(turnText);
    const record = await runEpisode({ task, protocolName: 'mtsqlr1', pool, schemaCache, model: scriptedModel(turns) });
    assert.equal(record.task.history[0].result, "[('america', 4), ('asia', 7), ('europe', 11)]");
    assert.ok(
      record.turns[2].observations[0].content.includes(
        "SQL Results (truncated to 50 characters): [('america', 4), ('asia', 7), ('europe', 11)]",
      ),
    );
  },
);
