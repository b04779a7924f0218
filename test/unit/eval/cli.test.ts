// Tests of eval/cli: quarry eval prints the per-hardness table and writes report.json with one item per gold line;
// bad inputs exit 2 with a clear message and write nothing
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
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

const dir = tempDir('quarry-eval-cli-');
mkdirSync(join(dir, 'db', 'shop'), { recursive: true });
buildDb('eval-shop', { dir: join(dir, 'db', 'shop'), file: 'shop.sqlite' });
writeFileSync(
  join(dir, 'gold.sql'),
  [
    'SELECT name FROM item ORDER BY id\tshop',
    'SELECT count(*) FROM item\tshop',
    'SELECT DISTINCT tag FROM item\tshop',
  ].join('\n') + '\n',
);
writeFileSync(
  join(dir, 'pred.sql'),
  ['SELECT name FROM item ORDER BY id DESC', 'SELECT count(*) FROM item', ''].join('\n') + '\n',
);

test('quarry eval prints the per-hardness table and writes report.json with one item per gold line', async () => {
  const r = await quarry(
    ['eval', '--gold', 'gold.sql', '--pred', 'pred.sql', '--db-dir', 'db', '--jobs', '1', '--out', 'report.json'],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ {21}easy {16} medium/);
  assert.match(r.stdout, /EXECUTION ACCURACY/);
  assert.match(r.stdout, /\nexecution {12}(\S+\s+){4}0\.333/);
  const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
  assert.deepEqual(Object.keys(report).sort(), ['items', 'totals']);
  assert.deepEqual(
    report.items.map((i: { index: number; db_id: string; exec: boolean; reason: string }) => [
      i.index,
      i.db_id,
      i.exec,
      i.reason,
    ]),
    [
      [0, 'shop', false, 'order'],
      [1, 'shop', true, 'match'],
      [2, 'shop', false, 'empty-prediction'],
    ],
  );
  for (const item of report.items) {
    assert.ok('hardness' in item);
    assert.ok(!('match' in item), 'match is reported only when exact match was computed');
  }
  assert.equal(report.totals.count, 3);
  assert.equal(report.totals.mode, 'spider');
});

test('bad inputs exit 2 with a clear message and write nothing', async () => {
  const base = ['eval', '--gold', 'gold.sql', '--pred', 'pred.sql', '--out', 'bad.json'];
  const noDb = await quarry([...base, '--db-dir', 'elsewhere'], dir);
  assert.equal(noDb.code, 2);
  assert.match(noDb.stderr, /not a directory/);
  writeFileSync(join(dir, 'gold2.sql'), 'SELECT 1\tshop\nSELECT 1\tnowhere\n');
  const missing = await quarry(
    ['eval', '--gold', 'gold2.sql', '--pred', 'pred.sql', '--db-dir', 'db', '--out', 'bad.json'],
    dir,
  );
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /no database .* for db_id nowhere/);
  const noFile = await quarry(['eval', '--gold', 'nope.sql', '--pred', 'pred.sql', '--db-dir', 'db'], dir);
  assert.equal(noFile.code, 2);
  assert.match(noFile.stderr, /cannot read gold file .*nope\.sql: no such file/);
  const noTables = await quarry([...base, '--db-dir', 'db', '--etype', 'match'], dir);
  assert.equal(noTables.code, 2);
  assert.match(noTables.stderr, /--etype match needs --tables/);
  const badMode = await quarry([...base, '--db-dir', 'db', '--mode', 'sparc'], dir);
  assert.equal(badMode.code, 2);
  assert.equal(existsSync(join(dir, 'bad.json')), false);
});

test('--timeout-ms stops a runaway prediction, reported as pred-timeout; --mode bird uses set semantics', async () => {
  writeFileSync(join(dir, 'gold3.sql'), 'SELECT count(*) FROM item\tshop\nSELECT name FROM item\tshop\n');
  writeFileSync(
    join(dir, 'pred3.sql'),
    [
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c',
      'SELECT DISTINCT name FROM item',
    ].join('\n') + '\n',
  );
  const spider = await quarry(
    ['eval', '--gold', 'gold3.sql', '--pred', 'pred3.sql', '--db-dir', 'db', '--timeout-ms', '300', '--out', 'r3.json'],
    dir,
  );
  assert.equal(spider.code, 0, spider.stderr);
  const s = JSON.parse(readFileSync(join(dir, 'r3.json'), 'utf8'));
  // DISTINCT is removed in spider mode, so the second item matches there…
  assert.deepEqual(
    s.items.map((i: { reason: string }) => i.reason),
    ['pred-timeout', 'match'],
  );
  const bird = await quarry(
    [
      'eval',
      '--mode',
      'bird',
      '--gold',
      'gold3.sql',
      '--pred',
      'pred3.sql',
      '--db-dir',
      'db',
      '--timeout-ms',
      '300',
      '--out',
      'r4.json',
    ],
    dir,
  );
  assert.equal(bird.code, 0, bird.stderr);
  const b = JSON.parse(readFileSync(join(dir, 'r4.json'), 'utf8'));
  // …and in bird mode too, because sets ignore the duplicate apple.
  assert.deepEqual(
    b.items.map((i: { reason: string }) => i.reason),
    ['pred-timeout', 'match'],
  );
  const kept = await quarry(
    [
      'eval',
      '--keep-distinct',
      '--gold',
      'gold3.sql',
      '--pred',
      'pred3.sql',
      '--db-dir',
      'db',
      '--timeout-ms',
      '300',
      '--out',
      'r5.json',
    ],
    dir,
  );
  assert.equal(kept.code, 0, kept.stderr);
  const k = JSON.parse(readFileSync(join(dir, 'r5.json'), 'utf8'));
  // With DISTINCT kept the multiset comparison sees one apple fewer.
  assert.equal(k.items[1].reason, 'row-count');
});

test('--etype all adds exact-set match and the hardness of each gold query', async () => {
  writeFileSync(
    join(dir, 'tables.json'),
    JSON.stringify([
      {
        db_id: 'shop',
        table_names_original: ['item'],
        foreign_keys: [],
        column_names_original: [
          [-1, '*'],
          [0, 'id'],
          [0, 'name'],
          [0, 'price'],
          [0, 'qty'],
          [0, 'tag'],
        ],
      },
    ]),
  );
  writeFileSync(join(dir, 'gold6.sql'), 'SELECT name FROM item WHERE qty = 3\tshop\nSELECT count(*) FROM item\tshop\n');
  // Values are ignored by exact match (the first is an EM hit but an execution miss); the second runs the same
  // but is written differently (an execution hit, an EM miss).
  writeFileSync(join(dir, 'pred6.sql'), 'SELECT name FROM item WHERE qty = 1\nSELECT count(id) FROM item\n');
  const r = await quarry(
    [
      'eval',
      '--gold',
      'gold6.sql',
      '--pred',
      'pred6.sql',
      '--db-dir',
      'db',
      '--tables',
      'tables.json',
      '--etype',
      'all',
      '--out',
      'r6.json',
    ],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /EXACT MATCHING ACCURACY/);
  const report = JSON.parse(readFileSync(join(dir, 'r6.json'), 'utf8'));
  assert.deepEqual(
    report.items.map((i: { hardness: string; exec: boolean; match: boolean }) => [i.hardness, i.exec, i.match]),
    [
      ['easy', false, true],
      ['easy', true, false],
    ],
  );
  assert.equal(report.totals.byHardness.easy.count, 2);
  assert.equal(report.totals.match, 0.5);
});
