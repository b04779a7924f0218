// `quarry data distill` and `quarry data self-taught` end to end: a real bench run against a replay server over
// fixture Spider databases, then the selection (SQL-Trail App. A.6; MTSQL-R1 §3.2.2 Algorithm 1 S1, S2, S4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runQuarry, replayServers } from '../../support/cli';
import { tempDir } from '../../helpers/fixtures';
import { buildDatasetDbs, datasetFixtures } from '../datasets/dbs';

const dbDir = buildDatasetDbs();
const spiderFile = join(datasetFixtures, 'spider-dev.json');
const golds = JSON.parse(readFileSync(spiderFile, 'utf8')) as { question: string; query: string }[];
const server = replayServers();
const sol = (sql: string) => `<think>Done.</think>\n<solution>${sql}</solution>`;
const jsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

// Owners: the gold string (EX and EM); dogs: right result, another string (EX only); Math: wrong; older: no answer.
const script = () =>
  server([
    { match: golds[0].question, response: sol(golds[0].query) },
    { match: golds[1].question, response: sol("SELECT name FROM pet WHERE kind='dog'") },
    { match: golds[2].question, response: sol('SELECT name FROM student') },
    { match: golds[3].question, response: 'not sure' },
  ]);

test("distill: the teacher's correct trajectories become SFT conversations, hardest first", async () => {
  const s = await script();
  const out = tempDir();
  const r = await runQuarry([
    'data',
    'distill',
    '--dataset',
    `spider:${spiderFile}`,
    '--db-dir',
    dbDir,
    '--model',
    s.spec(),
    '--protocol',
    'skyrl',
    '--max-turns',
    '2',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.err);
  const rows = jsonl(join(out, 'sft.jsonl'));
  assert.deepEqual(
    rows.map((x: { question: string }) => x.question).sort(),
    [golds[0].question, golds[1].question].sort(),
    'only the EX-correct ones',
  );
  assert.ok(
    rows.every((x: { messages: { role: string; loss: boolean }[] }) =>
      x.messages.some((m) => m.role === 'assistant' && m.loss),
    ),
  );
  assert.ok(
    readFileSync(join(out, 'run', 'report.json'), 'utf8').includes('"quarry.bench/1"'),
    'the bench run is kept (resumable)',
  );
});

test(
  'self-taught: EX ∧ EM, at most two short trajectories for an all-correct question, and --exclude drops ' +
    'solved ones',
  async () => {
    const s = await script();
    const out = tempDir();
    const r = await runQuarry([
      'data',
      'self-taught',
      '--dataset',
      `spider:${spiderFile}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--max-turns',
      '2',
      '--samples',
      '3',
      '--out',
      out,
    ]);
    assert.equal(r.code, 0, r.err);
    const round = JSON.parse(readFileSync(join(out, 'self-taught.json'), 'utf8'));
    // Only owners is right by EX and EM; every one of its 3 rollouts is, so S2 keeps up to two short ones.
    assert.equal(round.samples, 3);
    assert.equal(round.temperature, 0.7);
    assert.equal(round.solved.length, 1);
    assert.equal(round.rules['easy-or-all-correct'], 1);
    assert.equal(round.rules.unsolved, 3);
    const rows = jsonl(join(out, 'sft.jsonl'));
    assert.equal(rows.length, 1, 'the two kept rollouts are the same conversation: kept once');
    assert.equal(rows[0].question, golds[0].question);
    // Every rollout but the greedy one is sampled at T = 0.7 (vote pool: the papers' K samples).
    assert.ok(s.requests.filter((q) => q.body && q.body.temperature !== 0).every((q) => q.body!.temperature === 0.7));

    const next = tempDir();
    const again = await runQuarry([
      'data',
      'self-taught',
      '--dataset',
      `spider:${spiderFile}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--max-turns',
      '2',
      '--samples',
      '3',
      '--exclude',
      join(out, 'self-taught.json'),
      '--out',
      next,
    ]);
    assert.equal(again.code, 0, again.err);
    const round2 = JSON.parse(readFileSync(join(next, 'self-taught.json'), 'utf8'));
    assert.equal(round2.excluded, 1, 'S4: the question solved in round 1 is not trained on again');
    assert.deepEqual(round2.solved, round.solved);
  },
);
