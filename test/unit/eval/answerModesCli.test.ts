// Tests of quarry eval --mode spider2 and --compare-mode on a real SQLite file: Spider 2.0 accepts extra predicted
// columns, swapped columns and values within 1e-2 that BIRD rejects, and each disagreement comes with its category
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { capture } from '../captureStream';

async function quarry(args: string[], cwd: string) {
  const out = capture();
  const err = capture();
  const code = await main(args, { stdout: out.stream, stderr: err.stream, cwd });
  return { code, stdout: out.text(), stderr: err.text() };
}

const dir = tempDir('quarry-eval-spider2-');
mkdirSync(join(dir, 'db', 'shop'), { recursive: true });
buildDb('eval-shop', { dir: join(dir, 'db', 'shop'), file: 'shop.sqlite' });
const pairs = [
  ['SELECT name FROM item ORDER BY id', 'SELECT name, price FROM item ORDER BY id'], // extra column
  ['SELECT id, name FROM item ORDER BY id', 'SELECT name, id FROM item ORDER BY id'], // column order
  ['SELECT price FROM item ORDER BY id', 'SELECT price + 0.004 FROM item ORDER BY id'], // tolerance
  ['SELECT name FROM item ORDER BY id', 'SELECT name FROM item ORDER BY id DESC'], // order
  ['SELECT count(*) FROM item', 'SELECT count(*) FROM item'], // same
  ['SELECT qty FROM item ORDER BY id', 'SELECT coalesce(qty, 0) FROM item ORDER BY id'], // NaN counts as 0
];
writeFileSync(join(dir, 'gold.sql'), pairs.map(([g]) => `${g}\tshop`).join('\n') + '\n');
writeFileSync(join(dir, 'pred.sql'), pairs.map(([, p]) => p).join('\n') + '\n');

const run = (extra: string[]) =>
  quarry(
    ['eval', '--gold', 'gold.sql', '--pred', 'pred.sql', '--db-dir', 'db', '--jobs', '1', '--out', 'r.json', ...extra],
    dir,
  );
const report = () => JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));

test('spider2 mode: extra and swapped columns, 1e-2 tolerance and NULL = 0 pass; row order counts', async () => {
  const r = await run(['--mode', 'spider2']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    report().items.map((i: { exec: boolean; reason: string }) => [i.exec, i.reason]),
    [
      [true, 'match'],
      [true, 'match'],
      [true, 'match'],
      [false, 'order'],
      [true, 'match'],
      [true, 'match'],
    ],
  );
  const sorted = await run(['--mode', 'spider2', '--ignore-order']);
  assert.equal(sorted.code, 0, sorted.stderr);
  assert.equal(report().items[3].exec, true);
});

test('--compare-mode lists the items the modes score differently with their categories', async () => {
  const r = await run(['--mode', 'spider2', '--compare-mode', 'bird']);
  assert.equal(r.code, 0, r.stderr);
  const ds = report().disagreements as { index: number; categories: string[]; verdicts: Record<string, unknown> }[];
  assert.deepEqual(
    ds.map((d) => [d.index, d.categories]),
    [
      [0, ['extra-columns']],
      [1, ['column-order']],
      [2, ['tolerance']],
      [3, ['order']],
      [5, ['other']],
    ],
  );
  assert.deepEqual(Object.keys(ds[0].verdicts), ['spider2', 'bird']);
  assert.match(r.stderr, /spider2 vs bird: 5 items scored differently/);
});
