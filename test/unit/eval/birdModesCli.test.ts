// BIRD's Soft-F1 and R-VES from the command line, end to end: the built CLI spawned as a user runs it on a real SQLite
// file. `--mode bird-f1` scores each item's Soft-F1 (partial credit for rows in another order or rows too many) and
// totals it as evaluation_f1.py does; `--mode bird-ves` times the items BIRD's EX passes and gives each a reward
// tier; `--compare-mode` explains where they part from BIRD's EX (column order, row order).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDb, tempDir } from '../../helpers/fixtures';

const dir = tempDir('quarry-eval-bird-');
mkdirSync(join(dir, 'db', 'shop'), { recursive: true });
buildDb('shop', {
  dir: join(dir, 'db', 'shop'),
  sql: `CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT);
        INSERT INTO item VALUES (1, 'awl'), (2, 'bolt'), (3, 'clamp');`,
});
const pairs = [
  ['SELECT id, name FROM item', 'SELECT id, name FROM item'], // same: F1 1, EX right
  ['SELECT id, name FROM item ORDER BY id', 'SELECT name, id FROM item ORDER BY id'], // columns swapped: F1 1, EX wrong
  ['SELECT name FROM item ORDER BY id', 'SELECT name FROM item ORDER BY id DESC'], // rows reversed: F1 1/3, EX right
  ['SELECT id, name FROM item WHERE id <= 2', 'SELECT id, name FROM item'], // one row too many: F1 0.8
  ['SELECT name FROM item', 'SELECT nope FROM item'], // fails: 0
];
writeFileSync(join(dir, 'gold.sql'), pairs.map(([g]) => `${g}\tshop`).join('\n') + '\n');
writeFileSync(join(dir, 'pred.sql'), pairs.map(([, p]) => p).join('\n') + '\n');
const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'run.js');

function quarryEval(extra: string[]) {
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'eval',
      '--gold',
      'gold.sql',
      '--pred',
      'pred.sql',
      '--db-dir',
      'db',
      '--jobs',
      '1',
      '--out',
      'r.json',
      ...extra,
    ],
    { cwd: dir, encoding: 'utf8' },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const report = () => JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));

test('quarry eval --mode bird-f1: each item its Soft-F1, the total as evaluation_f1.py prints it', () => {
  const r = quarryEval(['--mode', 'bird-f1']);
  assert.equal(r.code, 0, r.stderr);
  const items = report().items as { exec: boolean; score: number; reason: string }[];
  const want = [1, 1, 1 / 3, 0.8, 0];
  items.forEach((it, i) => assert.ok(Math.abs(it.score - want[i]) < 1e-12, `item ${i}: ${it.score}`));
  assert.deepEqual(
    items.map((it) => it.exec),
    [true, true, false, false, false],
  );
  assert.equal(items[4].reason, 'pred-error');
  assert.ok(Math.abs(report().totals.softF1 - (100 * (1 + 1 + 1 / 3 + 0.8)) / 5) < 1e-9);
  assert.match(r.stdout, /^Soft-F1 62\.67$/m);
});

test('quarry eval --mode bird-ves: the items BIRD passes get a reward tier, the others 0; R-VES printed', () => {
  const r = quarryEval(['--mode', 'bird-ves', '--ves-iterations', '3']);
  assert.equal(r.code, 0, r.stderr);
  const scores = (report().items as { score: number }[]).map((it) => it.score);
  for (const i of [0, 2]) assert.ok([0.25, 0.5, 0.75, 1, 1.25].includes(scores[i]), `item ${i}: ${scores[i]}`);
  assert.deepEqual([scores[1], scores[3], scores[4]], [0, 0, 0]);
  const rves = report().totals.rVes as number;
  assert.ok(Math.abs(rves - (100 * (Math.sqrt(scores[0]) + Math.sqrt(scores[2]))) / 5) < 1e-9);
  assert.match(r.stdout, new RegExp(`^R-VES ${rves.toFixed(2).replace('.', '\\.')}$`, 'm'));
});

test('--compare-mode explains where Soft-F1 and R-VES part from BIRD EX', () => {
  const f1 = quarryEval(['--mode', 'bird', '--compare-mode', 'bird-f1']);
  assert.equal(f1.code, 0, f1.stderr);
  const ds = report().disagreements as {
    index: number;
    categories: string[];
    verdicts: Record<string, { score?: number }>;
  }[];
  assert.deepEqual(
    ds.map((d) => [d.index, d.categories]),
    [
      [1, ['column-order']],
      [2, ['order']],
    ],
  );
  assert.ok(Math.abs((ds[1].verdicts['bird-f1'].score ?? -1) - 1 / 3) < 1e-12);
  assert.match(
    f1.stderr,
    /bird vs bird-f1: 2 items scored differently \((column-order 1, order 1|order 1, column-order 1)\)/,
  );
  const ves = quarryEval(['--mode', 'bird-ves', '--compare-mode', 'bird', '--ves-iterations', '2']);
  assert.equal(ves.code, 0, ves.stderr);
  assert.match(ves.stderr, /bird-ves vs bird: 0 items scored differently/);
});

test('--mode and --compare-mode name the BIRD checks in their errors', () => {
  const r = quarryEval(['--mode', 'f1']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--mode must be one of spider, bird, omnisql, spider2, bird-f1, bird-ves/);
  const c = quarryEval(['--compare-mode', 'ves']);
  assert.equal(c.code, 2);
  assert.match(c.stderr, /--compare-mode must be one of .*bird-ves/);
});
