// The job panel's chart arithmetic (webview/shared/chartMath.ts): TensorBoard's debiased EMA smoothing, when a log axis
// is offered, the step range a drag across the plot picks, and a y axis that never pads a non-negative series below 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_SMOOTHING,
  canUseLog,
  logTickShown,
  logTicksLabelled,
  dragToRange,
  smoothEma,
  smoothingWeight,
  tickText,
  yAxisBounds,
} from '../../../webview/shared/chartMath';

const pts = (...values: number[]) => values.map((value, i) => ({ step: i + 1, value }));
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} ≉ ${b}`);

test('smoothing is TensorBoard’s debiased EMA: the first point unchanged, later ones pulled towards the past', () => {
  const raw = pts(10, 0, 0, 10);
  assert.deepEqual(smoothEma(raw, 0), raw, 'weight 0 draws the raw points');
  const s = smoothEma(raw, 0.5);
  assert.deepEqual(
    s.map((p) => p.step),
    [1, 2, 3, 4],
  );
  close(s[0].value, 10); // debiased: not 5
  close(s[1].value, (0.5 * 5 + 0.5 * 0) / (1 - 0.25)); // 2.5 / 0.75
  close(s[2].value, 1.25 / 0.875);
  close(s[3].value, (0.625 + 5) / 0.9375);
  // A constant series stays constant at any weight (what the debiasing is for).
  for (const p of smoothEma(pts(3, 3, 3, 3, 3), 0.9)) close(p.value, 3);
});

test('the smoothing weight from a slider or saved state is kept in 0–0.99', () => {
  assert.equal(smoothingWeight(0.6), 0.6);
  assert.equal(smoothingWeight('0.25'), 0.25);
  assert.equal(smoothingWeight(1), MAX_SMOOTHING);
  assert.equal(smoothingWeight(-1), 0);
  assert.equal(smoothingWeight('x'), 0);
  assert.equal(smoothingWeight(undefined), 0);
});

test('a log axis is offered only when every value is above 0', () => {
  assert.equal(canUseLog([pts(1e-5, 2e-5), pts(3)]), true);
  assert.equal(canUseLog([pts(1e-5, 0)]), false, 'a learning rate warming up from 0');
  assert.equal(canUseLog([pts(-1, 2)]), false);
  assert.equal(canUseLog([[]]), false);
  const asked = yAxisBounds([pts(0, 1e-5)], true);
  assert.ok(asked.type === 'linear' && asked.suggestedMin === 0, 'log asked for, linear drawn: 0 cannot be on it');
  assert.deepEqual(yAxisBounds([pts(1e-5, 1e-3)], true), {
    type: 'logarithmic',
    suggestedMin: 1e-5,
    suggestedMax: 1e-3,
  });
  assert.deepEqual(yAxisBounds([pts(4, 4)], true), { type: 'logarithmic', suggestedMin: 2, suggestedMax: 8 });
  const shown = [1e-5, 2e-5, 3e-5, 5, 7, 10, 20, 0.5, 0.3].map(logTickShown);
  assert.deepEqual(shown, [true, true, false, true, false, true, true, true, false]);
  assert.deepEqual(logTicksLabelled([0.2, 0.23, 0.26, 0.4, 0.7]), [true, false, false, false, true], 'under a decade');
  assert.deepEqual(logTicksLabelled([1, 2, 3, 5, 10]), [true, true, false, true, true]);
});

test('two points of lr from 0 to 1e-5 ask for no axis below 0 (not −5e−7)', () => {
  const y = yAxisBounds([pts(0, 1e-5)], false);
  assert.equal(y.type, 'linear');
  assert.ok(y.type === 'linear' && y.suggestedMin === 0);
  const loss = yAxisBounds([pts(2, 1)], false);
  assert.ok(loss.type === 'linear' && loss.suggestedMin !== undefined && loss.suggestedMin > 0.9);
  assert.deepEqual(yAxisBounds([[]], false), { type: 'linear' });
});

test('a drag across the plot picks the steps under it, either direction, clamped to the plot', () => {
  const plot = { left: 40, right: 240 };
  const range = { from: 0, to: 100 };
  assert.deepEqual(dragToRange(90, 140, plot, range), { from: 25, to: 50 });
  assert.deepEqual(dragToRange(140, 90, plot, range), { from: 25, to: 50 }, 'dragged right to left');
  assert.deepEqual(dragToRange(0, 500, plot, range), { from: 0, to: 100 }, 'past the plot edges');
  assert.equal(dragToRange(100, 102, plot, range), null, 'a click is not a zoom');
  assert.deepEqual(dragToRange(90, 140, plot, { from: 1000, to: 1100 }), { from: 1025, to: 1050 });
});

test('ticks read as the values do elsewhere: 3 significant digits, exponents for tiny learning rates', () => {
  assert.equal(tickText(0.000005), '5.00e-6');
  assert.equal(tickText(0.5), '0.5');
  assert.equal(tickText(1200), '1200');
});
