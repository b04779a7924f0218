// The shared polling wait: it returns the predicate's first truthy value, awaits async predicates, and fails after its
// time limit with the awaited thing named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../../support/until';

test('until returns the first truthy value, after the falsy ones', async () => {
  let calls = 0;
  const got = await until(
    'the third call',
    () => (++calls >= 3 ? { calls } : calls === 1 ? undefined : false),
    5_000,
    1,
  );
  assert.deepEqual(got, { calls: 3 });
});

test('until awaits an async predicate', async () => {
  let calls = 0;
  assert.equal(await until('a promise', async () => ++calls === 2 && 'done', 5_000, 1), 'done');
});

test('until rejects after its limit with what it waited for', async () => {
  const started = Date.now();
  await assert.rejects(
    until('never', () => false, 30, 5),
    /timed out waiting for never \(30 ms\)/,
  );
  assert.ok(Date.now() - started >= 30);
});
