// Replay's header counts what was scored, not what was looked at: a file whose trajectories have no gold SQL reads
// "0/4 scored — no gold SQL" (the real scorer skips them), never "4/4 scored"; a mixed file says how many were not.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createReplayScorer, AUTO_PANEL } from '../../../src/core/trajectories/scoring';
import { scoreTally } from '../../../src/extension/replay/scoreTally';
import { scoreStatusText } from '../../../webview/replay/scoreText';
import { skyrlEpisode, trajectory, newPool, newResources } from '../rewards/fixtures';

const pool = newPool();
after(() => pool.close());

test('four trajectories without gold SQL: 0/4 scored — no gold SQL', async () => {
  const scorer = createReplayScorer({ resources: newResources(pool), dbExists: existsSync });
  const records = [1, 2, 3, 4].map((i) => trajectory({ id: `t${i}`, turns: [], finalSql: 'SELECT 1' }));
  const outcomes = await Promise.all(records.map((r) => scorer.score(r, AUTO_PANEL)));
  const tally = scoreTally(outcomes);
  assert.deepEqual(tally, { done: 4, scored: 0, unscored: 'no gold SQL in the task' });
  assert.equal(scoreStatusText({ ...tally, total: 4, running: false }), '0/4 scored — no gold SQL');
});

test('some scored, some not: the count is of the scored ones, with how many were not and why', async () => {
  const scorer = createReplayScorer({ resources: newResources(pool), dbExists: existsSync });
  const gold = 'SELECT name FROM student';
  const records = [
    skyrlEpisode([], 'SELECT name FROM student', { id: 'a', gold }),
    skyrlEpisode([], 'SELECT 1', { id: 'b', gold }),
    trajectory({ id: 'c', turns: [], finalSql: 'SELECT 1' }),
  ];
  const outcomes = await Promise.all(records.map((r) => scorer.score(r, AUTO_PANEL)));
  const tally = scoreTally([...outcomes, undefined]);
  assert.deepEqual(tally, { done: 3, scored: 2, unscored: 'no gold SQL in the task' });
  assert.equal(scoreStatusText({ ...tally, total: 4, running: false }), '2/4 scored — 1 not: no gold SQL');
  assert.equal(scoreStatusText({ ...tally, total: 4, running: true }), 'scoring 3/4…');
  assert.equal(scoreStatusText({ done: 2, scored: 2, unscored: null, total: 2, running: false }), '2/2 scored');
});
