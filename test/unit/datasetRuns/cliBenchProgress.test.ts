// `quarry bench` reproducing the papers' evaluation: Progress-SQL's protocol (single-turn, App. F's prompt, no ODT
// feedback) and the papers' Vote@K over K sampled candidates apart from the greedy run (with Quarry's older
// greedy + samples pool as an option). Fixture datasets on real SQLite files, a real replay server on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrajectories } from '../../../src/core/trajectories';
import { defaultVotePool, episodesPerQuestion, voterSamples } from '../../../src/core/datasetRuns';
import { PROGRESS_SYSTEM_PROMPT } from '../../../src/core/agent/protocols/progress';
import type { ReplayEntry } from '../../support/openaiReplayServer';
import { replayServers, runQuarry } from '../../support/cli';
import { tempDir } from '../../helpers/fixtures';
import { buildDatasetDbs, datasetFixtures, SPIDER_DEV_MATH_SQL, SPIDER_DEV_QUESTIONS } from '../datasets/dbs';

const dbDir = buildDatasetDbs();
const spiderFile = join(datasetFixtures, 'spider-dev.json');
const birdFile = join(datasetFixtures, 'bird-dev.json');
const golds: string[] = JSON.parse(readFileSync(spiderFile, 'utf8')).map((q: { query: string }) => q.query);

const quarry = (...argv: string[]) => runQuarry(argv);
const server = replayServers();

const Q = SPIDER_DEV_QUESTIONS;
const RIGHT_MATH = SPIDER_DEV_MATH_SQL;
/** App. F's output format. */
const ans = (sql: string) => `<think>Step by step.</think> <sql>${sql}</sql>`;

type Question = {
  greedy: boolean;
  majority: boolean | null;
  passAtK: boolean | null;
  voteWinner: number | null;
  voteGroups: number[][];
};
const report = (out: string) => JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
const base = (s: { spec(): string }, out: string) => [
  'bench',
  '--dataset',
  `spider:${spiderFile}`,
  '--db-dir',
  dbDir,
  '--model',
  s.spec(),
  '--out',
  out,
];

test(
  "quarry bench --protocol progress runs Progress-SQL's evaluation: App. F prompt, one turn, no ODT " +
    'feedback, no gold in any request',
  async () => {
    // Progress-SQL §5: "ODT is used only during training for feedback construction and progressive reward computation;
    // evaluation follows standard single-turn inference without ODT feedback"; App. B: "At evaluation time, ODT-based
    // diagnostic feedback is not used, and all models are evaluated under standard single-turn inference."
    const s = await server([
      { match: Q.owners, response: ans('SELECT count(*) FROM owner') },
      { match: Q.dogs, response: ans('SELECT name FROM pet') },
      { match: Q.math, response: ans('SELECT name FROM student') },
      { match: Q.older, response: 'I am not sure.' },
    ]);
    const out = join(tempDir('quarry-bench-progress-'), 'run');
    const r = await quarry(...base(s, out), '--protocol', 'progress', '--jobs', '2');
    assert.equal(r.code, 0, r.err);

    // One request per question: a wrong answer gets no second turn, so nothing computed from the gold is ever sent.
    const bodies = s.requests.filter((q) => q.body).map((q) => q.body!);
    assert.equal(bodies.length, 4);
    for (const b of bodies) {
      const messages = b.messages as { role: string; content: string }[];
      assert.deepEqual(
        messages.map((m) => m.role),
        ['system', 'user'],
      );
      assert.equal(messages[0].content, PROGRESS_SYSTEM_PROMPT);
      assert.match(messages[1].content, /^Database Schema:\n/);
      const question = Object.values(Q).find((q) => messages[1].content.endsWith(`Question:\n${q}`));
      assert.ok(question, messages[1].content.slice(-80));
      const text = JSON.stringify(messages);
      for (const gold of golds) assert.ok(!text.includes(gold), `the gold ${gold} reached the model`);
      assert.ok(!text.includes('Feedback:'));
      assert.equal(b.temperature, 0);
    }

    const { records } = await readTrajectories(join(out, 'trajectories.jsonl'));
    assert.equal(records.length, 4);
    for (const t of records) {
      assert.equal(t.turns.length, 1);
      assert.deepEqual(t.turns[0].observations, []);
      assert.deepEqual(
        [t.protocol.name, t.protocol.config.feedback, t.protocol.config.maxTurns],
        ['progress', 'none', 1],
      );
    }
    assert.deepEqual(
      records.map((t) => [t.task.question, t.end]).sort(),
      [
        [Q.older, 'invalid'],
        [Q.owners, 'answer'],
        [Q.dogs, 'answer'],
        [Q.math, 'answer'],
      ].sort(),
    );

    const rep = report(out);
    assert.deepEqual(rep.protocol, { name: 'progress', maxTurns: 1, feedback: 'none' });
    assert.deepEqual(
      rep.questions.map((q: Question) => q.greedy),
      [true, false, false, false],
    );
    assert.equal(rep.ex.greedy, 0.25);
    assert.match(r.out, /protocol progress \(single-turn, no ODT feedback: Progress-SQL's evaluation protocol\)/);
    assert.match(r.out, /vote: no vote \(K = 1: the greedy run only\)/);
  },
);

/** Per question: the greedy answer, then samples 1, 2, 3 (jobs 1 hands them out in that order). */
function votingScript(): ReplayEntry[] {
  return [
    // owners: greedy right; samples 1 and 2 agree on a wrong count, sample 3 is right.
    {
      match: Q.owners,
      responses: [
        ans('SELECT count(*) FROM owner'),
        ans('SELECT count(*) FROM pet'),
        ans('SELECT count(*) AS n FROM pet'),
        ans('SELECT count(owner_id) FROM owner'),
      ],
    },
    // dogs: greedy right; three samples, three different results (wrong, right, wrong).
    {
      match: Q.dogs,
      responses: [
        ans("SELECT name FROM pet WHERE kind = 'dog'"),
        ans('SELECT name FROM pet'),
        ans("SELECT name FROM pet WHERE kind = 'dog'"),
        ans("SELECT name FROM pet WHERE kind = 'cat'"),
      ],
    },
    // math: greedy wrong; samples right, right, wrong.
    {
      match: Q.math,
      responses: [ans('SELECT name FROM student'), ans(RIGHT_MATH), ans(RIGHT_MATH), ans('SELECT name FROM student')],
    },
    // older: greedy gives no SQL; sample 1 fails to run; samples 2 and 3 are right.
    {
      match: Q.older,
      responses: [
        'no idea',
        ans('SELECT nme FROM owner'),
        ans('SELECT name FROM owner WHERE age > (SELECT avg(age) FROM owner)'),
        ans('SELECT name FROM owner WHERE age > 37'),
      ],
    },
  ];
}

test(
  "Vote@K is the papers' by default for progress: K sampled candidates vote, apart from the greedy run, and " +
    'the report says so',
  async () => {
    // Progress-SQL §5: "Test results are reported with majority voting over 8 samples (Vote@8)", reported beside
    // greedy decoding (App. E.5: "we include both Greedy Decoding and Majority Voting (Vote@8)"); SQL-Trail §4: "greedy
    // decoding (Pass@1, zero-temperature) and majority voting over 8 sampled candidates using execution-result
    // consensus".
    const s = await server(votingScript());
    const out = join(tempDir('quarry-bench-vote-'), 'run');
    const r = await quarry(
      ...base(s, out),
      '--protocol',
      'progress',
      '--samples',
      '3',
      '--temperature',
      '0.8',
      '--jobs',
      '1',
    );
    assert.equal(r.code, 0, r.err);
    assert.equal(s.requests.filter((q) => q.body).length, 16, '1 greedy + 3 sampled episodes per question');

    const rep = report(out);
    assert.deepEqual(rep.vote, { pool: 'samples', k: 3, voters: [1, 2, 3], episodes: 4, default: true });
    assert.equal(rep.samples, 3);
    const qs: Question[] = rep.questions;
    assert.deepEqual(
      qs.map((q) => q.greedy),
      [true, true, false, false],
      'greedy is sample 0, as its own row',
    );
    assert.deepEqual(
      qs.map((q) => q.voteGroups),
      [[[1, 2], [3]], [[1], [2], [3]], [[1, 2], [3]], [[2, 3]]],
      'sample 0 never votes',
    );
    assert.deepEqual(
      qs.map((q) => q.voteWinner),
      [1, 1, 1, 2],
    );
    assert.deepEqual(
      qs.map((q) => q.majority),
      [false, false, true, true],
    );
    assert.deepEqual(
      qs.map((q) => q.passAtK),
      [true, true, true, true],
    );
    assert.deepEqual(rep.ex, { greedy: 0.5, majority: 0.5, passAtK: 1 });
    assert.deepEqual(rep.sampling, { greedy: { temperature: 0 }, others: { temperature: 0.8 } });

    const { records } = await readTrajectories(join(out, 'trajectories.jsonl'));
    assert.deepEqual(
      records.filter((t) => t.meta.index === 0).map((t) => [t.sample, t.model.sampling.temperature]),
      [
        [0, 0],
        [1, 0.8],
        [2, 0.8],
        [3, 0.8],
      ],
    );
    assert.deepEqual(readFileSync(join(out, 'predictions.sql'), 'utf8').split('\n').slice(0, 2), [
      'SELECT count(*) FROM owner',
      "SELECT name FROM pet WHERE kind = 'dog'",
    ]);
    assert.match(
      r.out,
      new RegExp(
        /vote: Vote@3 over 3 sampled candidates \(samples 1\.\.3\), apart from the greedy run; --vo/.source +
          /te-pool samples \(the default for this protocol\)/.source,
      ),
    );
    assert.match(r.out, /EX majority@3 50\.0%/);
  },
);

test(
  "--vote-pool greedy+samples keeps the older pool; --resume into the papers' pool runs only the missing " + 'sample',
  async () => {
    const s = await server(votingScript());
    const out = join(tempDir('quarry-bench-pool-'), 'run');
    const a = await quarry(
      ...base(s, out),
      '--protocol',
      'progress',
      '--samples',
      '3',
      '--vote-pool',
      'greedy+samples',
      '--jobs',
      '1',
    );
    assert.equal(a.code, 0, a.err);
    assert.equal(s.requests.filter((q) => q.body).length, 12, 'greedy + 2 samples per question');
    const older = report(out);
    assert.deepEqual(older.vote, { pool: 'greedy+samples', k: 3, voters: [0, 1, 2], episodes: 3, default: false });
    // dogs: the greedy answer and sample 2 agree and win; math: samples 1 and 2 outvote the greedy answer.
    assert.deepEqual(
      older.questions.map((q: Question) => q.voteGroups),
      [[[1, 2], [0]], [[0, 2], [1]], [[1, 2], [0]], [[2]]],
    );
    assert.deepEqual(older.ex, { greedy: 0.5, majority: 0.75, passAtK: 1 });
    assert.match(
      a.out,
      /vote: majority over the greedy answer and 2 samples \(samples 0\.\.2\); --vote-pool greedy\+samples\n/,
    );

    // The episodes are the same in both pools: resuming with the default pool adds sample 3 of each question.
    const b = await quarry(...base(s, out), '--protocol', 'progress', '--samples', '3', '--jobs', '1', '--resume');
    assert.equal(b.code, 0, b.err);
    assert.equal(s.requests.filter((q) => q.body).length, 16);
    const papers = report(out);
    assert.equal(papers.resumedEpisodes, 12);
    assert.equal(papers.vote.pool, 'samples');
    assert.deepEqual(papers.ex, { greedy: 0.5, majority: 0.5, passAtK: 1 });
  },
);

test(
  "the default pool follows the protocol: the papers' Vote@K where a paper reports it, greedy + samples " + 'elsewhere',
  () => {
    assert.deepEqual((['skyrl', 'sqltrail', 'mtir', 'mtsqlr1', 'progress'] as const).map(defaultVotePool), [
      'greedy+samples',
      'samples',
      'greedy+samples',
      'greedy+samples',
      'samples',
    ]);
    assert.deepEqual(
      [episodesPerQuestion(8, 'samples'), episodesPerQuestion(8, 'greedy+samples'), episodesPerQuestion(1, 'samples')],
      [9, 8, 1],
    );
    assert.deepEqual(
      [voterSamples(3, 'samples'), voterSamples(3, 'greedy+samples'), voterSamples(1, 'samples')],
      [[1, 2, 3], [0, 1, 2], []],
    );
  },
);

test(
  "progress on BIRD is scored as OmniSQL's scripts score it (BIRD rules, 10 s limit); bad evaluation " +
    'settings exit 2',
  async () => {
    // Progress-SQL App. B: "We follow the evaluation scripts and protocol released by OmniSQL".
    const s = await server([
      { match: 'How many pets are heavy?', response: ans('SELECT COUNT(*) FROM pet WHERE weight > 10') },
    ]);
    const out = join(tempDir('quarry-bench-progress-bird-'), 'run');
    const r = await quarry(
      'bench',
      '--dataset',
      `bird:${birdFile}`,
      '--db-dir',
      dbDir,
      '--model',
      s.spec(),
      '--out',
      out,
      '--protocol',
      'progress',
      '--limit',
      '1',
    );
    assert.equal(r.code, 0, r.err);
    const rep = report(out);
    assert.equal(rep.mode, 'omnisql');
    assert.equal(rep.ex.greedy, 1);
    assert.ok(
      s.requests.some((q) => JSON.stringify(q.body?.messages ?? '').includes('heavy refers to weight > 10')),
      'the evidence is in the question',
    );

    for (const [args, pattern] of [
      [['--protocol', 'progress', '--max-turns', '4'], /--max-turns: .*single-turn .*max turns must be 1, got 4/],
      [
        ['--protocol', 'skyrl', '--vote-pool', 'greedy'],
        /--vote-pool must be one of samples, greedy\+samples, got 'greedy'/,
      ],
    ] as const) {
      const bad = await quarry(...base(s, join(tempDir(), 'x')), ...args);
      assert.equal(bad.code, 2, args.join(' '));
      assert.match(bad.err, pattern);
    }
  },
);
