// Tests of models/stops: splitStops: duplicates and empty strings dropped, the first n go to the server; findStop:
// earliest occurrence wins, the longer one at a tie
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StopCutter, findStop, inferStopString, splitStops } from '../../../src/core/models/stops';

test('splitStops: duplicates and empty strings dropped, the first n go to the server', () => {
  assert.deepEqual(splitStops(['a', '', 'b', 'a', 'c', 'd', 'e', 'f'], 4), {
    server: ['a', 'b', 'c', 'd'],
    client: ['e', 'f'],
  });
  assert.deepEqual(splitStops(undefined, 4), { server: [], client: [] });
});

test('findStop: earliest occurrence wins, the longer one at a tie', () => {
  assert.deepEqual(findStop('abc</sql> x', ['x', '</sql>']), { index: 3, stop: '</sql>' });
  assert.deepEqual(findStop('ab', ['b', 'ab']), { index: 0, stop: 'ab' });
  assert.equal(findStop('abc', ['z']), null);
});

test('StopCutter holds back only what may start a stop string, and never passes text beyond one', () => {
  const cut = new StopCutter(['</answer>', 'STOP']);
  const out: string[] = [];
  const feed = (d: string) => {
    const r = cut.push(d);
    out.push(r.emit);
    return r.stop;
  };
  assert.equal(feed('The answer is <'), null);
  assert.equal(out.join(''), 'The answer is ', 'the "<" is held back');
  assert.equal(feed('b>42</'), null);
  assert.equal(out.join(''), 'The answer is <b>42', '"</" could still begin </answer>');
  assert.equal(feed('b> and </ans'), null);
  assert.equal(out.join(''), 'The answer is <b>42</b> and ', '"</b" cannot, so it went out');
  assert.equal(feed('wer> trailing'), '</answer>');
  assert.equal(out.join(''), 'The answer is <b>42</b> and ');
  assert.deepEqual(cut.push('more'), { emit: '', stop: '</answer>' });
});

test('StopCutter flushes held text when the stream ends without a stop', () => {
  const cut = new StopCutter(['STOP']);
  assert.deepEqual(cut.push('all ST'), { emit: 'all ', stop: null });
  assert.equal(cut.flush(), 'ST');
});

test('inferStopString: one plausible stop or none', () => {
  assert.equal(inferStopString('run <sql>SELECT 1', ['</sql>', '</answer>']), '</sql>');
  assert.equal(inferStopString('run <sql>SELECT 1</sql> then <answer>2', ['</sql>', '</answer>']), '</answer>');
  assert.equal(
    inferStopString('no tags here', ['</sql>', '</answer>']),
    null,
    'a close tag with nothing open is implausible',
  );
  assert.equal(inferStopString('x', ['Observation:', '</sql>']), 'Observation:');
  assert.equal(inferStopString('<sql>x', ['Observation:', '</sql>']), null, 'two plausible: no guess');
  assert.equal(
    inferStopString('saw Observation: before', ['Observation:']),
    null,
    'a stop already in the text did not end it',
  );
});
