// The seeded generators repeat what the copies they replace produced (values recorded from those copies before they
// were merged into src/core/util/random.ts): test-suite databases, data rounds, sampled text and the soak bench's
// workload depend on these exact sequences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createRng,
  floatLcg31,
  lcg32,
  mulberry32,
  rngOf,
  seededRandom,
  streamSeed,
  type Random,
} from '../../../src/core/util/random';

const take = (r: Random, n = 4) => Array.from({ length: n }, r);

test('seededRandom (onnx sampler, test suites) keeps its sequence, seed 0 and fractional seeds included', () => {
  assert.deepEqual(
    take(seededRandom(0)),
    [0.3588899802416563, 0.10590326134115458, 0.675290479324758, 0.9179345588199794],
  );
  assert.deepEqual(
    take(seededRandom(-2.5)),
    [0.5127934608608484, 0.46524663479067385, 0.09994429117068648, 0.44028591737151146],
  );
  assert.deepEqual(take(seededRandom(0)), take(seededRandom(0x9e3779b9)));
});

test('mulberry32 (data rounds, property tests) keeps its sequence; seed 0 is not remapped', () => {
  assert.deepEqual(
    take(mulberry32(0)),
    [0.26642920868471265, 0.0003297457005828619, 0.2232720274478197, 0.1462021479383111],
  );
  assert.deepEqual(
    take(mulberry32(42)),
    [0.6011037519201636, 0.44829055899754167, 0.8524657934904099, 0.6697340414393693],
  );
  assert.deepEqual(
    take(mulberry32(-2.5)),
    [0.1577923847362399, 0.04910933715291321, 0.7769853791687638, 0.16885358770377934],
  );
});

test("a test-suite stream: its seed, and next/int/pick/shuffle as a build's draws them", () => {
  assert.equal(streamSeed(1, 'transit', 'fuzz', 3), 1210106661);
  const r = createRng(1, 'transit', 'fuzz', 3);
  assert.deepEqual(
    [r.next(), r.int(-5, 5), r.pick(['a', 'b', 'c', 'd']), r.shuffle([1, 2, 3, 4, 5, 6, 7, 8]).join('')],
    [0.8346598811913282, -4, 'b', '38612745'],
  );
});

test('the LCGs keep their sequences (property tests; the soak bench, rounding in doubles as it always did)', () => {
  assert.deepEqual(take(lcg32(7)), [0.23878083983436227, 0.9134932646993548, 0.6124916663393378, 0.9269814591389149]);
  const soak = take(floatLcg31(7), 1000);
  assert.deepEqual(soak.slice(0, 3), [0.5970560554414988, 0.2992647886276245, 0.5422919988632202]);
  assert.deepEqual(soak.slice(997), [0.558263897895813, 0.06115877628326416, 0.9941321909427643]);
});

test('draws stay in range and a shuffle is a permutation', () => {
  const r = rngOf(mulberry32(5));
  for (let i = 0; i < 1000; i++) {
    const f = r.next();
    assert.ok(f >= 0 && f < 1);
    const n = r.int(3, 6);
    assert.ok(Number.isInteger(n) && n >= 3 && n <= 6);
  }
  const items = Array.from({ length: 50 }, (_, i) => i);
  const shuffled = r.shuffle(items);
  assert.notDeepEqual(shuffled, items);
  assert.deepEqual(
    [...shuffled].sort((a, b) => a - b),
    items,
  );
});
