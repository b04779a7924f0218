// The job panel's chart data: a series per metric present, grouped in reading order (reward and its terms, accuracy,
// turns, lengths, entropy, KL, clipping, optimiser, loss, speed), a step range cut, thinning that keeps spikes, axis
// extents, zoom and pan kept inside the data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatValue,
  groupOf,
  inRange,
  panRange,
  seriesOf,
  stepExtent,
  thin,
  valueExtent,
  zoomAt,
  zoomRange,
  type Point,
} from '../../../src/core/training/metricSeries';
import type { MetricRow } from '../../../src/core/training/metricsReader';

test('every metric present becomes a series, in group order, bookkeeping columns left out', () => {
  const rows: MetricRow[] = [
    { step: 2, values: { loss: 1.5, 'critic/score/mean': 0.4, 'actor/entropy': 0.9, epoch: 0.2 } },
    { step: 1, values: { loss: 2, 'reward/ex': 0.1, lr: 1e-5, 'perf/throughput': 800, 'actor/pg_clipfrac': 0 } },
  ];
  const s = seriesOf(rows);
  assert.deepEqual(
    s.map((x) => [x.metric, x.group]),
    [
      ['critic/score/mean', 'reward'],
      ['reward/ex', 'reward'],
      ['actor/entropy', 'entropy'],
      ['actor/pg_clipfrac', 'clipping'],
      ['lr', 'optimizer'],
      ['loss', 'loss'],
      ['perf/throughput', 'speed'],
    ],
  );
  assert.deepEqual(
    s.find((x) => x.metric === 'loss')?.points,
    [
      { step: 1, value: 2 },
      { step: 2, value: 1.5 },
    ],
    'points in step order whatever the row order',
  );
});

test('groups of the names verl, TRL and Quarry log', () => {
  const cases: Array<[string, string]> = [
    ['reward', 'reward'],
    ['reward_std', 'reward'],
    ['rewards/execution', 'reward'],
    ['critic/rewards/mean', 'reward'],
    ['ex', 'accuracy'],
    ['pass@4', 'accuracy'],
    ['val/pass_at_4', 'accuracy'],
    ['num_turns/mean', 'turns'],
    ['response_length/mean', 'length'],
    ['completions/mean_length', 'length'],
    ['entropy', 'entropy'],
    ['kl', 'kl'],
    ['actor/ppo_kl', 'kl'],
    ['clip_ratio', 'clipping'],
    ['grad_norm', 'optimizer'],
    ['actor/lr', 'optimizer'],
    ['train_loss', 'loss'],
    ['perf/throughput', 'speed'],
    ['seconds', 'speed'],
    ['something_else', 'other'],
  ];
  for (const [metric, group] of cases) assert.equal(groupOf(metric), group, metric);
});

const line = (n: number, f: (i: number) => number): Point[] =>
  Array.from({ length: n }, (_, i) => ({ step: i + 1, value: f(i + 1) }));

test('thinning keeps the first and last points and every spike, and leaves short series alone', () => {
  const pts = line(1000, (i) => (i === 437 ? 50 : i === 800 ? -50 : Math.sin(i / 50)));
  const t = thin(pts, 100);
  assert.ok(t.length <= 100, `${t.length} points`);
  assert.deepEqual(t[0], pts[0]);
  assert.deepEqual(t[t.length - 1], pts[999]);
  assert.ok(t.some((p) => p.value === 50 && p.step === 437));
  assert.ok(t.some((p) => p.value === -50 && p.step === 800));
  assert.ok(
    t.every((p, i) => i === 0 || p.step > t[i - 1].step),
    'step order',
  );
  assert.equal(thin(pts.slice(0, 50), 100).length, 50);
});

test('step range, extents, zoom and pan', () => {
  const pts = line(10, (i) => i * 2);
  assert.deepEqual(
    inRange(pts, { from: 3, to: 5 }).map((p) => p.step),
    [3, 4, 5],
  );
  assert.equal(inRange(pts, null).length, 10);
  assert.deepEqual(stepExtent([{ metric: 'a', group: 'other', points: pts }]), { from: 1, to: 10 });
  assert.equal(stepExtent([]), null);
  const v = valueExtent([pts]);
  assert.ok(v && v.min < 2 && v.max > 20);
  assert.deepEqual(valueExtent([[{ step: 1, value: 0 }]]), { min: 0, max: 1 }, 'a flat zero has no negative axis');
  assert.deepEqual(valueExtent([[{ step: 1, value: 2 }]]), { min: 1.8, max: 2.2 }, 'a flat line sits mid-chart');
  const extent = { from: 0, to: 100 };
  assert.deepEqual(zoomRange(extent, extent, 0.5), { from: 25, to: 75 });
  assert.deepEqual(zoomRange({ from: 25, to: 75 }, extent, 4), extent, 'zooming out stops at the data');
  assert.deepEqual(zoomAt(extent, extent, 0.5, 20), { from: 10, to: 60 }, 'the step under the wheel stays put');
  assert.deepEqual(zoomAt({ from: 10, to: 60 }, extent, 2, 20), { from: 0, to: 100 }, 'out again, clamped to the data');
  assert.deepEqual(zoomAt(extent, extent, 0.5, 500), { from: 50, to: 100 }, 'a pivot past the end zooms at the end');
  assert.deepEqual(zoomAt({ from: 40, to: 41 }, extent, 0.5, 40.5), { from: 40, to: 41 }, 'never narrower than a step');
  assert.deepEqual(panRange({ from: 25, to: 75 }, extent, 0.25), { from: 37.5, to: 87.5 });
  assert.deepEqual(panRange({ from: 25, to: 75 }, extent, 1), { from: 50, to: 100 }, 'panning stops at the end');
  assert.deepEqual(panRange({ from: 25, to: 75 }, extent, -1), { from: 0, to: 50 });
  assert.equal(formatValue(0.000012), '1.20e-5');
  assert.equal(formatValue(0.12345), '0.123');
  assert.equal(formatValue(1234), '1230');
});

test('a two-point learning rate warming up from 0 gets no negative axis (not −5e−7)', () => {
  const lr = [
    { step: 1, value: 0 },
    { step: 2, value: 1e-5 },
  ];
  const v = valueExtent([lr]);
  assert.ok(v);
  assert.equal(v.min, 0);
  assert.ok(v.max > 1e-5);
  const negative = valueExtent([
    [
      { step: 1, value: -2 },
      { step: 2, value: 0 },
    ],
  ]);
  assert.deepEqual(negative, { min: -2.1, max: 0 }, 'a never-positive series gets no positive axis');
  const signed = valueExtent([
    [
      { step: 1, value: -1 },
      { step: 2, value: 1 },
    ],
  ]);
  assert.deepEqual(signed, { min: -1.1, max: 1.1 });
});
