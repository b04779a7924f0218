// Tests of rewards/report: histogram: integer data gets one bin per value, including empty ones in between;
// histogram: continuous values in equal-width bins, the maximum in the last bin, non-finite left out
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadPanel, integrityFlags } from '../../../src/core/rewards';
import { scoreRun } from '../../../src/core/rewards/scoreRun';
import { histogram, runDiagnostics } from '../../../src/core/rewards/report';
import { newPool, newResources, skyrlEpisode, trajectory } from './fixtures';

const pool = newPool();
after(() => pool.close());

test('histogram: integer data gets one bin per value, including empty ones in between', () => {
  const h = histogram([1, 1, 2, 4, 4, 4], { integer: true });
  assert.deepEqual(
    h.bins.map((b) => [b.lo, b.count]),
    [
      [1, 2],
      [2, 1],
      [3, 0],
      [4, 3],
    ],
  );
  assert.equal(h.n, 6);
  assert.equal(h.min, 1);
  assert.equal(h.max, 4);
  assert.equal(h.mean, 16 / 6);
});

test('histogram: continuous values in equal-width bins, the maximum in the last bin, non-finite left out', () => {
  const h = histogram([0, 0.1, 0.5, 0.99, 1, NaN, Infinity], { bins: 4 });
  assert.equal(h.bins.length, 4);
  assert.deepEqual(
    h.bins.map((b) => b.count),
    [2, 0, 1, 2],
  );
  assert.equal(h.bins[0].lo, 0);
  assert.equal(h.bins[3].hi, 1);
  assert.equal(h.n, 5);
  assert.equal(
    h.bins.reduce((a, b) => a + b.count, 0),
    5,
  );
});

test('histogram: all values equal is one bin; no values is no bins', () => {
  assert.deepEqual(histogram([2, 2, 2]).bins, [{ lo: 2, hi: 2, count: 3 }]);
  assert.deepEqual(histogram([]), { bins: [], n: 0, min: null, max: null, mean: null });
});

test('histogram: bins are no narrower than three significant digits (advantage spreads differ only by GRPO ε)', () => {
  const h = histogram([Math.SQRT2, Math.SQRT2 + 2e-16, Math.SQRT2 * (1 - 1.6e-6)]);
  assert.equal(h.bins.length, 1);
  assert.equal(h.bins[0].count, 3);
  assert.equal(histogram([0, 0.5]).bins.length, 10, 'a real spread gets the bins asked for');
  assert.deepEqual(
    histogram([0, 0.0015, 0.002]).bins.map((b) => b.count),
    [1, 2],
    'two bins of 0.001',
  );
});

test('histogram: integer data spanning too many values falls back to equal-width bins', () => {
  const h = histogram([0, 100], { integer: true, bins: 5 });
  assert.equal(h.bins.length, 5);
  assert.deepEqual(
    h.bins.map((b) => b.count),
    [1, 0, 0, 0, 1],
  );
});

const GOLD = 'SELECT name FROM teacher';
const EMPTY_GOLD = "SELECT name FROM student WHERE name = 'Zed'";

function fixtureRun() {
  return [
    // g1: two samples, one right, one wrong → non-zero variance, advantages ±
    skyrlEpisode(['SELECT * FROM teacher'], GOLD, { id: 'g1-a', groupId: 'g1', gold: GOLD, difficulty: 'easy' }),
    skyrlEpisode([], 'SELECT subject FROM teacher', { id: 'g1-b', groupId: 'g1', gold: GOLD, difficulty: 'easy' }),
    // g2: both samples win on an empty gold → zero variance, empty-gold win flag
    skyrlEpisode([], 'SELECT name FROM student WHERE age > 99', {
      id: 'g2-a',
      groupId: 'g2',
      gold: EMPTY_GOLD,
      difficulty: 'medium',
    }),
    skyrlEpisode(['SELECT 1', 'SELECT 2'], 'SELECT name FROM student WHERE age > 98', {
      id: 'g2-b',
      groupId: 'g2',
      gold: EMPTY_GOLD,
      difficulty: 'medium',
    }),
    // alone, bad format (no <solution>), hardness from the gold
    trajectory({
      id: 'solo',
      turns: [{ assistant: 'SELECT name FROM teacher', kind: 'answer', sql: 'SELECT name FROM teacher' }],
      finalSql: 'SELECT name FROM teacher',
      gold: GOLD,
    }),
    // no gold: skipped
    skyrlEpisode([], GOLD, { id: 'nogold' }),
  ];
}

test(
  'runDiagnostics: reward and turn histograms, EX by ' + 'hardness, term means, flags with items, group stats',
  async () => {
    const records = fixtureRun();
    const resources = newResources(pool);
    const panel = loadPanel('skyrl');
    const progress: Array<[number, number]> = [];
    const report = await scoreRun(records, panel, { resources, onProgress: (d, t) => progress.push([d, t]) });
    assert.deepEqual(
      progress.map(([d]) => d),
      [1, 2, 3, 4, 5],
    );
    assert.ok(progress.every(([, t]) => t === 5));

    const d = runDiagnostics(report, records, resources);
    assert.equal(d.panel, 'skyrl');
    assert.equal(d.scored, 5);
    assert.deepEqual(
      d.skipped.map((s) => s.id),
      ['nogold'],
    );
    const byId = new Map(d.items.map((it) => [it.id, it]));
    assert.deepEqual([...byId.keys()].sort(), ['g1-a', 'g1-b', 'g2-a', 'g2-b', 'solo']);
    assert.equal(byId.get('g1-a')!.correct, true);
    assert.equal(byId.get('g1-b')!.correct, false);
    assert.equal(byId.get('g2-b')!.turns, 3);
    // skyrl: 1 for the three right and well-formed, 0 for the wrong one, −1 for the bad format (exec gated off).
    assert.deepEqual(d.items.map((it) => it.total).sort(), [-1, 0, 1, 1, 1]);
    assert.equal(byId.get('solo')!.total, -1);
    assert.equal(d.reward.n, 5);
    assert.equal(d.reward.min, -1);
    assert.equal(d.reward.max, 1);
    assert.equal(
      d.reward.bins.reduce((a, b) => a + b.count, 0),
      5,
    );
    assert.deepEqual(
      d.turns.bins.map((b) => [b.lo, b.count]),
      [
        [1, 3],
        [2, 1],
        [3, 1],
      ],
    );

    // solo's gold is a one-table select: Spider hardness easy, computed from the gold.
    assert.equal(byId.get('solo')!.hardness, 'easy');
    const easy = d.byHardness.find((r) => r.hardness === 'easy')!;
    // g1-a right, g1-b wrong, solo right on execution (its reward is −1 for the format, EX ignores the panel).
    assert.deepEqual([easy.count, easy.correct], [3, 2]);
    assert.equal(easy.ex, 2 / 3);
    const medium = d.byHardness.find((r) => r.hardness === 'medium')!;
    assert.deepEqual([medium.count, medium.correct, medium.ex], [2, 2, 1]);
    assert.deepEqual(
      d.byHardness.map((r) => r.hardness),
      ['easy', 'medium', 'hard', 'extra'],
    );
    assert.equal(d.byHardness.find((r) => r.hardness === 'hard')!.ex, null);
    assert.equal(d.ex, 4 / 5);

    assert.deepEqual(
      d.terms.map((t) => t.name),
      ['format', 'exec'],
    );
    assert.equal(d.terms[0].meanContribution, -1 / 5);
    assert.equal(d.terms[1].meanContribution, 3 / 5);

    // Flags carry the items they are about, in the order of integrityFlags' lines.
    assert.deepEqual(
      d.flags.map((f) => f.text),
      integrityFlags(report.integrity),
    );
    const empty = d.flags.find((f) => f.kind === 'empty-gold-wins')!;
    assert.deepEqual(empty.items, ['g2-a', 'g2-b']);
    const zero = d.flags.find((f) => f.kind === 'zero-variance-group')!;
    assert.deepEqual(zero.items, ['g2-a', 'g2-b']);
    assert.ok(d.flags.some((f) => f.kind === 'format-failure' && f.items.includes('solo')));

    const g = d.groups!;
    assert.equal(g.count, 2);
    assert.equal(g.zeroVariance, 1);
    assert.equal(g.zeroVarianceShare, 0.5);
    assert.deepEqual(g.zeroVarianceIds, ['g2']);
    assert.equal(g.advantages.n, 4);
    // g1: rewards 1 and 0 → advantages ±0.707 (sample std); g2: both 0.
    const a = byId.get('g1-a')!.advantage!;
    assert.ok(Math.abs(a - Math.SQRT1_2) < 1e-4, String(a));
    assert.equal(g.spread.n, 2);
    assert.equal(g.spread.min, 0);
    assert.ok(Math.abs(g.spread.max! - Math.SQRT2) < 1e-4);
    assert.equal(g.solvedByAll, 1);
    assert.equal(g.solvedByNone, 0);
    assert.equal(g.meanPass, 0.75);
  },
);

test('runDiagnostics: a run of single samples has no group statistics', async () => {
  const records = [skyrlEpisode([], GOLD, { id: 'x', gold: GOLD })];
  const resources = newResources(pool);
  const d = runDiagnostics(await scoreRun(records, loadPanel('sqltrail'), { resources }), records, resources);
  assert.equal(d.groups, null);
  assert.deepEqual(
    d.terms.map((t) => t.name),
    ['exec', 'turns', 'schema', 'bigram', 'syntax', 'format'],
  );
  assert.equal(d.items[0].advantage, null);
  assert.equal(d.turns.bins.length, 1);
});

test('scoreRun stops when its signal is aborted', async () => {
  const records = fixtureRun().slice(0, 5);
  const ac = new AbortController();
  ac.abort(new Error('stopped by the user'));
  await assert.rejects(
    scoreRun(records, loadPanel('skyrl'), { resources: newResources(pool), signal: ac.signal }),
    /stopped by the user/,
  );
});
