// The onnx backend's pure parts: token choice (greedy, temperature, top-p, seeds) and stop-string matching.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argmax, sampleToken } from '../../../src/core/models/onnx/sampler';
import { seededRandom } from '../../../src/core/util/random';
import { findStop, safeLength } from '../../../src/core/models/stops';

test('the seeded generator repeats per seed, differs between seeds, and stays in [0, 1)', () => {
  const a = seededRandom(42);
  const b = seededRandom(42);
  const c = seededRandom(43);
  const xs = Array.from({ length: 1000 }, () => a());
  assert.deepEqual(
    Array.from({ length: 1000 }, () => b()),
    xs,
  );
  assert.notDeepEqual(
    Array.from({ length: 1000 }, () => c()),
    xs,
  );
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
});

test('argmax takes the first of equal maxima and respects the offset window', () => {
  const logits = new Float32Array([0, 5, 1, 5, 9, 2]);
  assert.equal(argmax(logits), 4);
  assert.equal(argmax(logits, 0, 4), 1);
  assert.equal(argmax(logits, 2, 2), 1); // window [1, 5]: the 5 at index 3 is position 1 of the window
});

test('temperature 0 is greedy whatever the generator says', () => {
  const logits = new Float32Array([1, 3, 2]);
  assert.equal(sampleToken(logits, 0, 3, { temperature: 0, topP: 1, random: () => 0.999 }), 1);
});

test('a tiny top-p keeps only the most likely token', () => {
  const logits = new Float32Array([1, 3, 2.9, -4]);
  const random = seededRandom(1);
  for (let i = 0; i < 50; i++) assert.equal(sampleToken(logits, 0, 4, { temperature: 1, topP: 0.01, random }), 1);
});

test('sampling frequencies follow the softmax of logits / temperature', () => {
  const logits = new Float32Array([Math.log(1), Math.log(2), Math.log(7)]);
  const random = seededRandom(5);
  const counts = [0, 0, 0];
  const n = 20000;
  for (let i = 0; i < n; i++) counts[sampleToken(logits, 0, 3, { temperature: 1, topP: 1, random })]++;
  const want = [0.1, 0.2, 0.7];
  counts.forEach((c, i) => assert.ok(Math.abs(c / n - want[i]) < 0.02, `token ${i}: ${c / n} vs ${want[i]}`));
  // top-p 0.75 keeps tokens 2 (0.7) and 1 (0.2): token 0 never appears.
  const kept = [0, 0, 0];
  for (let i = 0; i < 5000; i++) kept[sampleToken(logits, 0, 3, { temperature: 1, topP: 0.75, random })]++;
  assert.equal(kept[0], 0);
  assert.ok(kept[1] > 0 && kept[2] > kept[1]);
});

test('findStop finds the earliest stop string, including one that straddles the search start', () => {
  assert.deepEqual(findStop('abc</sql> x </solution>', ['</solution>', '</sql>']), { index: 3, stop: '</sql>' });
  assert.equal(findStop('no stop here', ['</sql>']), null);
  assert.deepEqual(findStop('SELECT 1;</sq' + 'l>', ['</sql>'], 11), { index: 9, stop: '</sql>' });
  assert.equal(findStop('abc', ['']), null, 'an empty stop string never matches');
});

test('safeLength holds back a possible stop-string prefix and an unfinished character', () => {
  assert.equal(safeLength('SELECT 1;</s', ['</sql>']), 'SELECT 1;'.length);
  assert.equal(safeLength('SELECT 1;', ['</sql>']), 'SELECT 1;'.length);
  assert.equal(safeLength('abc<', ['</sql>', '<x']), 3);
  assert.equal(safeLength('caf\uFFFD', []), 3);
});

test('the onnx backend cuts stops with the same rule as the openai one: at a tie the longer stop wins', () => {
  // One stop module for both backends (they used to disagree here: the onnx copy took the first listed).
  assert.deepEqual(findStop('SELECT 1;</sql> more', ['</s', '</sql>']), { index: 9, stop: '</sql>' });
  assert.deepEqual(findStop('SELECT 1;</sql> more', ['</s', '</sql>'], 10), { index: 9, stop: '</sql>' });
});
