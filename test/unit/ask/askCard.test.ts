// A question's card agrees with its trajectory: a question stopped while the model was still answering used 0 turns
// (as the record, the log and Replay say), a saved stopped question does not also ask to be saved, and each card names
// the model that answered; a question after the user switched models does not follow up on the other model's answers.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode } from '../../../src/core/agent/loop';
import type { AskState } from '../../../src/protocol/ask';
import { applyEvent, emptyState, turnsUsed } from '../../../src/protocol/askState';
import { exchangeEvent, recordEvents } from '../../../src/extension/ask/events';
import { labelOfSpec, modelSwitchedFrom } from '../../../src/extension/ask/modelSwitch';
import { statusText, stoppedNote } from '../../../webview/ask/cardText';
import { buildDb } from '../../helpers/fixtures';
import { scriptedModel } from '../agent/envSupport';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const db = buildDb('bookshop');

async function ask(
  state: AskState,
  script: Parameters<typeof scriptedModel>[0],
  label: string,
  /** Stop the episode when this turn's text starts streaming. */
  stopAtTurn: number | null = null,
) {
  const at = state.exchanges.length;
  const abort = new AbortController();
  const record = await runEpisode({
    task: { question: 'How many books?', dbPath: db },
    protocolName: 'skyrl',
    pool,
    model: scriptedModel(script),
    config: { maxTurns: 5 },
    signal: abort.signal,
    onEvent: (e) => {
      applyEvent(state, at, exchangeEvent(e, 'How many books?', label));
      if (e.type === 'text' && e.index === stopAtTurn) abort.abort();
    },
  });
  return { record, x: state.exchanges[at] };
}

test('stopped while the model answered its first turn: 0 turns on the card, as in the trajectory', async () => {
  const state = emptyState('openai · qwen');
  const { record, x } = await ask(state, [{ hang: true, partial: '<think>Count the' }], 'openai · qwen', 0);
  assert.equal(record.end, 'cancelled');
  assert.equal(record.turns.length, 0);
  assert.equal(x.turns.length, 1, 'the cut-off text is still shown');
  assert.equal(turnsUsed(x), 0);
  assert.equal(statusText(x), 'skyrl · openai · qwen · turns 0 / 5 ·');
  // Saved automatically (the default): the note says where the turns are, not to save them.
  applyEvent(state, 0, { kind: 'saved', path: '/w/.quarry/trajectories/asked.jsonl' });
  assert.doesNotMatch(stoppedNote(x), /save the trajectory/);
  assert.match(stoppedNote({ savedTo: null }), /save the trajectory to keep them/);
  // Stopped in the second turn: the first, which finished, is the one turn on the card and in the record.
  const later = await ask(
    state,
    ['<think>Look.</think>\n<sql>SELECT count(*) FROM book</sql>', { hang: true, partial: '<think>So' }],
    'openai · qwen',
    1,
  );
  assert.deepEqual([later.record.end, later.record.turns.length, turnsUsed(later.x)], ['cancelled', 1, 1]);
});

test('each card names its model; a switched model is not a follow-up', async () => {
  const state = emptyState('openai · qwen');
  const first = await ask(
    state,
    ['<think>All.</think>\n<solution>SELECT count(*) FROM book</solution>'],
    'openai · qwen',
  );
  assert.equal(first.x.model, 'openai · qwen');
  assert.equal(turnsUsed(first.x), 1);
  assert.equal(modelSwitchedFrom(state.exchanges, 'openai · qwen'), null, 'the same model follows up');
  assert.equal(modelSwitchedFrom(state.exchanges, 'onnx · tiny'), 'openai · qwen');
  assert.equal(modelSwitchedFrom([], 'onnx · tiny'), null, 'an empty conversation has no model yet');
  // Rebuilt from the store after a reload: the label kept in meta, else one made from the spec.
  const rebuilt = emptyState();
  for (const e of recordEvents({ ...first.record, meta: { modelLabel: 'openai · qwen' } })) applyEvent(rebuilt, 0, e);
  assert.equal(rebuilt.exchanges[0].model, 'openai · qwen');
  assert.equal(turnsUsed(rebuilt.exchanges[0]), 1);
  assert.equal(labelOfSpec('openai:http://127.0.0.1:8000/v1#Qwen2.5-7B'), 'openai · Qwen2.5-7B');
  assert.equal(labelOfSpec('onnx:/models/tiny-sql'), 'onnx · tiny-sql');
  assert.equal(labelOfSpec('scripted:test'), 'scripted · test');
});
