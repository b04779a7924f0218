// The metrics follower on real files written the way the trainers write them: Quarry/TRL's flat metrics.jsonl
// appended line by line (a step logged twice merges), verl's `{"step", "data"}` file logger, a half-written last line
// kept for the next read, and verl truncating the file when a run resumes (the history read so far is kept; a step
// logged again replaces the old row).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MetricsFollower, flattenNumbers, parseMetricsLine } from '../../../src/core/training/metricsReader';
import { tempDir } from '../../helpers/fixtures';

const line = (o: unknown) => `${JSON.stringify(o)}\n`;

test('a missing file reads as nothing, and is followed once it appears', () => {
  const file = join(tempDir(), 'metrics.jsonl');
  const f = new MetricsFollower(file);
  assert.deepEqual(f.read(), { changed: [], restarted: false, skipped: 0 });
  writeFileSync(file, line({ step: 1, loss: 2 }));
  assert.deepEqual(f.read().changed, [{ step: 1, values: { loss: 2 } }]);
  assert.equal(f.format, 'quarry');
});

test('Quarry metrics.jsonl: only appended lines are read; a step logged again merges into its row', () => {
  const file = join(tempDir(), 'metrics.jsonl');
  writeFileSync(file, line({ step: 1, epoch: 0.1, seconds: 1.5, loss: 2.5, lr: 1e-5 }));
  appendFileSync(file, line({ step: 2, epoch: 0.2, seconds: 3, loss: 2.1, lr: 1e-5, name: 'ignored' }));
  const f = new MetricsFollower(file);
  const first = f.read();
  assert.deepEqual(
    first.changed.map((r) => r.step),
    [1, 2],
  );
  assert.deepEqual(first.changed[1].values, { epoch: 0.2, seconds: 3, loss: 2.1, lr: 1e-5 });
  assert.deepEqual(f.read().changed, [], 'nothing new, nothing read');
  appendFileSync(file, line({ step: 2, train_loss: 2.3 }));
  const again = f.read();
  assert.deepEqual(again.changed, [
    { step: 2, values: { epoch: 0.2, seconds: 3, loss: 2.1, lr: 1e-5, train_loss: 2.3 } },
  ]);
  assert.equal(f.latestStep(), 2);
});

test('a half-written last line waits for its end; a bad whole line is counted and skipped', () => {
  const file = join(tempDir(), 'metrics.jsonl');
  const whole = line({ step: 3, reward: 0.5 });
  writeFileSync(file, line({ step: 1, reward: 0.1 }) + whole.slice(0, 9));
  const f = new MetricsFollower(file);
  assert.deepEqual(
    f.read().changed.map((r) => r.step),
    [1],
  );
  appendFileSync(file, whole.slice(9, 14));
  assert.deepEqual(f.read().changed, [], 'still half a line');
  appendFileSync(file, `${whole.slice(14)}not json\n${line({ loss: 1 })}`);
  const r = f.read();
  assert.deepEqual(r.changed, [{ step: 3, values: { reward: 0.5 } }]);
  assert.equal(r.skipped, 2, 'a line that is not JSON and one without a step');
});

test('multi-byte characters split across reads are not broken', () => {
  const file = join(tempDir(), 'metrics.jsonl');
  const text = line({ step: 1, data: { 'réponse/longueur': 12 } });
  const cut = Buffer.from(text).indexOf(Buffer.from('é')) + 1;
  writeFileSync(file, Buffer.from(text).subarray(0, cut));
  const f = new MetricsFollower(file);
  assert.deepEqual(f.read().changed, []);
  appendFileSync(file, Buffer.from(text).subarray(cut));
  assert.deepEqual(f.read().changed, [{ step: 1, values: { 'réponse/longueur': 12 } }]);
  assert.equal(f.format, 'verl');
});

test("verl's file logger: step and data lines; a resume truncates the file and the history is kept", () => {
  const file = join(tempDir(), 'verl.jsonl');
  // verl/utils/tracking.py FileLogger.log: {"step": step, "data": data}, orjson (NaN written as null).
  const verl = (step: number, score: number) =>
    line({
      step,
      data: {
        'critic/score/mean': score,
        'actor/entropy': 1 / step,
        'actor/pg_clipfrac': 0.01,
        'response_length/mean': 100 + step,
        'perf/throughput': 900,
        'actor/ppo_kl': null,
      },
    });
  writeFileSync(file, verl(1, 0.1) + verl(2, 0.2) + verl(3, 0.3) + verl(4, 0.4));
  const f = new MetricsFollower(file);
  assert.equal(f.read().changed.length, 4);
  assert.equal(f.format, 'verl');
  assert.deepEqual(Object.keys(f.all()[0].values).sort(), [
    'actor/entropy',
    'actor/pg_clipfrac',
    'critic/score/mean',
    'perf/throughput',
    'response_length/mean',
  ]);
  // Resumed from the step-2 checkpoint: verl opens the file with "wb" and logs steps 3.. again.
  writeFileSync(file, verl(3, 0.33));
  const r = f.read();
  assert.equal(r.restarted, true);
  assert.deepEqual(
    r.changed.map((x) => [x.step, x.values['critic/score/mean']]),
    [[3, 0.33]],
  );
  assert.deepEqual(
    f.all().map((x) => [x.step, x.values['critic/score/mean']]),
    [
      [1, 0.1],
      [2, 0.2],
      [3, 0.33],
      [4, 0.4],
    ],
    'steps 1, 2 and 4 from before the resume kept; step 3 replaced',
  );
  assert.equal(f.all()[2].values['actor/pg_clipfrac'], 0.01, 'replaced whole, not merged with the old row');
});

test('a file rewritten to the same or a larger size is noticed by its first line', () => {
  const file = join(tempDir(), 'verl.jsonl');
  writeFileSync(file, line({ step: 1, data: { x: 1 } }));
  const f = new MetricsFollower(file);
  f.read();
  writeFileSync(file, line({ step: 5, data: { x: 5 } }) + line({ step: 6, data: { x: 6 } }));
  const r = f.read();
  assert.equal(r.restarted, true);
  assert.deepEqual(
    f.all().map((x) => x.step),
    [1, 5, 6],
  );
});

test('parseMetricsLine and flattenNumbers', () => {
  assert.equal(parseMetricsLine('[1,2]'), null);
  assert.equal(parseMetricsLine('{"step":"3"}'), null);
  assert.deepEqual(parseMetricsLine('{"step":2,"data":{"a":{"b":1}},"x":3}'), {
    row: { step: 2, values: { 'data/a/b': 1, x: 3 } },
    format: 'quarry',
  });
  assert.deepEqual(flattenNumbers({ a: 1, b: 'x', c: [1], d: { e: 2, f: true } }), { a: 1, 'd/e': 2 });
});
