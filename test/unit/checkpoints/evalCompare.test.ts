// `quarry checkpoints eval` and `compare` end to end: two registered models served by real OpenAI-compatible replay
// servers on 127.0.0.1 answer the fixture Spider questions differently; each is benchmarked on real SQLite files, the
// report is stored with its registry entry, and the comparison puts EX by hardness side by side and lists exactly the
// questions one gets right and the other wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry } from '../../../src/core/training/modelRegistry';
import { compareCheckpoints, formatComparison } from '../../../src/core/training/checkpointCompare';
import { exTableRows } from '../../../webview/compare/table';
import { runQuarry, replayServers } from '../../support/cli';
import { servedOnlyModel } from '../../support/checkpointFixtures';
import { tempDir } from '../../helpers/fixtures';
import { buildDatasetDbs, datasetFixtures, SPIDER_DEV_QUESTIONS as Q, SPIDER_DEV_MATH_SQL } from '../datasets/dbs';

const server = replayServers();
const dbDir = buildDatasetDbs();
const spider = `spider:${join(datasetFixtures, 'spider-dev.json')}`;
const sol = (sql: string) => `<think>Done.</think>\n<solution>${sql}</solution>`;

test('eval stores each report with its model; compare lists the questions the greedy answers disagree on', async () => {
  const ws = tempDir('quarry-ckcompare-');
  const before = await server([
    { match: Q.owners, response: sol('SELECT count(*) FROM owner') },
    { match: Q.dogs, response: sol("SELECT name FROM pet WHERE kind = 'dog'") },
    { match: Q.math, response: sol('SELECT name FROM student') },
    { match: Q.older, response: sol('SELECT 1') },
  ]);
  const after = await server([
    { match: Q.owners, response: sol('SELECT count(*) FROM owner') },
    { match: Q.dogs, response: sol('SELECT name FROM pet') },
    { match: Q.math, response: sol(SPIDER_DEV_MATH_SQL) },
    { match: Q.older, response: sol('SELECT 1') },
  ]);
  const reg = new ModelRegistry(ws);
  reg.put(servedOnlyModel('before', before.spec()));
  reg.put(servedOnlyModel('after', after.spec()));
  for (const name of ['before', 'after']) {
    const r = await runQuarry(
      ['checkpoints', 'eval', name, '--dataset', spider, '--db-dir', dbDir, '--protocol', 'skyrl'],
      ws,
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`${name}: greedy EX 50\\.0% of 4`));
  }
  const evals = reg.require('after').evaluations;
  assert.equal(evals.length, 1);
  assert.equal(evals[0].ex.greedy, 0.5);
  assert.ok(existsSync(evals[0].report), 'the bench report is on disk where the registry says');
  assert.ok(existsSync(join(evals[0].report, '..', 'trajectories.jsonl')));

  const json = await runQuarry(['checkpoints', 'compare', 'before', 'after', '--dataset', spider, '--json'], ws);
  assert.equal(json.code, 0, json.err);
  const c = JSON.parse(json.out) as ReturnType<typeof compareCheckpoints>;
  assert.equal(c.common, 4);
  assert.deepEqual(
    c.disagreements.map((d) => [d.index, d.right, d.wrong]),
    [
      [1, ['before'], ['after']],
      [2, ['after'], ['before']],
    ],
  );
  assert.equal(c.byLevel.all.before!.greedy, 0.5);
  assert.equal(c.byLevel.all.after!.count, 4);
  const text = await runQuarry(['checkpoints', 'compare', 'before', 'after', '--dataset', spider], ws);
  assert.match(text.out, /^all +4 +50\.0 \/ - \/ - +50\.0 \/ - \/ -$/m);
  assert.match(text.out, /2 of 4 common questions where the greedy answers disagree/);

  const missing = await runQuarry(['checkpoints', 'compare', 'before', 'nobody', '--dataset', spider], ws);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /no model "nobody"/);
});

test('compareCheckpoints keeps only questions in every report and needs two distinct models', () => {
  const q = (index: number, greedy: boolean, level = 'easy') => ({
    index,
    id: `q${index}`,
    dbId: 'db',
    level,
    samples: [],
    greedy,
    majority: null,
    passAtK: null,
    voteWinner: null,
    voteGroups: [],
    goldEmpty: false,
  });
  const level = { count: 1, greedy: 1, majority: null, passAtK: null };
  const report = (questions: ReturnType<typeof q>[]) => ({
    byHardness: { easy: level, hard: level, all: level },
    questions,
    dataset: { name: 'spider', file: 'f', dbDir: 'd' },
    protocol: { name: 'skyrl', maxTurns: 5 },
    samples: 1,
  });
  const c = compareCheckpoints([
    { name: 'a', report: report([q(0, true), q(1, false), q(2, true, 'hard')]), trajectories: 'a.jsonl' },
    { name: 'b', report: report([q(0, false), q(2, true, 'hard')]), trajectories: 'b.jsonl' },
  ]);
  assert.equal(c.common, 2);
  assert.deepEqual(c.levels, ['easy', 'hard', 'all']);
  assert.deepEqual(
    c.disagreements.map((d) => d.id),
    ['q0'],
  );
  assert.match(formatComparison(c), /q0 \[easy\] db: right a; wrong b/);
  assert.throws(() => compareCheckpoints([c as never]), /at least two/);
  assert.throws(
    () =>
      compareCheckpoints([
        { name: 'a', report: report([]), trajectories: '' },
        { name: 'a', report: report([]), trajectories: '' },
      ]),
    /named twice/,
  );
});

test('a hardness level with no questions shows – in the panel and - in the CLI, never greedy 0.0', () => {
  const none = { count: 0, greedy: 0, majority: 0, passAtK: 0 };
  const some = { count: 2, greedy: 0.5, majority: 0.5, passAtK: 1 };
  const report = {
    byHardness: { easy: some, extra: none, all: some },
    questions: [],
    dataset: { name: 'spider', file: 'f', dbDir: 'd' },
    protocol: { name: 'skyrl', maxTurns: 5 },
    samples: 4,
  };
  const c = compareCheckpoints([
    { name: 'a', report, trajectories: 'a.jsonl' },
    { name: 'b', report: { ...report, byHardness: { easy: some, all: some } }, trajectories: 'b.jsonl' },
  ]);
  const rows = exTableRows(c);
  assert.deepEqual(
    rows.map((r) => [r.level, r.n, ...r.cells.flatMap((x) => [x.greedy, x.majority, x.passAtK])]),
    [
      ['easy', '2', '50.0', '50.0', '100.0', '50.0', '50.0', '100.0'],
      ['extra', '0', '–', '–', '–', '–', '–', '–'],
      ['all', '2', '50.0', '50.0', '100.0', '50.0', '50.0', '100.0'],
    ],
  );
  assert.match(formatComparison(c), /^extra +0 +- +-$/m);
  assert.doesNotMatch(formatComparison(c), /0\.0 \/ 0\.0/);
});
