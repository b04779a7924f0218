// Tests of datasetRuns/progressBar: formatDuration; terminal mode redraws one line in place with bar, count, rate and
// ETA
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createProgress, formatDuration } from '../../../src/cli/progressBar';
import { capture } from '../captureStream';

test('formatDuration', () => {
  assert.equal(formatDuration(0), '0:00');
  assert.equal(formatDuration(65), '1:05');
  assert.equal(formatDuration(3 * 3600 + 4 * 60 + 5), '3:04:05');
  assert.equal(formatDuration(NaN), '?');
  assert.equal(formatDuration(Infinity), '?');
});

test('terminal mode redraws one line in place with bar, count, rate and ETA', () => {
  const s = capture();
  let t = 0;
  const p = createProgress(s.stream, 10, { tty: true, now: () => t, columns: 100, label: 'bench' });
  t = 1000;
  p.update(1);
  t = 2000;
  p.update(4, 'EX 0.50');
  t = 2050;
  p.update(5); // within the redraw interval: not drawn
  const text = s.text();
  assert.ok(!text.includes('\n'));
  const frames = text.split('\r').filter(Boolean);
  assert.equal(frames.length, 2);
  assert.match(frames[0], /^bench \[#+\.+\] 1\/10 10% 1\.0\/s ETA 0:09\x1b\[K$/);
  assert.match(frames[1], /^bench \[#+\.+\] 4\/10 40% 2\.0\/s ETA 0:03 {2}EX 0\.50\x1b\[K$/);
  t = 4000;
  p.finish();
  assert.match(
    s.text(),
    /\rbench \[#+\.+\] 5\/10 50% 1\.3\/s ETA 0:04\x1b\[K\n$/,
    'finish draws the latest count even if it was not drawn',
  );
  p.finish();
  p.update(9);
  assert.equal(s.text().split('\n').length, 2, 'nothing after finish');
});

test('plain mode writes whole lines at most once per interval, and always the last one', () => {
  const s = capture();
  let t = 0;
  const p = createProgress(s.stream, 4, { tty: false, now: () => t, intervalMs: 10_000 });
  t = 500;
  p.update(1);
  t = 5000;
  p.update(2);
  t = 12_000;
  p.update(3);
  t = 16_000;
  p.update(4);
  p.finish();
  const lines = s.text().trimEnd().split('\n');
  assert.ok(!s.text().includes('\r'));
  assert.deepEqual(
    lines.map((l) => l.split(' ')[0]),
    ['1/4', '3/4', '4/4'],
  );
  assert.match(lines[2], /^4\/4 100% 15\.0\/min in 0:16$/);
});
