// `quarry bench` end to end: fixture datasets on real SQLite files, the agent talking to a real OpenAI-compatible
// replay server on 127.0.0.1, and the written files re-scored by `quarry eval`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { readTrajectories } from '../../../src/core/trajectories';
import type { TrajectoryRecord } from '../../../src/core/trajectories/types';
import { startReplayServer, type ReplayEntry } from '../../support/openaiReplayServer';
import { tempDir } from '../../helpers/fixtures';
import { replayServers } from '../../support/cli';
import { buildDatasetDbs, datasetFixtures, SPIDER_DEV_MATH_SQL, SPIDER_DEV_QUESTIONS } from '../datasets/dbs';
import { capture } from '../captureStream';

const dbDir = buildDatasetDbs();
const spiderFile = join(datasetFixtures, 'spider-dev.json');
const birdFile = join(datasetFixtures, 'bird-dev.json');

async function quarry(...argv: string[]) {
  const out = capture();
  const err = capture();
  const code = await main(argv, { stdout: out.stream, stderr: err.stream, cwd: process.cwd() });
  return { code, out: out.text(), err: err.text() };
}

const server = replayServers();

const Q = SPIDER_DEV_QUESTIONS;
const RIGHT_MATH =
  'SELECT T1.name\nFROM student AS T1 JOIN enrolled AS T2 ON T1.student_id = T2.student_id\n\tJOIN course ' +
  "AS T3 ON T2.course_id = T3.course_id\nWHERE T3.title = 'Math' ORDER BY T1.name";
const RIGHT_MATH_LINE = SPIDER_DEV_MATH_SQL;
const sol = (sql: string) => `<think>Done.</think>\n<solution>${sql}</solution>`;

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').slice(0, -1);
}

/** What `quarry eval` says about the files the bench wrote. */
async function evalOf(out: string, mode: 'spider' | 'bird') {
  const r = await quarry(
    'eval',
    '--gold',
    join(out, 'gold.sql'),
    '--pred',
    join(out, 'predictions.sql'),
    '--db-dir',
    dbDir,
    '--mode',
    mode,
    '--jobs',
    '1',
    '--out',
    join(out, 'eval.json'),
  );
  assert.equal(r.code, 0, r.err);
  return JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as {
    items: { index: number; exec: boolean; reason: string }[];
    totals: { exec: number; byHardness: Record<string, { count: number; exec: number }> };
  };
}

async function trajectories(out: string): Promise<TrajectoryRecord[]> {
  const { records, truncated } = await readTrajectories(join(out, 'trajectories.jsonl'));
  assert.equal(truncated, null);
  return records;
}

function behaviour(records: TrajectoryRecord[]) {
  const turns = records.flatMap((r) => r.turns);
  return {
    avgTurns: turns.length / records.length,
    invalidActionRate: turns.filter((t) => t.action.kind === 'invalid').length / turns.length,
    tokensPerTurn: turns.reduce((n, t) => n + t.usage.completionTokens, 0) / turns.length,
  };
}

test('quarry bench K=1: predictions.sql line by line, report.json, and the same verdicts as quarry eval', async () => {
  const s = await server([
    { match: Q.owners, turn: 0, response: '<think>Count them.</think>\n<sql>SELECT count(*) FROM owner</sql>' },
    { match: Q.owners, turn: 1, response: sol('SELECT count(*) FROM owner') },
    { match: Q.dogs, turn: 0, response: sol('SELECT name FROM pet') },
    { match: Q.math, turn: 0, response: sol(RIGHT_MATH) },
    { match: Q.older, response: 'I am not sure what to do.' },
  ]);
  const out = join(tempDir('quarry-bench-k1-'), 'run');
  const r = await quarry(
    'bench',
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
    '--jobs',
    '3',
    '--out',
    out,
  );
  assert.equal(r.code, 0, r.err);

  // Three episodes at once finish out of order (the first question takes two turns); the files stay in dataset order.
  assert.deepEqual(lines(join(out, 'predictions.sql')), [
    'SELECT count(*) FROM owner',
    'SELECT name FROM pet',
    RIGHT_MATH_LINE,
    'SELECT',
  ]);
  assert.deepEqual(
    lines(join(out, 'gold.sql')).map((l) => l.split('\t')[1]),
    ['pets', 'pets', 'school', 'pets'],
  );

  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.equal(report.items, 4);
  assert.equal(report.complete, true);
  assert.deepEqual(report.ex, { greedy: 0.5, majority: null, passAtK: null });
  assert.deepEqual(
    report.questions.map((q: { greedy: boolean }) => q.greedy),
    [true, false, true, false],
  );
  assert.deepEqual(
    report.questions.map((q: { samples: { reason: string }[] }) => q.samples[0].reason),
    ['match', 'row-count', 'match', 'pred-error'],
  );
  assert.deepEqual(report.byHardness.easy, { count: 2, greedy: 0.5, majority: null, passAtK: null });
  assert.deepEqual(report.byHardness.extra, { count: 1, greedy: 1, majority: null, passAtK: null });
  assert.deepEqual(report.byHardness.hard, { count: 1, greedy: 0, majority: null, passAtK: null });
  assert.deepEqual(report.byHardness.medium, { count: 0, greedy: 0, majority: null, passAtK: null });

  const records = await trajectories(out);
  assert.equal(records.length, 4);
  assert.deepEqual(
    records.map((t) => t.sample),
    [0, 0, 0, 0],
  );
  assert.equal(new Set(records.map((t) => t.groupId)).size, 4);
  const older = records.find((t) => t.task.question === Q.older)!;
  assert.equal(older.finalSql, null);
  assert.ok(older.turns.length >= 2 && older.turns.every((t) => t.action.kind === 'invalid'));
  const b = behaviour(records);
  assert.equal(report.avgTurns, b.avgTurns);
  assert.equal(report.invalidActionRate, b.invalidActionRate);
  assert.equal(report.tokensPerTurn, b.tokensPerTurn);
  assert.ok(report.avgTurns >= 1.5 && report.invalidActionRate > 0 && report.tokensPerTurn > 0);
  // Sample 0 is greedy on the wire.
  assert.ok(s.requests.filter((q) => q.body).every((q) => q.body!.temperature === 0));

  const ev = await evalOf(out, 'spider');
  assert.deepEqual(
    ev.items.map((i) => i.exec),
    report.questions.map((q: { greedy: boolean }) => q.greedy),
  );
  assert.deepEqual(
    ev.items.map((i) => i.reason),
    report.questions.map((q: { samples: { reason: string }[] }) => q.samples[0].reason),
  );
  assert.equal(ev.totals.exec, report.ex.greedy);
  for (const level of ['easy', 'medium', 'hard', 'extra']) {
    assert.deepEqual(
      [ev.totals.byHardness[level].count, ev.totals.byHardness[level].exec],
      [report.byHardness[level].count, report.byHardness[level].greedy],
      level,
    );
  }

  // Exact matches of the greedy predictions (issue 10, item 7): Spider's exact-set match agrees with `quarry eval
  // --etype all` (no tables.json beside the fixture: no foreign keys on either side), and MTSQL-R1's string EM
  // (§4: EM "using the same definitions as in our reward design", R_EM = I(ŷ == y)) is strict string equality (§3.3.2).
  writeFileSync(join(out, 'tables.json'), '[]');
  const em = await quarry(
    'eval',
    '--gold',
    join(out, 'gold.sql'),
    '--pred',
    join(out, 'predictions.sql'),
    '--db-dir',
    dbDir,
    '--tables',
    join(out, 'tables.json'),
    '--etype',
    'all',
    '--jobs',
    '1',
    '--out',
    join(out, 'em.json'),
  );
  assert.equal(em.code, 0, em.err);
  const emItems = (JSON.parse(readFileSync(join(out, 'em.json'), 'utf8')) as { items: { match: boolean }[] }).items;
  const golds = (JSON.parse(readFileSync(spiderFile, 'utf8')) as { query: string }[]).map((q) => q.query);
  const finals = records.sort((a, b) => (a.meta.index as number) - (b.meta.index as number)).map((t) => t.finalSql);
  assert.deepEqual(
    report.questions.map((q: { em: { exactSet: boolean } }) => q.em.exactSet),
    emItems.map((i) => i.match),
  );
  assert.deepEqual(
    report.questions.map((q: { em: { string: boolean } }) => q.em.string),
    finals.map((f, i) => f !== null && f === golds[i]),
  );
  assert.deepEqual(report.em, {
    exactSet: emItems.filter((i) => i.match).length / 4,
    string: report.questions.filter((q: { em: { string: boolean } }) => q.em.string).length / 4,
  });
  assert.match(r.out, /EM greedy {5}exact-set [\d.]+% {3}string [\d.]+% \(MTSQL-R1\)/);

  assert.match(r.out, /EX greedy {5}50\.0%/);
  assert.match(r.out, /EX majority@1 - \(needs --samples > 1\)/);
  assert.match(r.out, /\ngreedy {8} +50\.0 +- +0\.0 +100\.0 +50\.0\n/, r.out);
  assert.match(r.out, /avg turns [\d.]+ {3}invalid actions [\d.]+% {3}tokens\/turn [\d.]+ generated/);
});

test(
  'quarry bench K=3: majority vote by execution consensus ' + 'and pass@3; predictions.sql holds the greedy answers',
  async () => {
    const s = await server([
      // owners: all three samples right, in two turns each.
      { match: Q.owners, turn: 0, response: '<sql>SELECT count(*) FROM owner</sql>' },
      { match: Q.owners, turn: 1, response: sol('SELECT count(*) AS n FROM owner') },
      // dogs: greedy wrong, two sampled answers agree and are right (written differently) -> majority right.
      {
        match: Q.dogs,
        turn: 0,
        responses: [
          sol('SELECT name FROM pet'),
          sol("SELECT name FROM pet WHERE kind = 'dog'"),
          sol("SELECT p.name FROM pet p WHERE p.kind = 'dog' ORDER BY p.pet_id"),
        ],
      },
      // math: greedy right, the two sampled answers agree on a wrong result -> majority wrong, pass@3 right.
      {
        match: Q.math,
        turn: 0,
        responses: [
          sol(RIGHT_MATH),
          sol('SELECT name FROM student'),
          sol('SELECT name FROM student ORDER BY name DESC'),
        ],
      },
      // older: greedy never answers, one sample fails to execute (no vote), one is right -> majority right.
      {
        match: Q.older,
        turn: 0,
        responses: [
          'I am not sure.',
          sol('SELECT nme FROM owner'),
          sol('SELECT name FROM owner WHERE age > (SELECT avg(age) FROM owner)'),
        ],
      },
      { match: Q.older, turn: 1, response: 'Still not sure.' },
    ]);
    const out = join(tempDir('quarry-bench-k3-'), 'run');
    const r = await quarry(
      'bench',
      '--dataset',
      `spider:${spiderFile}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--samples',
      '3',
      '--temperature',
      '0.7',
      '--max-turns',
      '2',
      '--jobs',
      '1',
      '--out',
      out,
    );
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(lines(join(out, 'predictions.sql')), [
      'SELECT count(*) AS n FROM owner',
      'SELECT name FROM pet',
      RIGHT_MATH_LINE,
      'SELECT',
    ]);

    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    assert.equal(report.samples, 3);
    // skyrl's paper reports no vote: the default pool stays greedy + samples.
    assert.deepEqual(report.vote, { pool: 'greedy+samples', k: 3, voters: [0, 1, 2], episodes: 3, default: true });
    assert.deepEqual(report.ex, { greedy: 0.5, majority: 0.75, passAtK: 1 });
    type Qs = {
      greedy: boolean;
      majority: boolean;
      passAtK: boolean;
      voteWinner: number | null;
      voteGroups: number[][];
      samples: { exec: boolean }[];
    };
    const qs: Qs[] = report.questions;
    assert.deepEqual(
      qs.map((q) => [q.greedy, q.majority, q.passAtK]),
      [
        [true, true, true],
        [false, true, true],
        [true, false, true],
        [false, true, true],
      ],
    );
    assert.deepEqual(
      qs.map((q) => q.voteGroups),
      [[[0, 1, 2]], [[1, 2], [0]], [[1, 2], [0]], [[2]]],
    );
    assert.deepEqual(
      qs.map((q) => q.voteWinner),
      [0, 1, 1, 2],
    );
    assert.deepEqual(
      qs.map((q) => q.samples.map((x) => x.exec)),
      [
        [true, true, true],
        [false, true, true],
        [true, false, false],
        [false, false, true],
      ],
    );
    assert.deepEqual(report.byHardness.easy, { count: 2, greedy: 0.5, majority: 1, passAtK: 1 });
    assert.deepEqual(report.byHardness.extra, { count: 1, greedy: 1, majority: 0, passAtK: 1 });
    assert.deepEqual(report.byHardness.hard, { count: 1, greedy: 0, majority: 1, passAtK: 1 });
    assert.deepEqual(report.sampling, { greedy: { temperature: 0 }, others: { temperature: 0.7 } });

    const records = await trajectories(out);
    assert.equal(records.length, 12);
    for (let i = 0; i < 4; i++) {
      const group = records.filter((t) => t.meta.index === i);
      assert.deepEqual(group.map((t) => t.sample).sort(), [0, 1, 2]);
      assert.equal(new Set(group.map((t) => t.groupId)).size, 1, 'the samples of a question share groupId');
      assert.deepEqual(group.map((t) => t.model.sampling.temperature).sort(), [0, 0.7, 0.7]);
    }
    const b = behaviour(records);
    assert.equal(report.avgTurns, b.avgTurns);
    assert.equal(report.invalidActionRate, b.invalidActionRate);

    const ev = await evalOf(out, 'spider');
    assert.deepEqual(
      ev.items.map((i) => i.exec),
      qs.map((q) => q.greedy),
    );
    assert.equal(ev.totals.exec, report.ex.greedy);
    assert.match(r.out, /EX majority@3 75\.0%/);
    assert.match(r.out, /EX pass@3 {5}100\.0%/);
    assert.match(r.out, /\nmajority@3 +100\.0 +- +100\.0 +0\.0 +75\.0/);
  },
);

test(
  'quarry bench on BIRD: evidence reaches the prompt, bird set semantics, levels by BIRD difficulty, agrees ' +
    'with quarry eval --mode bird',
  async () => {
    const s = await server([
      { match: 'How many pets are heavy?', response: sol('SELECT COUNT(*) FROM pet WHERE weight > 10') },
      { match: 'course with the most students', response: sol("SELECT 'Math'") },
      // Duplicated rows: right under BIRD's set comparison (wrong under Spider's multiset one).
      {
        match: 'weigh the most in total',
        response: sol("SELECT city FROM owner WHERE name = 'Bo' UNION ALL SELECT city FROM owner WHERE name = 'Bo'"),
      },
    ]);
    const out = join(tempDir('quarry-bench-bird-'), 'run');
    const r = await quarry(
      'bench',
      '--dataset',
      `bird:${birdFile}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--out',
      out,
    );
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    assert.equal(report.mode, 'bird');
    assert.deepEqual(
      report.questions.map((q: { greedy: boolean }) => q.greedy),
      [true, false, true],
    );
    assert.deepEqual(Object.keys(report.byHardness), ['simple', 'moderate', 'challenging', 'all']);
    assert.deepEqual(report.byHardness.challenging, { count: 1, greedy: 1, majority: null, passAtK: null });
    const first = s.requests.find(
      (q) => q.body && JSON.stringify(q.body.messages).includes('How many pets are heavy?'),
    );
    assert.ok(
      first && JSON.stringify(first.body!.messages).includes('heavy refers to weight > 10'),
      'the evidence is in the prompt',
    );
    const ev = await evalOf(out, 'bird');
    assert.deepEqual(
      ev.items.map((i) => i.exec),
      [true, false, true],
    );
    assert.equal(ev.totals.exec, report.ex.greedy);
    assert.match(r.out, /simple +moderate +challenging +all/);
  },
);

test(
  'quarry bench on SParC: each turn carries the earlier ' + 'turns with their gold SQL; --limit counts turns',
  async () => {
    const s = await server([{ response: sol("SELECT name FROM owner WHERE city = 'Oslo'") }]);
    const out = join(tempDir('quarry-bench-sparc-'), 'run');
    const r = await quarry(
      'bench',
      '--dataset',
      `sparc:${join(datasetFixtures, 'sparc-dev.json')}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--limit',
      '3',
      '--out',
      out,
    );
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    assert.equal(report.items, 3);
    assert.deepEqual(
      report.questions.map((q: { greedy: boolean }) => q.greedy),
      [false, true, false],
    );
    // Interaction 0 (three turns) is whole and not all right; interaction 1 was cut by --limit and is left out.
    assert.deepEqual(report.interactions, { count: 1, greedy: 0, majority: null, passAtK: null });
    assert.match(r.out, /interactions \(all turns right\): 1 {3}greedy 0\.0%/);
    const records = await trajectories(out);
    const third = records.find((t) => t.meta.index === 2)!;
    assert.deepEqual(
      third.task.history.map((h) => h.sql),
      ['SELECT name FROM owner', "SELECT name FROM owner WHERE city = 'Oslo'"],
    );
    assert.equal(lines(join(out, 'predictions.sql')).length, 3);
  },
);

test(
  '--resume runs only the missing episodes, keeps ' + 'groupIds, and ends with the same files as one whole run',
  async () => {
    const script: ReplayEntry[] = [
      { match: Q.owners, response: sol('SELECT count(*) FROM owner') },
      { match: Q.dogs, response: sol('SELECT name FROM pet') },
      { match: Q.math, response: sol(RIGHT_MATH) },
      { match: Q.older, response: sol('SELECT name FROM owner WHERE age > 30') },
    ];
    const s = await server(script);
    const out = join(tempDir('quarry-bench-resume-'), 'run');
    const args = [
      'bench',
      '--dataset',
      `spider:${spiderFile}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--samples',
      '2',
      '--out',
      out,
    ];
    const first = await quarry(...args, '--limit', '2');
    assert.equal(first.code, 0, first.err);
    const chats = () => s.requests.filter((q) => q.body).length;
    assert.equal(chats(), 4);
    const second = await quarry(...args, '--resume');
    assert.equal(second.code, 0, second.err);
    assert.equal(chats(), 8, 'only the two new questions x 2 samples were asked');
    assert.match(second.err, /resumed: 4 episodes reused/);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    assert.deepEqual([report.items, report.complete, report.resumedEpisodes], [4, true, 4]);
    assert.deepEqual(
      report.questions.map((q: { greedy: boolean }) => q.greedy),
      [true, false, true, false],
    );
    assert.deepEqual(lines(join(out, 'predictions.sql')), [
      'SELECT count(*) FROM owner',
      'SELECT name FROM pet',
      RIGHT_MATH_LINE,
      'SELECT name FROM owner WHERE age > 30',
    ]);
    const records = await trajectories(out);
    assert.equal(records.length, 8);
    for (let i = 0; i < 4; i++)
      assert.equal(new Set(records.filter((t) => t.meta.index === i).map((t) => t.groupId)).size, 1);
    assert.equal(new Set(records.map((t) => t.meta.bench)).size, 1, 'one run id across the resumption');

    // Nothing left to do: no model call, same report.
    const third = await quarry(...args, '--resume');
    assert.equal(third.code, 0, third.err);
    assert.equal(chats(), 8);
    // Other settings are refused rather than mixed in.
    const other = await quarry(...args.map((a) => (a === '2' ? '3' : a)), '--temperature', '0.5', '--resume');
    assert.equal(other.code, 2);
    assert.match(other.err, /holds episodes of another run \(sample 1 at temperature 1, not 0\.5\)/);
    assert.equal((await trajectories(out)).length, 8, 'the file is left as it was');
  },
);

test('--resume runs failed episodes again', async () => {
  const s = await server([{ response: sol('SELECT count(*) FROM owner') }]);
  s.failNext(2, 400, { message: 'scripted failure' });
  const out = join(tempDir('quarry-bench-retry-'), 'run');
  const args = [
    'bench',
    '--dataset',
    `spider:${spiderFile}`,
    '--db-dir',
    dbDir,
    '--model',
    s.spec(),
    '--protocol',
    'skyrl',
    '--out',
    out,
  ];
  const first = await quarry(...args);
  assert.equal(first.code, 0, first.err);
  assert.match(first.err, /WARNING: spider:spider-dev:0 sample 0: model error \(server\).*scripted failure/);
  let report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.deepEqual(report.ends, { error: 2, answer: 2 });
  assert.deepEqual(
    report.questions.map((q: { greedy: boolean }) => q.greedy),
    [false, false, false, false],
  );
  const second = await quarry(...args, '--resume');
  assert.equal(second.code, 0, second.err);
  report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.deepEqual([report.ends, report.resumedEpisodes], [{ answer: 4 }, 2]);
  assert.deepEqual(
    report.questions.map((q: { greedy: boolean }) => q.greedy),
    [true, false, false, false],
  );
  const records = await trajectories(out);
  assert.deepEqual(
    records.map((t) => t.end),
    ['answer', 'answer', 'answer', 'answer'],
    'the failed episodes were replaced',
  );
});

test('CoSQL with K=2: interaction-level EX needs every turn right under each scoring', async () => {
  const s = await server([
    {
      match: 'Who are the students in grade 10?',
      turn: 0,
      responses: [sol('SELECT name FROM student WHERE grade = 10'), sol('SELECT name FROM student')],
    },
    {
      match: 'And how many are they?',
      turn: 0,
      responses: [sol('SELECT count(*) FROM student'), sol('SELECT count(*) FROM student WHERE grade = 10')],
    },
  ]);
  const out = join(tempDir('quarry-bench-cosql-'), 'run');
  const r = await quarry(
    'bench',
    '--dataset',
    `cosql:${join(datasetFixtures, 'cosql-dev.json')}`,
    '--db-dir',
    dbDir,
    '--model',
    s.spec(),
    '--protocol',
    'skyrl',
    '--samples',
    '2',
    '--out',
    out,
  );
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.deepEqual(
    report.questions.map((q: { samples: { exec: boolean }[] }) => q.samples.map((x) => x.exec)),
    [
      [true, false],
      [false, true],
    ],
  );
  // Turn-level pass@2 is 100%, but no single scoring gets both turns of the interaction right except pass@2.
  assert.deepEqual(report.ex, { greedy: 0.5, majority: 0.5, passAtK: 1 });
  assert.deepEqual(report.interactions, { count: 1, greedy: 0, majority: 0, passAtK: 1 });
});

test('gold problems are warned about as quarry eval does: empty gold result, failing gold, no hardness', async () => {
  const s = await server([{ response: sol("SELECT name FROM owner WHERE city = 'Nowhere'") }]);
  const work = tempDir('quarry-bench-goldwarn-');
  writeFileSync(
    join(work, 'odd.json'),
    JSON.stringify([
      { db_id: 'pets', question: 'Owners older than 100?', query: 'SELECT name FROM owner WHERE age > 100' },
      { db_id: 'pets', question: 'A broken gold?', query: 'SELECT nosuch FROM owner' },
      { db_id: 'pets', question: 'A CTE gold?', query: 'WITH o AS (SELECT name FROM owner) SELECT name FROM o' },
    ]),
  );
  const out = join(work, 'run');
  const r = await quarry(
    'bench',
    '--dataset',
    `spider:${join(work, 'odd.json')}`,
    '--db-dir',
    dbDir,
    '--model',
    s.spec(),
    '--protocol',
    'skyrl',
    '--out',
    out,
  );
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.deepEqual(
    report.questions.map((q: { greedy: boolean; samples: { reason: string }[] }) => [q.greedy, q.samples[0].reason]),
    [
      [true, 'match'],
      [false, 'gold-error'],
      [false, 'row-count'],
    ],
  );
  assert.deepEqual(report.warnings, [
    '1 questions have an EMPTY gold result ([] == [] rewards any prediction that returns no rows): spider:odd:0',
    '1 gold queries FAILED (scored wrong): spider:odd:1',
    '2 questions have no level (gold not parsed by the Spider parser, or no BIRD difficulty); they count ' +
      'only under "all": spider:odd:1, spider:odd:2',
  ]);
  assert.match(r.err, /WARNING: 1 gold queries FAILED \(scored wrong\): spider:odd:1/);
  const ev = await evalOf(out, 'spider');
  assert.deepEqual(
    ev.items.map((i) => i.reason),
    ['match', 'gold-error', 'row-count'],
  );
});

test('bad input exits 2 with a clear message', async () => {
  const s = await server([{ response: sol('SELECT 1') }]);
  const base = ['--db-dir', dbDir, '--model', s.spec(), '--out', join(tempDir(), 'x')];
  const cases: [string[], RegExp][] = [
    [['--dataset', 'spider', '--protocol', 'skyrl'], /expected NAME:FILE\.json/],
    [['--dataset', 'spider:nope.json', '--protocol', 'skyrl'], /cannot read Spider file .*nope\.json: no such file/],
    [['--dataset', `bird:${spiderFile}`, '--protocol', 'skyrl'], /item 0 has no "SQL" field/],
    [
      ['--dataset', `spider:${spiderFile}`, '--protocol', 'nope'],
      /--protocol must be one of skyrl, sqltrail, mtir, mtsqlr1, progress/,
    ],
    [
      ['--dataset', `spider:${spiderFile}`, '--protocol', 'progress', '--max-turns', '2'],
      /single-turn .*max turns must be 1, got 2/,
    ],
    [
      ['--dataset', `spider:${spiderFile}`, '--protocol', 'skyrl', '--samples', '0'],
      /--samples must be a positive integer/,
    ],
    [
      ['--dataset', `spider:${spiderFile}`, '--protocol', 'skyrl', '--temperature=-1'],
      /--temperature must be a number >= 0/,
    ],
  ];
  for (const [args, pattern] of cases) {
    const r = await quarry('bench', ...base, ...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.err, pattern);
  }
  const noDb = await quarry(
    'bench',
    '--dataset',
    `spider:${spiderFile}`,
    '--db-dir',
    tempDir(),
    '--model',
    s.spec(),
    '--protocol',
    'skyrl',
    '--out',
    join(tempDir(), 'y'),
  );
  assert.equal(noDb.code, 2);
  assert.match(noDb.err, /no database for db_id pets, school/);
  const fileDir = tempDir();
  writeFileSync(join(fileDir, 'afile'), '');
  const outIsFile = await quarry(
    'bench',
    '--dataset',
    `spider:${spiderFile}`,
    '--db-dir',
    dbDir,
    '--model',
    s.spec(),
    '--protocol',
    'skyrl',
    '--out',
    join(fileDir, 'afile', 'run'),
  );
  assert.equal(outIsFile.code, 2);
  assert.match(outIsFile.err, /--out: .*afile exists and is not a directory/);
  if (process.platform === 'linux') {
    // mkdir answers ENOENT under /proc even for the existing parent: a recursive mkdir would spin here forever.
    const proc = await quarry(
      'bench',
      '--dataset',
      `spider:${spiderFile}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--out',
      '/proc/quarry-nope/run',
    );
    assert.equal(proc.code, 2);
    assert.match(proc.err, /--out: cannot create \/proc\/quarry-nope/);
  }
  const missing = await quarry(
    'bench',
    '--dataset',
    `spider:${spiderFile}`,
    '--db-dir',
    dbDir,
    '--protocol',
    'skyrl',
    '--out',
    'z',
  );
  assert.equal(missing.code, 2);
  assert.match(missing.err, /--model is required/);
  const badModel = await quarry(
    'bench',
    '--dataset',
    `spider:${spiderFile}`,
    '--db-dir',
    dbDir,
    '--model',
    'gpt4',
    '--protocol',
    'skyrl',
    '--out',
    join(tempDir(), 'w'),
  );
  assert.equal(badModel.code, 2);
  assert.match(badModel.err, /bad model spec/);
});

test(
  'a model that cannot be reached: the run stops after ' + '10 failed episodes in a row, exit 1, finished work kept',
  async () => {
    const gone = await startReplayServer({ script: [] });
    const spec = gone.spec();
    await gone.close(); // the port is closed now: every call is refused
    const work = tempDir('quarry-bench-down-');
    writeFileSync(
      join(work, 'many.json'),
      JSON.stringify(Array.from({ length: 30 }, (_, i) => ({ db_id: 'pets', question: `Q${i}?`, query: 'SELECT 1' }))),
    );
    const out = join(work, 'run');
    const r = await quarry(
      'bench',
      '--dataset',
      `spider:${join(work, 'many.json')}`,
      '--db-dir',
      dbDir,
      '--model',
      spec,
      '--protocol',
      'skyrl',
      '--out',
      out,
    );
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /WARNING: stopped after 10 episodes in a row failed; the last: model error \(unreachable\)/);
    assert.match(r.err, /quarry bench: stopped: too many episodes failed in a row/);
    assert.match(r.out, /STOPPED after repeated failures/);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    assert.deepEqual(
      [report.stopped, report.complete, report.items, report.ex.greedy, report.ends],
      ['errors', false, 10, 0, { error: 10 }],
    );
    assert.deepEqual(lines(join(out, 'predictions.sql')), new Array(10).fill('SELECT'));
    const few = await quarry(
      'bench',
      '--dataset',
      `spider:${spiderFile}`,
      '--db-dir',
      dbDir,
      '--model',
      spec,
      '--protocol',
      'skyrl',
      '--out',
      join(work, 'few'),
    );
    assert.equal(few.code, 1);
    assert.match(few.err, /every episode failed/);
  },
);

test('Ctrl-C stops cleanly: finished questions are kept and scored, exit 1', async () => {
  const s = await server([{ response: sol('SELECT count(*) FROM owner') }], { delayMs: 150 });
  const work = tempDir('quarry-bench-int-');
  // Many questions, so the run is still going when it is interrupted.
  const items = Array.from({ length: 40 }, (_, i) => ({
    db_id: 'pets',
    question: `Question ${i}: how many owners?`,
    query: 'SELECT count(*) FROM owner',
  }));
  writeFileSync(join(work, 'many.json'), JSON.stringify(items));
  const out = join(work, 'run');
  const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'run.js');
  const child = spawn(
    process.execPath,
    [
      cli,
      'bench',
      '--dataset',
      `spider:${join(work, 'many.json')}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--jobs',
      '2',
      '--out',
      out,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += String(c);
  });
  child.stderr.on('data', (c: Buffer) => {
    err += String(c);
  });
  const trajFile = join(out, 'trajectories.jsonl');
  const poll = setInterval(() => {
    if (existsSync(trajFile) && readFileSync(trajFile, 'utf8').split('\n').length > 3 && !child.killed)
      child.kill('SIGINT');
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearInterval(poll);
  assert.equal(code, 1, err);
  assert.match(err, /stopping — running episodes are cancelled/);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.equal(report.complete, false);
  assert.ok(report.items >= 3 && report.items < 40, `items ${report.items}`);
  assert.equal(report.ex.greedy, 1);
  const records = await trajectories(out);
  assert.equal(records.length, report.items, 'cancelled episodes are not written');
  assert.ok(records.every((t) => t.end === 'answer'));
  assert.equal(lines(join(out, 'predictions.sql')).length, report.items);
  assert.equal(lines(join(out, 'gold.sql')).length, report.items);
  assert.match(stdout, /INTERRUPTED: partial results/);
});

test(
  'missing databases: the rest runs, ' + 'each missing one is named with its skipped questions; --strict refuses',
  async () => {
    const s = await server([], { defaultResponse: sol('SELECT count(*) FROM owner') });
    const file = join(tempDir(), 'mixed.json');
    writeFileSync(
      file,
      JSON.stringify([
        { db_id: 'pets', question: 'How many owners are there?', query: 'SELECT count(*) FROM owner' },
        { db_id: 'zoo', question: 'How many keepers?', query: 'SELECT count(*) FROM keeper' },
        { db_id: 'zoo', question: 'How many animals?', query: 'SELECT count(*) FROM animal' },
        { db_id: 'aquarium', question: 'How many tanks?', query: 'SELECT count(*) FROM tank' },
      ]),
    );
    const args = (out: string) => [
      'bench',
      '--dataset',
      `spider:${file}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--protocol',
      'skyrl',
      '--out',
      out,
    ];
    const out = join(tempDir(), 'mixed');
    const r = await quarry(...args(out));
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /no database for db_id zoo in .*: skipped its 2 questions/);
    assert.match(r.err, /no database for db_id aquarium in .*: skipped its 1 question /);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as {
      items: number;
      skipped: { dbId: string; questions: number }[];
    };
    assert.equal(report.items, 1);
    assert.deepEqual(report.skipped, [
      { dbId: 'zoo', questions: 2 },
      { dbId: 'aquarium', questions: 1 },
    ]);
    const strict = await quarry(...args(join(tempDir(), 'strict')), '--strict');
    assert.equal(strict.code, 2);
    assert.match(strict.err, /no database for db_id zoo, aquarium/);
  },
);
