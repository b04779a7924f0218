// Tests of models/retry: backoff doubles from the base up to the cap, half fixed and half jitter; Retry-After:
// retry-after-ms first, then seconds, then an HTTP date; junk is ignored
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RETRY, backoffMs, retryAfterMs, sleep } from '../../../src/core/models/retry';

test('backoff doubles from the base up to the cap, half fixed and half jitter', () => {
  const p = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, p, () => 0)),
    [50, 100, 200, 400, 500, 500],
  );
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, p, () => 1)),
    [100, 200, 400, 800, 1000, 1000],
  );
  const some = backoffMs(3, p, () => 0.5);
  assert.ok(some > 200 && some < 400);
});

test('Retry-After: retry-after-ms first, then seconds, then an HTTP date; junk is ignored', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now), 250);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '3' }), now), 3000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '1.5' }), now), 1500);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }), now), 10_000);
  assert.equal(
    retryAfterMs(new Headers({ 'retry-after': 'Wed, 31 Dec 2025 00:00:00 GMT' }), now),
    0,
    'a past date means now',
  );
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now), null);
  assert.equal(retryAfterMs(new Headers(), now), null);
});

test('sleep rejects with the abort reason as soon as the signal aborts', async () => {
  const ctl = new AbortController();
  const p = sleep(60_000, ctl.signal);
  ctl.abort(new Error('stop waiting'));
  await assert.rejects(p, /stop waiting/);
  await assert.rejects(sleep(10, AbortSignal.abort(new Error('already'))), /already/);
});
