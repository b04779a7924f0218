// Tests of rewards/engine: gold results and gold parses are computed once per gold across many scorings; concurrent
// scorings of one gold share one execution
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ExecRequest } from '../../../src/core/db/types';
import { createScoringResources, loadPanel, scorePanel } from '../../../src/core/rewards';
import { schoolDb, newPool } from './fixtures';

const pool = newPool();
after(() => pool.close());

test('gold results and gold parses are computed once per gold across many scorings', async () => {
  const runs: string[] = [];
  const res = createScoringResources({
    run: (req: ExecRequest) => {
      runs.push(req.sql);
      return pool.exec(req);
    },
    timeoutMs: 5000,
  });
  const gold = 'SELECT name FROM student WHERE age > 20';
  const preds = [
    'SELECT name FROM student',
    'SELECT name FROM student WHERE age > 21',
    'SELECT name FROM teacher',
    'SELECT name FROM student',
  ];
  for (const panel of ['sqltrail', 'mtsqlr1', 'mtir']) {
    for (const predSql of preds)
      await scorePanel(loadPanel(panel), { goldSql: gold, dbPath: schoolDb, predSql, difficulty: 'medium' }, res);
  }
  assert.equal(runs.filter((s) => s === gold).length, 1, 'the gold ran once');
  assert.equal(runs.length, 1 + new Set(preds).size, 'each distinct prediction ran once');
  const stats = res.stats();
  assert.equal(stats.execRuns, runs.length);
  assert.ok(
    stats.memoHits > stats.memoComputes,
    `analyses reused (${stats.memoHits} hits, ${stats.memoComputes} computes)`,
  );
});

test('concurrent scorings of one gold share one execution', async () => {
  const runs: string[] = [];
  const res = createScoringResources({
    run: (req: ExecRequest) => {
      runs.push(req.sql);
      return pool.exec(req);
    },
    timeoutMs: 5000,
  });
  const gold = 'SELECT count(*) FROM class';
  await Promise.all(
    Array.from({ length: 8 }, () =>
      scorePanel(loadPanel('skyrl'), { goldSql: gold, dbPath: schoolDb, predSql: gold }, res),
    ),
  );
  assert.equal(runs.length, 1);
});

test('a pool failure is not cached as a verdict: the next scoring retries', async () => {
  let fail = true;
  const res = createScoringResources({
    run: (req: ExecRequest) => (fail ? Promise.reject(new Error('pool closed')) : pool.exec(req)),
    timeoutMs: 5000,
  });
  const input = { goldSql: 'SELECT 1', dbPath: schoolDb, predSql: 'SELECT 1' };
  await assert.rejects(scorePanel(loadPanel('skyrl'), input, res), /pool closed/);
  fail = false;
  assert.equal((await scorePanel(loadPanel('skyrl'), input, res)).total, 1);
});
