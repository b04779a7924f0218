// A listener may cancel the episode from inside onEvent (the chat view cancels when its progress message is shown, a
// UI may stop on the first 'turn'): the model call that follows must see the abort, not hang.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode } from '../../../src/core/agent/loop';
import { buildDb } from '../../helpers/fixtures';
import { scriptedModel } from './envSupport';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const db = buildDb('bookshop');

test("aborting from the 'turn' event ends the episode 'cancelled' instead of waiting on the model", async () => {
  const stop = new AbortController();
  // The model never answers on its own: only an abort reaching it ends the call.
  const model = scriptedModel([{ hang: true }]);
  const record = await runEpisode({
    task: { question: 'How many books?', dbPath: db },
    protocolName: 'skyrl',
    pool,
    model,
    signal: stop.signal,
    onEvent: (e) => {
      if (e.type === 'turn') stop.abort();
    },
  });
  assert.equal(record.end, 'cancelled');
  assert.equal(record.turns.length, 0);
  assert.equal(model.requests.length, 1);
  assert.equal(model.requests[0].signal?.aborted, true, 'the backend was told');
});
