// The train wizard's choices and the data it makes, without the editor: the base models offered (the bundled tiny
// model, the recipe's, the registered ones), the last answers first, a CPU run's few steps, a job named by what
// differs (not "… on local" for every run), the whole command line, and data made from a real Spider-style dataset
// on a real SQLite database through `quarry data rl`'s function (gold SFT and RL rows), found again by the data step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  baseModelChoices,
  commandLine,
  defaultSteps,
  jobDisplayName,
  lastFirst,
  readWizardMemory,
} from '../../../src/app/train/wizardChoices';
import {
  findDatasetFiles,
  labeledTrajectories,
  newDataDir,
  rlFromDataset,
  sftFromDatasetGold,
} from '../../../src/app/train/wizardData';
import { findDataFolders, prepareJob } from '../../../src/app/train/wizard';
import { tempDir } from '../../helpers/fixtures';

test("base models: the bundled tiny model first, the recipe's, each checkpoint once; the last used first", () => {
  const offered = baseModelChoices({
    bundled: '/ext/media/models/tiny-sql',
    recipeModel: 'Qwen/Qwen2.5-Coder-7B-Instruct',
    registered: [
      { name: 'tiny-sft', checkpoint: '/ws/runs/sft/checkpoint-8' },
      { name: 'tiny-sft-again', checkpoint: '/ws/runs/sft/checkpoint-8' },
      { name: 'other', checkpoint: '/ws/runs/other' },
    ],
  });
  assert.deepEqual(
    offered.map((o) => [o.label, o.value]),
    [
      ['tiny-sql (bundled)', '/ext/media/models/tiny-sql'],
      ['Qwen/Qwen2.5-Coder-7B-Instruct', 'Qwen/Qwen2.5-Coder-7B-Instruct'],
      ['tiny-sft', '/ws/runs/sft/checkpoint-8'],
      ['other', '/ws/runs/other'],
    ],
  );
  const again = baseModelChoices({
    bundled: '/ext/media/models/tiny-sql',
    recipeModel: null,
    registered: [{ name: 'other', checkpoint: '/ws/runs/other' }],
    last: '/ws/runs/other',
  });
  assert.deepEqual(
    again.map((o) => o.label),
    ['other', 'tiny-sql (bundled)'],
  );
  assert.match(again[0].description, /^last used · registered/);
});

test('remembered answers: only well-typed fields are read back; lastFirst keeps the order when nothing matches', () => {
  assert.deepEqual(readWizardMemory({ recipe: 'skyrl-sql', gpus: -1, maxSteps: 8, model: 3, target: 'local' }), {
    recipe: 'skyrl-sql',
    target: 'local',
    maxSteps: 8,
  });
  assert.deepEqual(readWizardMemory('junk'), {});
  assert.deepEqual(readWizardMemory({ maxSteps: null, gpus: 0 }), { maxSteps: null, gpus: 0 });
  const items = [
    { label: 'a', description: '', value: 1 },
    { label: 'b', description: 'x', value: 2 },
  ];
  assert.equal(lastFirst(items, 3), items);
  assert.deepEqual(
    lastFirst(items, 2).map((i) => [i.label, i.description]),
    [
      ['b', 'last used · x'],
      ['a', ''],
    ],
  );
});

test('steps: a few on the CPU unless an answer was remembered; none asked for on GPUs', () => {
  assert.equal(defaultSteps(0, undefined), 8);
  assert.equal(defaultSteps(2, undefined), null);
  assert.equal(defaultSteps(0, 30), 30);
  assert.equal(defaultSteps(0, null), null);
});

test('a job is named by its model, data, engine stage and time; the command line is whole and quoted', async () => {
  const now = new Date(2026, 10, 29, 0, 41, 7);
  assert.equal(
    jobDisplayName({
      model: '/ext/media/models/tiny-sql/',
      data: '/ws/.quarry/data/sft-dev/sft.jsonl',
      engine: 'trl',
      stage: 'SFT',
      now,
    }),
    'tiny-sql · sft-dev · trl SFT · 11-29 00:41:07',
  );
  assert.equal(commandLine(['python', '-m', 'x', '--data', "it's here"]), `python -m x --data "it's here"`);
  const ws = tempDir();
  const prepared = await prepareJob(
    {
      recipe: 'skyrl-sql',
      model: '/m/tiny-sql',
      data: '/d/train-data',
      engine: 'trl',
      target: 'local',
      gpus: 0,
      nodes: 1,
      maxSteps: 8,
    },
    { workspace: ws, python: '/venv/bin/python', repoRoot: ws, now },
  );
  assert.deepEqual(prepared.errors, []);
  assert.equal(prepared.spec.name, 'tiny-sql · train-data · trl SFT · 11-29 00:41:07');
  assert.doesNotMatch(prepared.spec.name ?? '', /on local/);
  // A few CPU steps end in a loadable checkpoint-8 (Load Checkpoint… lists checkpoint-N folders).
  const cmd = prepared.spec.command;
  assert.deepEqual(cmd.slice(cmd.indexOf('--max-steps'), cmd.indexOf('--max-steps') + 4), [
    '--max-steps',
    '8',
    '--save-steps',
    '8',
  ]);
});

/** A workspace with a Spider-style dataset of two questions on a real choir database (Spider's database/ layout). */
function datasetWorkspace(): { ws: string; file: string } {
  const ws = tempDir();
  const dir = join(ws, 'spider-mini');
  mkdirSync(join(dir, 'database', 'choir'), { recursive: true });
  const conn = new Database(join(dir, 'database', 'choir', 'choir.sqlite'));
  conn.exec(
    'CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, age INTEGER);' +
      "INSERT INTO singer (name, age) VALUES ('Ana', 25), ('Bo', 41)",
  );
  conn.close();
  const file = join(dir, 'dev.json');
  writeFileSync(
    file,
    JSON.stringify([
      { db_id: 'choir', question: 'How many singers are there?', query: 'SELECT count(*) FROM singer' },
      { db_id: 'choir', question: 'Which singers are older than 30?', query: 'SELECT name FROM singer WHERE age > 30' },
    ]),
  );
  writeFileSync(join(dir, 'not-a-dataset.json'), JSON.stringify({ hello: 1 }));
  return { ws, file };
}

test('dataset files: Spider-style JSON with its databases is found; other JSON is not', () => {
  const { ws, file } = datasetWorkspace();
  const found = findDatasetFiles(ws);
  assert.deepEqual(
    found.map((f) => [f.file, f.dbDir, f.questions, f.label]),
    [[file, join(ws, 'spider-mini', 'database'), 2, 'spider-mini/dev.json (2 questions)']],
  );
  assert.deepEqual(labeledTrajectories(ws), { files: [], labels: null });
});

test("SFT from a dataset's gold SQL: each skyrl prompt answered with its gold, found again", async () => {
  const { ws, file } = datasetWorkspace();
  const dbDir = join(ws, 'spider-mini', 'database');
  const outDir = newDataDir(ws, 'sft', file, new Date('2026-11-29T00:41:00Z'));
  assert.equal(outDir, join(ws, '.quarry', 'data', 'sft-spider-mini-20261129-004100'));
  const made = await sftFromDatasetGold({ file, dbDir, protocol: 'skyrl', outDir });
  assert.deepEqual([made.kind, made.rows], ['sft', 2]);
  const rows = readFileSync(join(outDir, 'sft.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(rows.length, 2);
  for (const r of rows) {
    assert.equal(r.schema, 'quarry.sft/1');
    const last = r.messages.at(-1);
    assert.deepEqual([last.role, last.loss], ['assistant', true]);
    assert.ok(r.messages.slice(0, -1).every((m: { loss: boolean }) => !m.loss));
    assert.match(r.messages[0].content + (r.messages[1]?.content ?? ''), /singer/, 'the prompt holds the schema');
  }
  assert.deepEqual(
    rows.map((r) => r.messages.at(-1).content),
    ['<solution>SELECT count(*) FROM singer</solution>', '<solution>SELECT name FROM singer WHERE age > 30</solution>'],
  );
  const found = findDataFolders(ws);
  assert.deepEqual(
    found.map((f) => [f.dir, f.kind]),
    [[outDir, 'sft']],
    'the made folder is offered again (its rl/ prompts are not a data folder of their own)',
  );
});

test('RL rows from a dataset: `quarry data rl` through its function', async () => {
  const { ws, file } = datasetWorkspace();
  const outDir = newDataDir(ws, 'rl', file);
  const made = await rlFromDataset({ file, dbDir: join(ws, 'spider-mini', 'database'), protocol: 'skyrl', outDir });
  assert.deepEqual([made.kind, made.rows], ['rl', 2]);
  const doc = JSON.parse(readFileSync(join(outDir, 'data.json'), 'utf8'));
  assert.deepEqual([doc.schema, doc.kind, doc.counts.written], ['quarry.data/1', 'rl', 2]);
});
