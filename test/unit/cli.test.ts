// Tests of unit/cli: quarry with no command prints help and exits 2; an unknown command is named in the error and
// exits 2
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main';
import { capture } from './captureStream';

test('quarry with no command prints help and exits 2', async () => {
  const out = capture();
  const err = capture();
  const code = await main([], { stdout: out.stream, stderr: err.stream, cwd: process.cwd() });
  assert.equal(code, 2);
  assert.match(out.text(), /Usage: quarry <command>/);
});

test('an unknown command is named in the error and exits 2', async () => {
  const out = capture();
  const err = capture();
  const code = await main(['frobnicate'], { stdout: out.stream, stderr: err.stream, cwd: process.cwd() });
  assert.equal(code, 2);
  assert.match(err.text(), /unknown command 'frobnicate'/);
});
