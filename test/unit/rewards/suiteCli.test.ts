// `quarry reward` and `quarry score` with --test-suite TSDIR, on the transit database and its suite (real SQLite
// files): the near miss scores 0 over the suite with the variant named, score's integrity flags count the rewards of 1
// the suite takes back, and a panel file that requires a suite is refused (exit 2) without one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runQuarry } from '../../support/cli';
import { tempDir } from '../../helpers/fixtures';
import { TRANSIT_GOLD, TRANSIT_NEAR_MISS, TRANSIT_REWRITE, transitSuite } from '../../helpers/transitSuite';
import { skyrlEpisode } from './fixtures';

const t = transitSuite();
const dir = tempDir('quarry-suite-cli-');
const needs = join(dir, 'needs.json');
writeFileSync(needs, JSON.stringify({ name: 'needs', extends: 'skyrl', exec: { testSuite: true } }));
const runFile = join(dir, 'run.jsonl');
const recs = [TRANSIT_NEAR_MISS, TRANSIT_REWRITE, 'SELECT 9', TRANSIT_NEAR_MISS].map((sql, i) => {
  const r = skyrlEpisode([], sql, { id: `t${i}`, gold: TRANSIT_GOLD, dbPath: t.dbPath });
  r.task.db.id = 'transit';
  return r;
});
writeFileSync(runFile, recs.map((r) => JSON.stringify(r) + '\n').join(''));

const reward = (extra: string[]) =>
  runQuarry(['reward', '--panel', 'skyrl', '--gold-sql', TRANSIT_GOLD, '--db', t.dbPath, '--json', ...extra]);

test('quarry reward --test-suite: the near miss scores 0 over the suite, the variant named', async () => {
  const single = await reward(['--pred-sql', TRANSIT_NEAR_MISS]);
  assert.equal(single.code, 0, single.err);
  assert.equal(JSON.parse(single.out).total, 1);
  const over = await reward(['--pred-sql', TRANSIT_NEAR_MISS, '--test-suite', t.tsDir]);
  assert.equal(over.code, 0, over.err);
  const body = JSON.parse(over.out);
  assert.equal(body.total, 0);
  const exec = body.terms.find((x: { name: string }) => x.name === 'exec');
  assert.match(exec.explanation, /transit\/transit_v1\.sqlite.*checked over 2 databases of the test suite/);
  assert.equal(JSON.parse((await reward(['--pred-sql', TRANSIT_REWRITE, '--test-suite', t.tsDir])).out).total, 1);
});

test('quarry reward: a panel file requiring a suite is refused without one; a missing suite folder too', async () => {
  const r = await runQuarry([
    'reward',
    '--panel',
    needs,
    '--gold-sql',
    TRANSIT_GOLD,
    '--db',
    t.dbPath,
    '--pred-sql',
    TRANSIT_GOLD,
  ]);
  assert.equal(r.code, 2);
  assert.match(r.err, /panel 'needs' requires a test suite .* none was given/);
  const lonely = await runQuarry([
    'reward',
    '--panel',
    needs,
    '--gold-sql',
    TRANSIT_GOLD,
    '--db',
    t.lonelyPath,
    '--pred-sql',
    TRANSIT_GOLD,
    '--test-suite',
    t.tsDir,
  ]);
  assert.equal(lonely.code, 2);
  assert.match(lonely.err, /no folder for database 'lonely'/);
  const gone = await reward(['--pred-sql', TRANSIT_GOLD, '--test-suite', join(dir, 'nope')]);
  assert.equal(gone.code, 2);
  assert.match(gone.err, /does not exist/);
});

test('quarry score --test-suite: integrity counts and lists the rewards of 1 the suite takes back', async () => {
  const without = await runQuarry(['score', '--trajectories', runFile, '--panel', 'skyrl', '--json']);
  assert.equal(without.code, 0, without.err);
  assert.equal(JSON.parse(without.out).integrity.testSuite, undefined);
  const text = await runQuarry(['score', '--trajectories', runFile, '--panel', 'skyrl', '--test-suite', t.tsDir]);
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /test suite: 4 answers checked over it; it takes back 2 of 3 rewards of 1/);
  assert.match(
    text.out,
    /test suite takes back 2 of 3 rewards of 1 on the single database .*: t0 \(transit\/transit_v1\.sqlite\), t3/,
  );
  const json = JSON.parse(
    (await runQuarry(['score', '--trajectories', runFile, '--panel', 'skyrl', '--test-suite', t.tsDir, '--json'])).out,
  );
  assert.deepEqual(json.integrity.testSuite.items, ['t0', 't3']);
  assert.equal(json.total.mean, 0.25, 'only the rewrite keeps its reward');
  const outFile = join(dir, 'scores.jsonl');
  await runQuarry(['score', '--trajectories', runFile, '--panel', 'skyrl', '--test-suite', t.tsDir, '--out', outFile]);
  const lines = readFileSync(outFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(lines[0].exec, {
    correct: false,
    reason: 'values',
    testSuite: { databases: 2, singleCorrect: true, disagreed: 'transit/transit_v1.sqlite' },
  });
  const refused = await runQuarry(['score', '--trajectories', runFile, '--panel', needs]);
  assert.equal(refused.code, 2);
  assert.match(refused.err, /requires a test suite/);
});
