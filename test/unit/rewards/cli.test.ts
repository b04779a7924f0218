// Tests of rewards/cli: reward --json prints exactly {panel, total, terms: [{name, value, weight, contribution,
// explanation}]}; reward without --json prints a readable table with every explanation
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { tempDir } from '../../helpers/fixtures';
import { schoolDb, skyrlEpisode, trajectory } from './fixtures';
import { capture } from '../captureStream';

async function quarry(args: string[], cwd = process.cwd()) {
  const out = capture(),
    err = capture();
  const code = await main(args, { stdout: out.stream, stderr: err.stream, cwd });
  return { code, out: out.text(), err: err.text() };
}

const dir = tempDir('quarry-reward-cli-');
const gold = 'SELECT name FROM student WHERE age > 20';
const file = join(dir, 'run.jsonl');
const records = [
  skyrlEpisode(['SELECT * FROM student'], gold, { id: 'q1-s0', groupId: 'q1', gold, difficulty: 'easy' }),
  skyrlEpisode([], 'SELECT name FROM student', { id: 'q1-s1', groupId: 'q1', gold, difficulty: 'easy' }),
  skyrlEpisode([], gold, { id: 'q2-s0', groupId: 'q2', gold, difficulty: 'easy' }),
  skyrlEpisode([], gold, { id: 'q2-s1', groupId: 'q2', gold, difficulty: 'easy' }),
  trajectory({
    id: 'q3-s0',
    groupId: 'q3',
    gold: "SELECT name FROM student WHERE name = 'Nobody'",
    finalSql: 'SELECT name FROM student WHERE age > 90',
    turns: [
      {
        assistant: '<solution>SELECT name FROM student WHERE age > 90</solution>',
        kind: 'answer',
        sql: 'SELECT name FROM student WHERE age > 90',
      },
    ],
  }),
  trajectory({
    id: 'nogold',
    finalSql: 'SELECT 1',
    turns: [{ assistant: '<think>x</think><solution>SELECT 1</solution>', kind: 'answer', sql: 'SELECT 1' }],
  }),
];
records[1].sample = 1;
records[3].sample = 1;
writeFileSync(file, records.map((r) => JSON.stringify(r) + '\n').join(''));

test(
  'reward --json prints exactly {panel, total, terms: ' + '[{name, value, weight, contribution, explanation}]}',
  async () => {
    const r = await quarry([
      'reward',
      '--panel',
      'sqltrail',
      '--gold-sql',
      'SELECT name FROM student',
      '--pred-sql',
      'SELECT name FROM teacher',
      '--db',
      schoolDb,
      '--difficulty',
      'simple',
      '--json',
    ]);
    assert.equal(r.code, 0, r.err);
    const json = JSON.parse(r.out);
    assert.deepEqual(Object.keys(json), ['panel', 'total', 'terms']);
    assert.equal(json.panel, 'sqltrail');
    assert.deepEqual(
      json.terms.map((t: { name: string }) => t.name),
      ['exec', 'turns', 'schema', 'bigram', 'syntax', 'format'],
    );
    for (const t of json.terms)
      assert.deepEqual(Object.keys(t), ['name', 'value', 'weight', 'contribution', 'explanation']);
    const bigram = json.terms.find((t: { name: string }) => t.name === 'bigram');
    assert.equal(bigram.value, 0.5);
    // The printed numbers are rounded to 12 decimals, so their sum agrees with the total to that precision.
    const sum = json.terms.reduce((a: number, t: { contribution: number }) => a + t.contribution, 0);
    assert.ok(Math.abs(json.total - sum) < 1e-9, `${json.total} vs ${sum}`);
    assert.ok(
      Math.abs(json.terms.find((t: { name: string }) => t.name === 'schema').value - 1 / 3) < 1e-9,
      'eq. 10: name is shared',
    );
  },
);

test('reward without --json prints a readable table with every explanation', async () => {
  const r = await quarry([
    'reward',
    '--panel',
    'mtir',
    '--gold-sql',
    gold,
    '--pred-sql',
    'SELECT nme FROM student',
    '--db',
    schoolDb,
  ]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^panel mtir \(MTIR-SQL §3\.3, eqs\. 5–7\): total 0/);
  assert.match(r.out, /exec\s+-0\.1\s+1\s+-0\.1\s+final SQL does not execute: no such column: nme/);
  assert.match(r.out, /result\s+0\s+1\s+0\s+no reward: gated by 'exec'/);
});

test("reward: without --mode the panel's own comparator (skyrl: bird's sets), and --help says so", async () => {
  const orderedGold = 'SELECT name FROM student ORDER BY age';
  const reversed = 'SELECT name FROM student ORDER BY age DESC';
  const args = ['reward', '--panel', 'skyrl', '--gold-sql', orderedGold, '--pred-sql', reversed, '--db', schoolDb];
  const own = await quarry([...args, '--json']);
  assert.equal(own.code, 0, own.err);
  assert.equal(JSON.parse(own.out).total, 1, 'bird compares sets: the order does not count');
  const spider = await quarry([...args, '--json', '--mode', 'spider']);
  assert.equal(JSON.parse(spider.out).total, 0, 'spider compares in order when the gold has ORDER BY');
  const help = await quarry(['reward', '--help']);
  assert.match(help.out + help.err, /--mode +result comparison of the evaluator; default the panel's own/);
  assert.doesNotMatch(help.out + help.err, /default spider/);
});

test("reward --trajectory --index scores one record; gold and db default to the record's task", async () => {
  const r = await quarry(['reward', '--panel', 'skyrl', '--trajectory', file, '--index', '1', '--json']);
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).total, 0);
  const first = await quarry(['reward', '--panel', 'skyrl', '--trajectory', file, '--json']);
  assert.equal(JSON.parse(first.out).total, 1);
  const empty = await quarry(['reward', '--panel', 'skyrl', '--trajectory', file, '--index', '4']);
  assert.match(empty.err, /warning: the gold result is empty/);
});

test('reward: bad input exits 2 with a message naming the problem', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['reward', '--gold-sql', gold, '--db', schoolDb, '--pred-sql', gold], /--panel P is required/],
    [
      ['reward', '--panel', 'sqltrail', '--gold-sql', gold, '--db', schoolDb],
      /exactly one of --pred-sql SQL and --trajectory/,
    ],
    [
      ['reward', '--panel', 'sqltrail', '--gold-sql', gold, '--db', schoolDb, '--pred-sql', gold, '--trajectory', file],
      /exactly one of/,
    ],
    [['reward', '--panel', 'nope', '--gold-sql', gold, '--db', schoolDb, '--pred-sql', gold], /unknown panel 'nope'/],
    [
      ['reward', '--panel', 'sqltrail', '--gold-sql', gold, '--db', join(dir, 'none.sqlite'), '--pred-sql', gold],
      /no such file/,
    ],
    [
      ['reward', '--panel', 'sqltrail', '--gold-sql', gold, '--db', file, '--pred-sql', gold],
      /not a SQLite database|not a database/i,
    ],
    [
      ['reward', '--panel', 'sqltrail', '--trajectory', file, '--index', '9'],
      /--index 9 is past the end: .* holds 6 record/,
    ],
    [['reward', '--panel', 'sqltrail', '--trajectory', file, '--index=1.5'], /--index must be a whole number/],
    [
      [
        'reward',
        '--panel',
        'sqltrail',
        '--gold-sql',
        gold,
        '--db',
        schoolDb,
        '--pred-sql',
        gold,
        '--difficulty',
        'brutal',
      ],
      /--difficulty must be simple, medium, hard or extra/,
    ],
    [
      ['reward', '--panel', 'sqltrail', '--gold-sql', gold, '--db', schoolDb, '--pred-sql', gold, '--mode', 'x'],
      /--mode must be one of/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await quarry(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.err, message, args.join(' '));
  }
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"schema": "quarry.trajectory/1"}\n');
  const r = await quarry(['reward', '--panel', 'skyrl', '--trajectory', bad]);
  assert.equal(r.code, 2);
  assert.match(r.err, /bad\.jsonl, line 1: field/);
});

test('score: per-term summary, integrity flags naming items, group statistics, --out breakdowns', async () => {
  const out = join(dir, 'scores.jsonl');
  const r = await quarry(['score', '--trajectories', file, '--panel', 'skyrl', '--out', out]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /scored 5 trajectories with panel skyrl/);
  assert.match(r.err, /skipped nogold: no gold SQL/);
  assert.match(r.out, /format\s+1\s+-0\.2\s+-0\.2\s+-1\s+0\s+20\.0%/);
  assert.match(r.out, /format failure missing-think: 1 item\(s\): q3-s0/);
  assert.match(r.out, /zero-variance group q2: all 2 samples scored 1/);
  assert.match(r.out, /groups: 2 questions with 2 samples; zero reward variance in 1 \(q2\)/);
  assert.match(r.out, /hard but solvable \(SQL-Trail S\(q\) ascending\): q1 1\/2/);
  const lines = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => l.id),
    ['q1-s0', 'q1-s1', 'q2-s0', 'q2-s1', 'q3-s0'],
  );
  assert.deepEqual(Object.keys(lines[0]), ['id', 'groupId', 'sample', 'panel', 'total', 'terms', 'exec', 'advantage']);
  assert.ok(lines[0].advantage > 0 && lines[1].advantage < 0);
  assert.equal(lines[4].advantage, null);
  assert.deepEqual(lines[4].exec, { correct: true, reason: 'match' }, 'empty gold, empty prediction: a match');
});

test('score --json: the summary as one object; the empty-gold free win is flagged', async () => {
  const r = await quarry(['score', '--trajectories', file, '--panel', 'sqltrail', '--json']);
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.scored, 5);
  assert.deepEqual(
    j.terms.map((t: { name: string }) => t.name),
    ['exec', 'turns', 'schema', 'bigram', 'syntax', 'format'],
  );
  assert.deepEqual(j.integrity.emptyGoldWins.items, ['q3-s0']);
  assert.ok(j.integrity.flags.some((f: string) => /suspicious|empty-gold/.test(f)));
  assert.equal(j.groups.groups.length, 2);
});

test('score: a panel file, --db-dir, and bad inputs', async () => {
  const panel = join(dir, 'p.json');
  writeFileSync(
    panel,
    JSON.stringify({
      name: 'exec-only',
      extends: 'sqltrail',
      weights: { turns: 0, schema: 0, bigram: 0, syntax: 0, format: 0 },
    }),
  );
  const r = await quarry(['score', '--trajectories', file, '--panel', panel, '--json']);
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).panel, 'exec-only');
  const missing = await quarry(['score', '--trajectories', file, '--panel', 'skyrl', '--db-dir', dir]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /database file\(s\) not found: .*school\/school\.sqlite/);
  const nofile = await quarry(['score', '--trajectories', join(dir, 'nope.jsonl'), '--panel', 'skyrl']);
  assert.equal(nofile.code, 2);
  assert.match(nofile.err, /no such trajectory file: .*nope\.jsonl/);
});
