// Greedy parity (`quarry checkpoints parity`): the tiny model's ONNX export decodes its reference's prompts to the same
// tokens; a reference with one token changed is reported at exactly that position; a malformed reference is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../../src/cli/main';
import { compareTokens, parityReferenceProblem, type ParityReference } from '../../../src/core/models/onnx/parity';
import { repoRoot, tempDir } from '../../helpers/fixtures';

const modelDir = join(repoRoot, 'media', 'models', 'tiny-sql');
const reference = JSON.parse(readFileSync(join(modelDir, 'reference.json'), 'utf8')) as ParityReference;

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const stdout = new Writable({
    write(c, _e, cb) {
      out += String(c);
      cb();
    },
  });
  const stderr = new Writable({
    write(c, _e, cb) {
      err += String(c);
      cb();
    },
  });
  const code = await main(args, { stdout, stderr, cwd: repoRoot });
  return { code, out, err };
}

test('compareTokens names the first differing position, including one side ending first', () => {
  assert.equal(compareTokens([1, 2, 3], [1, 2, 3]), null);
  assert.deepEqual(compareTokens([1, 2, 3], [1, 9, 3]), { position: 1, expected: 2, got: 9 });
  assert.deepEqual(compareTokens([1, 2], [1, 2, 3]), { position: 2, expected: null, got: 3 });
  assert.deepEqual(compareTokens([1, 2, 3], [1]), { position: 1, expected: 2, got: null });
});

test('the tiny model decodes its reference prompts to the reference tokens', async () => {
  const r = await run([
    'checkpoints',
    'parity',
    '--onnx',
    modelDir,
    '--reference',
    join(modelDir, 'reference.json'),
    '--json',
  ]);
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(r.out) as { equal: boolean; cases: { equal: boolean }[] };
  assert.equal(report.equal, true);
  assert.equal(report.cases.length, reference.cases.length);
});

test('a reference with one token changed is reported at that position and exits 1', async () => {
  const changed = structuredClone(reference);
  const c = changed.cases[1];
  const at = Math.min(5, c.output_ids.length - 2);
  c.output_ids[at] = (c.output_ids[at] + 1) % 500;
  const path = join(tempDir(), 'ref.json');
  writeFileSync(path, JSON.stringify(changed));
  const r = await run(['checkpoints', 'parity', '--onnx', modelDir, '--reference', path]);
  assert.equal(r.code, 1);
  assert.match(r.out, new RegExp(`case 1: differs at token ${at}: expected ${c.output_ids[at]}, got \\d+`));
  assert.match(r.out, new RegExp(`parity: 1 of ${reference.cases.length} cases differ`));
});

test('a malformed reference and a missing flag are bad input', async () => {
  assert.match(parityReferenceProblem({ stop_ids: [1], cases: [{ messages: 'x' }] }) ?? '', /case 0: messages/);
  const path = join(tempDir(), 'bad.json');
  writeFileSync(path, JSON.stringify({ stop_ids: [], cases: [] }));
  const r = await run(['checkpoints', 'parity', '--onnx', modelDir, '--reference', path]);
  assert.equal(r.code, 2);
  assert.match(r.err, /not a parity reference: cases must be a non-empty list/);
  assert.equal((await run(['checkpoints', 'parity', '--reference', path])).code, 2);
  assert.equal((await run(['checkpoints', 'frob'])).code, 2);
});
