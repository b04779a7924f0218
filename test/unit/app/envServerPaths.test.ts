// The environment service's request paths: the shortcut for plain paths gives exactly what the URL parser gives,
// for the paths clients send and for those it rewrites (dot segments, %-escapes, backslashes, a leading `//`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathOf } from '../../../src/app/envService/server';

const byParser = (raw: string) => new URL(raw, 'http://x').pathname.replace(/\/+$/, '') || '/';

test('a request path is what the URL parser makes of it, plain or not', () => {
  const paths = [
    '/',
    '/v1/reward',
    '/v1/reward/',
    '/v1/episodes/ep-1_a/step',
    '/v1//reward',
    '//v1/reward',
    '//evil.example/v1/reward',
    '/v1/./reward',
    '/v1/../v1/reward',
    '/v1/%2e%2e/reward',
    '/v1/reward?panel=x',
    '/v1/reward#frag',
    '/v1\\reward',
    '/v1/épisodes',
    '/v1/re ward',
  ];
  for (const p of paths) assert.equal(pathOf(p), byParser(p), p);
  assert.equal(pathOf('//v1/reward'), '/reward', 'a leading // names a host to the parser, not a path');
});
