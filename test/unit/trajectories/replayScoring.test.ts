// The replay list's lazy scoring: verdicts and panel totals through the real reward engine on a real database,
// computed once per (panel, trajectory), with clear reasons when a record cannot be scored; group statistics.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import {
  createReplayScorer,
  groupStatistics,
  unscorableReason,
  AUTO_PANEL,
} from '../../../src/core/trajectories/scoring';
import { groupAdvantages } from '../../../src/core/rewards/group';
import { skyrlEpisode, trajectory, newPool, newResources, schoolDb } from '../rewards/fixtures';

const pool = newPool();
after(() => pool.close());

const GOLD = 'SELECT name FROM student WHERE age > 20 ORDER BY name';

test('scores verdict and panel total once, and explains the terms', async () => {
  const resources = newResources(pool);
  const scorer = createReplayScorer({ resources, dbExists: existsSync });
  const right = skyrlEpisode(['SELECT * FROM student'], 'SELECT name FROM student WHERE age > 20', {
    id: 'right',
    gold: GOLD,
  });
  const wrong = skyrlEpisode([], 'SELECT name FROM student', { id: 'wrong', gold: GOLD });

  const a = await scorer.score(right, AUTO_PANEL);
  assert.equal(a.status, 'scored');
  assert.ok(a.status === 'scored' && a.correct && a.reason === 'match');
  assert.equal(a.panel, 'skyrl');
  const b = await scorer.score(wrong, AUTO_PANEL);
  assert.ok(b.status === 'scored' && !b.correct);
  assert.ok(a.status === 'scored' && b.status === 'scored' && a.reward > b.reward);

  const runs = resources.stats().execRuns;
  assert.deepEqual(await scorer.score(right, AUTO_PANEL), a);
  assert.equal(resources.stats().execRuns, runs, 'a second score is a cache hit');
  assert.deepEqual(scorer.cached(right, 'skyrl'), a, 'auto resolves to the protocol panel');

  const ex = await scorer.explain(right, 'sqltrail');
  assert.equal(ex.panel, 'sqltrail');
  assert.ok(ex.result.terms.length > 1);
  for (const t of ex.result.terms) assert.ok(t.explanation.length > 0, `term ${t.name} explains itself`);
  assert.ok(Math.abs(ex.result.terms.reduce((s, t) => s + t.contribution, 0) - ex.result.total) < 1e-9);
  assert.equal(ex.verdict.correct, true);
});

test('records without gold or database are skipped with the reason; explain throws it', async () => {
  const scorer = createReplayScorer({ resources: newResources(pool), dbExists: existsSync });
  const noGold = trajectory({ id: 'ng', turns: [], finalSql: 'SELECT 1' });
  const noDb = skyrlEpisode([], 'SELECT 1', { id: 'nd', gold: 'SELECT 1', dbPath: '/nonexistent/x.sqlite' });
  assert.deepEqual(await scorer.score(noGold, AUTO_PANEL), {
    status: 'skipped',
    panel: 'skyrl',
    reason: 'no gold SQL in the task',
  });
  assert.deepEqual(await scorer.score(noDb, AUTO_PANEL), {
    status: 'skipped',
    panel: 'skyrl',
    reason: 'database not found: /nonexistent/x.sqlite',
  });
  await assert.rejects(scorer.explain(noDb, 'skyrl'), /database not found/);
  assert.equal(unscorableReason(noDb, schoolDb, existsSync), null, 'the caller may point the record at another copy');
});

test("an unknown panel is a skipped score with the registry's message, not a crash", async () => {
  const scorer = createReplayScorer({ resources: newResources(pool), dbExists: existsSync });
  const r = skyrlEpisode([], 'SELECT 1', { gold: 'SELECT 1' });
  const o = await scorer.score(r, 'no-such-panel');
  assert.equal(o.status, 'skipped');
  assert.match(o.reason, /unknown panel 'no-such-panel'/);
});

test('group statistics: mean, sample std, advantages over the scored members, zero variance', () => {
  const g = groupStatistics([1, 0, null, 1], [true, false, null, true]);
  assert.equal(g.size, 4);
  assert.equal(g.scored, 3);
  assert.equal(g.correct, 2);
  assert.ok(Math.abs(g.mean - 2 / 3) < 1e-12);
  assert.ok(Math.abs(g.std - Math.sqrt(1 / 3)) < 1e-12);
  const adv = groupAdvantages([1, 0, 1]);
  assert.deepEqual(g.advantages, [adv[0], adv[1], null, adv[2]]);
  assert.equal(g.zeroVariance, false);
  assert.equal(groupStatistics([0.5, 0.5, 0.5]).zeroVariance, true);
  assert.equal(groupStatistics([0.5]).zeroVariance, false, 'one sample is not a group');
  assert.equal(groupStatistics([null, null]).scored, 0);
});

test('saved outcomes come back in a new scorer only while their database is unchanged', async () => {
  let stamp = 'v1';
  const opts = () => ({
    resources: newResources(pool),
    dbExists: existsSync,
    dbStamp: (p: string) => (p === schoolDb ? stamp : null),
  });
  const first = createReplayScorer(opts());
  const right = skyrlEpisode([], 'SELECT name FROM student WHERE age > 20', { id: 'right', gold: GOLD });
  const noGold = trajectory({ id: 'ng', turns: [], finalSql: 'SELECT 1' });
  const a = await first.score(right, AUTO_PANEL);
  const b = await first.score(noGold, AUTO_PANEL);
  const saved = JSON.parse(JSON.stringify(first.snapshot()));
  assert.equal(saved.length, 2);
  assert.deepEqual(
    saved.map((s: { dbStamp: string }) => s.dbStamp),
    ['v1', 'v1'],
  );

  const resources = newResources(pool);
  const second = createReplayScorer({ ...opts(), resources });
  assert.equal(second.restore(saved, [right, noGold]), 2);
  assert.deepEqual(second.cached(right, AUTO_PANEL), a);
  assert.deepEqual(await second.score(noGold, AUTO_PANEL), b);
  assert.equal(resources.stats().execRuns, 0, 'nothing ran again');
  assert.equal(
    createReplayScorer(opts()).restore(saved, [noGold]),
    1,
    'outcomes of trajectories not in the file are left out',
  );

  stamp = 'v2';
  const third = createReplayScorer(opts());
  assert.equal(third.restore(saved, [right, noGold]), 0, 'the database changed: every saved outcome is stale');
  assert.equal(third.cached(right, AUTO_PANEL), undefined);
});
