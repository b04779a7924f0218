// `quarry data rl|sft` end to end on real parts: a Spider-format dataset written here over real SQLite files, a real
// `quarry bench --samples 3` run against the OpenAI-compatible replay server on 127.0.0.1 for the difficulty
// estimates and the trajectories, a real label store; then the command's validation, its files and data.json.
// (The Parquet files are read back by pyarrow and verl in trainer/tests/test_data.py.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { loadDataset } from '../../../src/core/datasets';
import { createSqlPool } from '../../../src/core/db';
import { startEnv } from '../../../src/core/agent/loop';
import { getProtocol } from '../../../src/core/agent/protocols';
import { LabelStore } from '../../../src/core/labels/store';
import { recordSha } from '../../../src/core/labels/recordSha';
import type { SftExample } from '../../../src/core/labels/sft';
import type { RlRecord } from '../../../src/core/training/rlRecord';
import { readTrajectories } from '../../../src/core/trajectories';
import type { TrajectoryRecord } from '../../../src/core/trajectories/types';
import { startReplayServer } from '../../support/openaiReplayServer';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { buildDatasetDbs, datasetFixtures } from '../datasets/dbs';
import { capture } from '../captureStream';

const dbDir = buildDatasetDbs();
const work = tempDir('quarry-data-');

const MATH =
  'SELECT T1.name FROM student AS T1 JOIN enrolled AS T2 ON T1.student_id = T2.student_id ' +
  "JOIN course AS T3 ON T2.course_id = T3.course_id WHERE T3.title = 'Math' ORDER BY T1.name";
/** question, db, gold, and the three samples' answers (sample 0 is greedy). */
const ITEMS = [
  {
    q: 'How many owners are there?',
    db: 'pets',
    gold: 'SELECT count(*) FROM owner',
    answers: ['SELECT count(*) FROM owner', 'SELECT count(*) FROM owner', 'SELECT count(*) FROM owner'],
  },
  {
    q: 'List the names of dogs.',
    db: 'pets',
    gold: "SELECT name FROM pet WHERE kind = 'dog'",
    answers: [
      "SELECT name FROM pet WHERE kind = 'dog'",
      'SELECT name FROM pet',
      "SELECT name FROM pet WHERE kind = 'dog'",
    ],
  },
  {
    q: 'Names of owners older than the average age.',
    db: 'pets',
    gold: 'SELECT name FROM owner WHERE age > (SELECT avg(age) FROM owner)',
    answers: ['SELECT name FROM owner', 'SELECT name FROM owner', 'SELECT name FROM owner'],
  },
  {
    q: 'Which students take Math, ordered by name?',
    db: 'school',
    gold: MATH,
    answers: [MATH, 'SELECT name FROM student', 'SELECT name FROM student'],
  },
  {
    q: 'How many vets are there?',
    db: 'pets',
    gold: 'SELECT count(*) FROM vet',
    answers: ['SELECT 1', 'SELECT 1', 'SELECT 1'],
  },
  {
    q: 'Which pets are called Zed?',
    db: 'pets',
    gold: "SELECT name FROM pet WHERE name = 'Zed'",
    answers: [
      "SELECT name FROM pet WHERE name = 'Zed'",
      "SELECT name FROM pet WHERE name = 'Zed'",
      "SELECT name FROM pet WHERE name = 'Zed'",
    ],
  },
];
const datasetFile = join(work, 'train_fixture.json');
writeFileSync(
  datasetFile,
  JSON.stringify(
    ITEMS.map((it) => ({ db_id: it.db, question: it.q, query: it.gold })),
    null,
    1,
  ),
);

async function quarry(...argv: string[]) {
  const out = capture();
  const err = capture();
  const code = await main(argv, { stdout: out.stream, stderr: err.stream, cwd: work });
  return { code, out: out.text(), err: err.text() };
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const jsonl = <T>(path: string): T[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
const dataJson = (dir: string) => JSON.parse(readFileSync(join(dir, 'data.json'), 'utf8'));
const rlArgs = (out: string, ...more: string[]) => [
  'data',
  'rl',
  '--dataset',
  `spider:${datasetFile}`,
  '--db-dir',
  dbDir,
  '--protocol',
  'skyrl',
  '--out',
  out,
  ...more,
];

/** A finished `quarry bench --samples 3` run over the fixture (sample answers scripted per question). */
const benchRun = (async () => {
  const server = await startReplayServer({
    script: ITEMS.map((it) => ({ match: it.q, responses: it.answers.map((a) => `<solution>${a}</solution>`) })),
  });
  try {
    const out = join(work, 'bench-run');
    const r = await quarry(
      'bench',
      '--dataset',
      `spider:${datasetFile}`,
      '--db-dir',
      dbDir,
      '--model',
      server.spec(),
      '--protocol',
      'skyrl',
      '--samples',
      '3',
      '--max-turns',
      '4',
      '--out',
      out,
    );
    assert.equal(r.code, 0, r.err);
    return out;
  } finally {
    await server.close();
  }
})();

async function trajectories(): Promise<TrajectoryRecord[]> {
  return (await readTrajectories(join(await benchRun, 'trajectories.jsonl'))).records;
}

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());

test('quarry data: usage errors name the flag and exit 2', async () => {
  const cases: [string[], RegExp][] = [
    [['data'], /a subcommand is required: rl, sft, distill or self-taught/],
    [['data', 'distil'], /unknown subcommand 'distil': expected rl, sft, distill or self-taught/],
    [['data', 'rl', '--db-dir', dbDir, '--protocol', 'skyrl', '--out', 'o'], /--dataset is required/],
    [
      rlArgs('o').map((a) => (a === 'skyrl' ? 'nope' : a)),
      /--protocol must be one of skyrl, sqltrail, mtir, mtsqlr1, progress, got 'nope'/,
    ],
    [rlArgs('o', '--keep', 'all'), /--keep needs --difficulty RUN_DIR/],
    [rlArgs('o', '--difficulty', 'run'), /--difficulty RUN_DIR needs --keep all\|hard-but-solvable\|unsolved/],
    [
      rlArgs('o', '--difficulty', 'run', '--keep', 'easy'),
      /--keep must be one of all, hard-but-solvable, unsolved, got 'easy'/,
    ],
    [rlArgs('o', '--curriculum-bins', '3'), /--curriculum-bins needs --difficulty RUN_DIR/],
    [rlArgs('o', '--max-turns', '0'), /--max-turns must be a positive integer/],
    [rlArgs('o', 'extra.json'), /unexpected argument 'extra.json'/],
    [
      ['data', 'rl', '--dataset', 'spyder:x.json', '--db-dir', dbDir, '--protocol', 'skyrl', '--out', 'o'],
      /expected NAME:FILE\.json/,
    ],
    [['data', 'sft', '--out', 'o'], /--trajectories F\.\.\. is required/],
    [['data', 'sft', '--trajectories', 't.jsonl'], /--out DIR is required/],
    [['data', 'sft', '--trajectories', 't.jsonl', '--out', 'o', '--limit', '0'], /--limit must be a positive integer/],
  ];
  for (const [argv, message] of cases) {
    const r = await quarry(...argv);
    assert.equal(r.code, 2, argv.join(' '));
    assert.match(r.err, message, argv.join(' '));
  }
});

test('data rl: a verl record per question, prompts from the real env, failing gold dropped, data.json', async () => {
  const out = join(work, 'rl-default');
  const r = await quarry(...rlArgs(out, '--max-turns', '4'));
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /wrote 5 of 6 questions to .*train\.parquet and train\.jsonl \(dropped: gold-fails 1\)/);
  const records = jsonl<RlRecord>(join(out, 'train.jsonl'));
  assert.deepEqual(
    records.map((x) => x.extra_info.question),
    ITEMS.filter((it) => !it.gold.includes('vet')).map((it) => it.q),
  );
  for (const rec of records) {
    assert.deepEqual(Object.keys(rec), [
      'data_source',
      'prompt',
      'ability',
      'reward_model',
      'extra_info',
      'agent_name',
    ]);
    // verl's AgentLoopWorker plays each row with the loop it names: Quarry's, for the tag protocols.
    assert.equal(rec.agent_name, 'quarry_agent');
    assert.deepEqual(Object.keys(rec.extra_info), [
      'index',
      'db_id',
      'db_path',
      'question',
      'hardness',
      'protocol',
      'max_turns',
      'evidence',
      'history',
    ]);
    assert.equal(rec.data_source, 'quarry/spider');
    assert.equal(rec.ability, 'text2sql');
    assert.equal(rec.reward_model.style, 'rule');
    assert.deepEqual(
      [rec.extra_info.protocol, rec.extra_info.max_turns, rec.extra_info.evidence, rec.extra_info.history],
      ['skyrl', 4, null, null],
    );
    assert.equal(rec.reward_model.ground_truth, ITEMS[rec.extra_info.index].gold);
  }
  assert.equal(records[0].extra_info.hardness, 'easy');
  assert.equal(records[0].extra_info.db_path, join(dbDir, 'pets', 'pets.sqlite'));
  // The prompt is exactly what the environment opens an episode with (schema with example rows, the question).
  const dataset = loadDataset('spider', datasetFile, dbDir);
  for (const i of [0, 3]) {
    const { prompt } = await startEnv({
      task: dataset.tasks[i],
      protocol: getProtocol('skyrl'),
      config: { maxTurns: 4 },
      pool,
    });
    assert.deepEqual(records.find((x) => x.extra_info.index === i)!.prompt, prompt);
  }
  assert.match(records[0].prompt[0].content, /create table owner[\s\S]*How many owners are there\?/);

  const parquet = readFileSync(join(out, 'train.parquet'));
  assert.equal(parquet.subarray(0, 4).toString(), 'PAR1');
  assert.equal(parquet.subarray(-4).toString(), 'PAR1');
  const doc = dataJson(out);
  assert.deepEqual([doc.schema, doc.kind], ['quarry.data/1', 'rl']);
  assert.deepEqual(doc.sources, [
    { role: 'dataset', path: datasetFile, bytes: readFileSync(datasetFile).length, sha256: sha256(datasetFile) },
  ]);
  assert.deepEqual(
    doc.databases.files.map((f: { db_id: string; sha256: string }) => [f.db_id, f.sha256]),
    ['pets', 'school'].map((id) => [id, sha256(join(dbDir, id, `${id}.sqlite`))]),
  );
  assert.deepEqual(doc.filters, { failingGold: 'dropped', emptyGold: 'kept', difficulty: null, curriculumBins: null });
  assert.deepEqual(doc.counts.dropped, { 'gold-fails': 1 });
  assert.equal(doc.counts.emptyGoldKept, 1);
  assert.deepEqual([doc.counts.questions, doc.counts.written], [6, 5]);
  assert.deepEqual(doc.dropped, [
    {
      index: 4,
      id: 'spider:train_fixture:4',
      db_id: 'pets',
      reason: 'gold-fails',
      detail: 'the gold SQL fails (gold-error: no such table: vet): every rollout would score 0',
    },
  ]);
  assert.deepEqual(
    doc.outputs.map((o: { file: string; rows: number; sha256: string }) => [o.file, o.rows, o.sha256]),
    [
      ['train.parquet', 5, sha256(join(out, 'train.parquet'))],
      ['train.jsonl', 5, sha256(join(out, 'train.jsonl'))],
    ],
  );
  assert.deepEqual(doc.protocol, { name: 'skyrl', maxTurns: 4 });

  // --drop-empty-gold also drops the question whose gold returns no rows; the same directory is replaced.
  const again = await quarry(...rlArgs(out, '--drop-empty-gold'));
  assert.equal(again.code, 0, again.err);
  const d2 = dataJson(out);
  assert.deepEqual(d2.counts.dropped, { 'gold-fails': 1, 'empty-gold': 1 });
  assert.equal(d2.filters.emptyGold, 'dropped');
  assert.equal(d2.protocol.maxTurns, 5, 'the protocol default without --max-turns');
  assert.equal(jsonl(join(out, 'train.jsonl')).length, 4);
});

test("data rl --difficulty: SQL-Trail's hard-but-solvable and exploration sets from a bench run of G = 3", async () => {
  const run = await benchRun;
  const hard = join(work, 'rl-hard');
  const r = await quarry(...rlArgs(hard, '--max-turns', '4', '--difficulty', run, '--keep', 'hard-but-solvable'));
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err.includes('warning'), false, r.err);
  // dogs 2/3 and Math 1/3 are kept, S(q) ascending: Math first.
  assert.deepEqual(
    jsonl<RlRecord>(join(hard, 'train.jsonl')).map((x) => x.extra_info.index),
    [3, 1],
  );
  const doc = dataJson(hard);
  assert.deepEqual(doc.counts.dropped, { 'gold-fails': 1, difficulty: 3 });
  assert.deepEqual(
    doc.dropped
      .filter((d: { reason: string }) => d.reason === 'difficulty')
      .map((d: { index: number; detail: string }) => [d.index, d.detail]),
    [
      [0, '--keep hard-but-solvable: solved by all 3 samples'],
      [2, '--keep hard-but-solvable: unsolved: none of the 3 samples is correct'],
      [5, '--keep hard-but-solvable: solved by all 3 samples'],
    ],
  );
  assert.deepEqual(doc.filters.difficulty, {
    run,
    samples: 3,
    keep: 'hard-but-solvable',
    model: doc.filters.difficulty.model,
    protocol: { name: 'skyrl', maxTurns: 4 },
    scored: 6,
    complete: true,
  });
  const report = join(run, 'report.json');
  assert.deepEqual(doc.sources[1], {
    role: 'difficulty-report',
    path: report,
    bytes: readFileSync(report).length,
    sha256: sha256(report),
  });

  const unsolved = join(work, 'rl-unsolved');
  assert.equal(
    (await quarry(...rlArgs(unsolved, '--max-turns', '4', '--difficulty', run, '--keep', 'unsolved'))).code,
    0,
  );
  assert.deepEqual(
    jsonl<RlRecord>(join(unsolved, 'train.jsonl')).map((x) => x.extra_info.index),
    [2],
  );

  // Another protocol or budget than the run's is allowed, with a warning.
  const other = await quarry(...rlArgs(join(work, 'rl-other'), '--difficulty', run, '--keep', 'all'));
  assert.equal(other.code, 0);
  assert.match(other.err, /warning: the difficulty run allowed 4 turns, these prompts allow 5/);
});

test('data rl --curriculum-bins: MTSQL-R1 levels by successes, solved-by-all dropped, extra_info level', async () => {
  const run = await benchRun;
  const out = join(work, 'rl-curriculum');
  const r = await quarry(
    ...rlArgs(out, '--max-turns', '4', '--difficulty', run, '--keep', 'all', '--curriculum-bins', '2'),
  );
  assert.equal(r.code, 0, r.err);
  const records = jsonl<RlRecord>(join(out, 'train.jsonl'));
  // owners 3/3 and Zed 3/3 discarded; dogs 2, Math 1 | older 0.
  assert.deepEqual(
    records.map((x) => [x.extra_info.index, x.extra_info.curriculum_level]),
    [
      [1, 1],
      [3, 1],
      [2, 2],
    ],
  );
  const doc = dataJson(out);
  assert.deepEqual(doc.curriculum, {
    bins: 2,
    samples: 3,
    // The bench run records each sample's string EM: successes are EX and EM (MTSQL-R1 §3.3.1).
    countedBy: 'ex+em',
    discarded: 2,
    levels: [
      { level: 1, count: 2, successes: { min: 1, max: 2 }, rows: { first: 0, last: 1 } },
      { level: 2, count: 1, successes: { min: 0, max: 0 }, rows: { first: 2, last: 2 } },
    ],
  });
  assert.deepEqual(doc.counts.dropped, { 'gold-fails': 1, 'curriculum-too-easy': 2 });
});

test('data rl: difficulty runs that do not fit and output directories that are not ours are refused', async () => {
  const run = await benchRun;
  const noReport = join(work, 'empty-run');
  mkdirSync(noReport, { recursive: true });
  let r = await quarry(...rlArgs(join(work, 'x1'), '--difficulty', noReport, '--keep', 'all'));
  assert.equal(r.code, 2);
  assert.match(r.err, /has no report\.json: pass the --out directory of a finished `quarry bench --samples G` run/);

  const edited = (
    name: string,
    edit: (report: { samples: number; questions: { id: string; dbId: string }[] }) => void,
  ) => {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    const report = JSON.parse(readFileSync(join(run, 'report.json'), 'utf8'));
    edit(report);
    writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
    return dir;
  };
  r = await quarry(
    ...rlArgs(
      join(work, 'x2'),
      '--difficulty',
      edited('g1', (rep) => {
        rep.samples = 1;
      }),
      '--keep',
      'all',
    ),
  );
  assert.match(r.err, /the run has 1 sample per question; pass@G needs G >= 2/);
  r = await quarry(
    ...rlArgs(
      join(work, 'x3'),
      '--difficulty',
      edited('otherdb', (rep) => {
        rep.questions[0].dbId = 'school';
      }),
      '--keep',
      'all',
    ),
  );
  assert.match(r.err, /question spider:train_fixture:0 is on database school there and pets here/);
  r = await quarry(
    ...rlArgs(
      join(work, 'x4'),
      '--difficulty',
      edited('otherset', (rep) => {
        for (const q of rep.questions) q.id = q.id.replace('train_fixture', 'dev');
      }),
      '--keep',
      'all',
    ),
  );
  assert.match(r.err, /none of the questions of the difficulty run .* is in .*train_fixture\.json/);
  assert.equal(r.code, 2);

  const file = join(work, 'a-file');
  writeFileSync(file, 'x');
  r = await quarry(...rlArgs(file));
  assert.equal(r.code, 2);
  assert.match(r.err, /--out .*a-file is a file: name a directory/);
  const foreign = join(work, 'foreign');
  mkdirSync(foreign);
  writeFileSync(join(foreign, 'train.jsonl'), '{"mine": true}\n');
  r = await quarry(...rlArgs(foreign));
  assert.equal(r.code, 2);
  assert.match(
    r.err,
    /train\.jsonl exists and is not data from `quarry data rl` Quarry wrote; choose another --out directory/,
  );
  assert.equal(readFileSync(join(foreign, 'train.jsonl'), 'utf8'), '{"mine": true}\n', 'left as it was');
  // An SFT directory is not an RL one.
  const sftDir = join(work, 'sft-as-rl');
  assert.equal(
    (await quarry('data', 'sft', '--trajectories', join(run, 'trajectories.jsonl'), '--out', sftDir)).code,
    0,
  );
  writeFileSync(join(sftDir, 'train.jsonl'), '{"x":1}\n');
  assert.equal((await quarry(...rlArgs(sftDir))).code, 2);
});

test('data sft: answered trajectories as masked chats; --correct-only checks the final SQL by execution', async () => {
  const run = await benchRun;
  const file = join(run, 'trajectories.jsonl');
  const all = join(work, 'sft-all');
  let r = await quarry('data', 'sft', '--trajectories', file, '--out', all);
  assert.equal(r.code, 0, r.err);
  const examples = jsonl<SftExample>(join(all, 'sft.jsonl'));
  // 18 answered trajectories; identical conversations kept once: owners 1, dogs 2, older 1, Math 2, vets 1, Zed 1.
  assert.equal(examples.length, 8);
  for (const e of examples) {
    assert.equal(e.schema, 'quarry.sft/1');
    assert.equal(e.messages[0].role, 'user');
    for (const m of e.messages) assert.equal(m.loss, m.role === 'assistant', `${e.id}: ${m.role}`);
    assert.equal(e.messages.at(-1)!.role, 'assistant');
  }
  let doc = dataJson(all);
  assert.deepEqual(doc.counts.dropped, { 'repeated-conversation': 10 });
  assert.deepEqual(doc.counts.judgedBy, { answered: 8 });
  assert.deepEqual(doc.sources, [
    {
      role: 'trajectories',
      path: file,
      bytes: readFileSync(file).length,
      sha256: sha256(file),
      records: 18,
      invalidLines: 0,
    },
  ]);
  assert.deepEqual(
    doc.outputs.map((o: { file: string; rows: number }) => [o.file, o.rows]),
    [
      ['sft.parquet', 8],
      ['sft.jsonl', 8],
    ],
  );
  assert.equal(readFileSync(join(all, 'sft.parquet')).subarray(0, 4).toString(), 'PAR1');

  const correct = join(work, 'sft-correct');
  r = await quarry('data', 'sft', '--trajectories', file, '--correct-only', '--out', correct);
  assert.equal(r.code, 0, r.err);
  const kept = jsonl<SftExample>(join(correct, 'sft.jsonl'));
  assert.deepEqual(
    kept.map((e) => e.question),
    [ITEMS[0].q, ITEMS[1].q, ITEMS[3].q, ITEMS[5].q],
  );
  doc = dataJson(correct);
  assert.deepEqual(doc.counts.dropped, { 'repeated-conversation': 5, 'wrong-answer': 9 });
  const wrong = doc.dropped
    .filter((d: { reason: string }) => d.reason === 'wrong-answer')
    .map((d: { detail: string }) => d.detail);
  assert.ok(
    wrong.includes('the final SQL does not return the gold result (gold-error: no such table: vet)'),
    wrong.join('\n'),
  );

  // --prefer-hard orders by Spider hardness, --limit keeps the first N; two files given after one flag.
  const copy = join(work, 'copy.jsonl');
  copyFileSync(file, copy);
  const hard = join(work, 'sft-hard');
  r = await quarry(
    'data',
    'sft',
    '--trajectories',
    file,
    copy,
    '--correct-only',
    '--prefer-hard',
    '--limit',
    '2',
    '--out',
    hard,
  );
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(
    jsonl<SftExample>(join(hard, 'sft.jsonl')).map((e) => e.question),
    [ITEMS[3].q, ITEMS[0].q],
  );
  doc = dataJson(hard);
  assert.equal(doc.counts.dropped['duplicate-id'], 18, 'the copy repeats every id');
  assert.equal(doc.counts.dropped['over-limit'], 2);
  assert.deepEqual(doc.filters, { correctOnly: true, preferHard: true, limit: 2, labels: null });
});

test('data sft --labels: a label wins over execution, a corrected SQL rewrites the answer; bad input: 2', async () => {
  const run = await benchRun;
  const file = join(run, 'trajectories.jsonl');
  const records = await trajectories();
  const older = records.find((x) => x.task.question === ITEMS[2].q && x.sample === 0)!;
  const owners = records.find((x) => x.task.question === ITEMS[0].q && x.sample === 0)!;
  const labels = join(work, 'labels.sqlite');
  const store = LabelStore.open(labels);
  try {
    store.save({
      trajectoryId: older.id,
      file,
      recordSha: recordSha(older),
      verdict: 'incorrect',
      correctedSql: ITEMS[2].gold,
      tags: ['aggregation drift'],
      note: '',
    });
    store.save({
      trajectoryId: owners.id,
      file,
      recordSha: recordSha(owners),
      verdict: 'incorrect',
      correctedSql: null,
      tags: [],
      note: '',
    });
  } finally {
    store.close();
  }
  const out = join(work, 'sft-labels');
  const r = await quarry('data', 'sft', '--trajectories', file, '--labels', labels, '--correct-only', '--out', out);
  assert.equal(r.code, 0, r.err);
  const examples = jsonl<SftExample>(join(out, 'sft.jsonl'));
  const fixed = examples.find((e) => e.id === older.id)!;
  assert.deepEqual([fixed.source, fixed.verdict, fixed.tags], ['corrected', 'incorrect', ['aggregation drift']]);
  assert.equal(fixed.messages.at(-1)!.content, `<solution>${ITEMS[2].gold}</solution>`);
  assert.equal(
    examples.some((e) => e.id === owners.id),
    false,
    'labeled incorrect: left out although it executes right',
  );
  assert.equal(examples.filter((e) => e.question === ITEMS[0].q).length, 1, 'the other owners samples still count');
  const doc = dataJson(out);
  assert.deepEqual(doc.counts.judgedBy, { execution: 4, label: 1 });
  assert.deepEqual(doc.counts.bySource, { 'as-generated': 4, corrected: 1 });
  assert.deepEqual(
    doc.dropped.find((d: { id: string }) => d.id === owners.id),
    { id: owners.id, file, reason: 'label', detail: 'labeled incorrect without a corrected SQL' },
  );
  assert.deepEqual(doc.sources[1], {
    role: 'labels',
    path: labels,
    bytes: readFileSync(labels).length,
    sha256: sha256(labels),
    labels: 2,
  });

  let bad = await quarry('data', 'sft', '--trajectories', join(work, 'missing.jsonl'), '--out', join(work, 'y1'));
  assert.equal(bad.code, 2);
  assert.match(bad.err, /no such trajectory file: .*missing\.jsonl/);
  bad = await quarry('data', 'sft', '--trajectories', file, '--labels', buildDb('bookshop'), '--out', join(work, 'y2'));
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--labels: .* is a SQLite database but not a Quarry label store/);
  const inout = join(work, 'inout');
  mkdirSync(inout);
  copyFileSync(file, join(inout, 'sft.jsonl'));
  bad = await quarry('data', 'sft', '--trajectories', join(inout, 'sft.jsonl'), '--out', inout);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /the output .*sft\.jsonl is also an input/);
});

test('data rl over BIRD: quarry/bird, the evidence in extra_info (null when the item gives none)', async () => {
  const out = join(work, 'rl-bird');
  const r = await quarry(
    'data',
    'rl',
    '--dataset',
    `bird:${join(datasetFixtures, 'bird-dev.json')}`,
    '--db-dir',
    dbDir,
    '--protocol',
    'mtir',
    '--out',
    out,
  );
  assert.equal(r.code, 0, r.err);
  const records = jsonl<RlRecord>(join(out, 'train.jsonl'));
  assert.deepEqual(
    records.map((x) => [x.data_source, x.extra_info.evidence]),
    [
      ['quarry/bird', 'heavy refers to weight > 10'],
      ['quarry/bird', null],
      ['quarry/bird', 'in total refers to SUM(weight)'],
    ],
  );
  assert.match(records[0].prompt.map((m) => m.content).join('\n'), /heavy refers to weight > 10/);
  assert.deepEqual(
    records.map((x) => x.prompt.map((m) => m.role)),
    [
      ['system', 'user'],
      ['system', 'user'],
      ['system', 'user'],
    ],
  );
});

test('data rl --tools-in-template: mtir rows without the tool-declaring system message, in data.json', async () => {
  const args = ['--dataset', `bird:${join(datasetFixtures, 'bird-dev.json')}`, '--db-dir', dbDir, '--protocol'];
  const paper = join(work, 'rl-tools-prompt');
  const templ = join(work, 'rl-tools-template');
  assert.equal((await quarry('data', 'rl', ...args, 'mtir', '--out', paper)).code, 0);
  const r = await quarry('data', 'rl', ...args, 'mtir', '--out', templ, '--tools-in-template');
  assert.equal(r.code, 0, r.err);
  const withTool = jsonl<RlRecord>(join(paper, 'train.jsonl'));
  const without = jsonl<RlRecord>(join(templ, 'train.jsonl'));
  assert.equal(without.length, withTool.length);
  for (const [i, rec] of without.entries()) {
    // The user prompt is unchanged; only the system message (the tool's declaration, App. C.1) is left out.
    assert.deepEqual(rec.prompt, [withTool[i].prompt[1]]);
    assert.doesNotMatch(JSON.stringify(rec.prompt), /<tools>|sql-execute_sql_query/);
    // The template declares the tool: verl's own tool loop plays the row; with the prompt's declaration, Quarry's.
    assert.deepEqual([rec.agent_name, withTool[i].agent_name], ['tool_agent', 'quarry_agent']);
  }
  const doc = (p: string) => JSON.parse(readFileSync(join(p, 'data.json'), 'utf8')) as { protocol: unknown };
  assert.deepEqual(doc(templ).protocol, { name: 'mtir', maxTurns: 6, toolsDeclared: 'chat-template' });
  assert.deepEqual(doc(paper).protocol, { name: 'mtir', maxTurns: 6, toolsDeclared: 'prompt' });
  // A protocol with no tool for a chat template to declare is refused.
  const bad = await quarry(
    'data',
    'rl',
    ...args,
    'sqltrail',
    '--out',
    join(work, 'rl-tools-bad'),
    '--tools-in-template',
  );
  assert.equal(bad.code, 2);
  assert.match(bad.err, /protocol sqltrail declares no tool a chat template could declare/);
});
