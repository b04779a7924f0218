// The pieces of "Quarry: Train a Model…" that need no editor: the `quarry data` folders found in a workspace, the
// target names from .quarry/targets.json, the TRL job built from a recipe's SFT stage (written as job.json, edited,
// read back and checked), and a job's metrics files and output folders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  VERL_FILE_LOGGER_SET,
  findDataFolders,
  prepareJob,
  readSpec,
  targetNames,
} from '../../../src/app/train/wizard';
import { parseAssignments, readRecipe } from '../../../src/app/train/recipes';
import { applyAssignments } from '../../../src/core/training/recipe';
import { planVerl } from '../../../src/core/training/verlLaunch';
import { protocolStops } from '../../../src/core/training/protocolStops';
import { jobMetricsFiles, jobOutputDirs } from '../../../src/app/jobs/jobFiles';
import { newJobRecord } from '../../../src/core/training/jobs/job';
import { stagePlan } from '../../../src/app/jobs/targets/remoteFiles';
import { tempDir } from '../../helpers/fixtures';

test('data folders: quarry.data/1 data.json anywhere a few levels down, dot folders skipped', () => {
  const ws = tempDir();
  const put = (dir: string, doc: unknown) => {
    mkdirSync(join(ws, dir), { recursive: true });
    writeFileSync(join(ws, dir, 'data.json'), JSON.stringify(doc));
  };
  put('data/rl-spider', { schema: 'quarry.data/1', kind: 'rl', counts: { written: 120 } });
  put('data/sft', { schema: 'quarry.data/1', kind: 'sft' });
  put('other', { schema: 'something/1' });
  put('.quarry/launches/x', { schema: 'quarry.data/1', kind: 'rl' });
  const found = findDataFolders(ws);
  assert.deepEqual(
    found.map((f) => [f.label, f.kind]),
    [
      ['data/rl-spider (rl, 120 rows)', 'rl'],
      ['data/sft (sft)', 'sft'],
    ],
  );
});

test("target names: local always, then .quarry/targets.json's named targets; bad JSON or a bad target is said", () => {
  const ws = tempDir();
  assert.deepEqual(targetNames(ws), { names: ['local'], problem: null });
  mkdirSync(join(ws, '.quarry'), { recursive: true });
  const gpuBox = { kind: 'ssh', host: 'gpu-box', remoteDir: '/scratch/quarry' };
  const cluster = { kind: 'slurm', remoteDir: '/scratch/q', partition: 'gpu' };
  writeFileSync(join(ws, '.quarry', 'targets.json'), JSON.stringify({ 'gpu-box': gpuBox, cluster }));
  assert.deepEqual(targetNames(ws).names, ['local', 'gpu-box', 'cluster']);
  writeFileSync(join(ws, '.quarry', 'targets.json'), JSON.stringify({ ray: { kind: 'ray' } }));
  assert.match(targetNames(ws).problem ?? '', /target "ray": "address" is required/);
  writeFileSync(join(ws, '.quarry', 'targets.json'), '{');
  assert.match(targetNames(ws).problem ?? '', /targets\.json is not JSON/);
});

test("TRL: the recipe's SFT stage as a job.json the user can edit before it is read back", async () => {
  const ws = tempDir();
  const prepared = await prepareJob(
    {
      recipe: 'sql-trail',
      model: '/models/tiny',
      data: '/data/sft',
      engine: 'trl',
      target: 'local',
      gpus: 0,
      nodes: 1,
      maxSteps: 5,
    },
    { workspace: ws, python: '/venv/bin/python', repoRoot: ws, now: new Date('2026-01-02T03:04:05Z') },
  );
  assert.deepEqual(prepared.errors, []);
  assert.equal(prepared.outDir, join(ws, '.quarry', 'launches', 'sql-trail-trl-20260102-030405'));
  const cmd = prepared.spec.command;
  assert.deepEqual(cmd.slice(0, 9), [
    '/venv/bin/python',
    '-m',
    'quarry_trainer.train.sft',
    '--model',
    '/models/tiny',
    '--data',
    '/data/sft',
    '--out',
    'out',
  ]);
  // Named by model, data, engine stage and local time; the target is shown beside it, not in it (issue 32, item 10).
  const t = new Date('2026-01-02T03:04:05Z');
  const two = (n: number) => String(n).padStart(2, '0');
  const day = `${two(t.getMonth() + 1)}-${two(t.getDate())}`;
  const when = `${day} ${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`;
  assert.equal(prepared.spec.name, `tiny · sft · trl SFT · ${when}`);
  const arg = (flag: string) => cmd[cmd.indexOf(flag) + 1];
  // trainer/recipes/sql-trail.yaml: sft.lr 1.0e-5, sft.epochs 2, sft.batch_size 128, sft.scheduler cosine.
  assert.equal(Number(arg('--lr')), 1e-5);
  assert.equal(arg('--epochs'), '2');
  assert.equal(arg('--scheduler'), 'cosine');
  assert.equal(arg('--max-steps'), '5');
  assert.deepEqual([arg('--batch-size'), arg('--grad-accum')], ['8', '16'], "the recipe's 128 a step, 8 at a time");
  assert.ok(cmd.includes('--cpu'));
  const saved = JSON.parse(readFileSync(prepared.specFile, 'utf8'));
  assert.deepEqual(saved, prepared.spec);
  // The user edits the saved file in the review step: the edit is what runs.
  saved.target = 'gpu-box';
  saved.command = [...saved.command, '--seed', '7'];
  writeFileSync(prepared.specFile, JSON.stringify(saved));
  const read = readSpec(prepared.specFile);
  assert.ok('spec' in read);
  assert.equal(read.spec.target, 'gpu-box');
  assert.deepEqual(read.spec.command.slice(-2), ['--seed', '7']);
  writeFileSync(prepared.specFile, JSON.stringify({ ...saved, command: [] }));
  const bad = readSpec(prepared.specFile);
  assert.ok('problem' in bad && /"command" must be a non-empty list/.test(bad.problem));
});

test('TRL on another target: `python` (the target supplies its own), writing to out/ (pulled back)', async () => {
  const ws = tempDir();
  const prepared = await prepareJob(
    {
      recipe: 'sql-trail',
      model: '/models/tiny',
      data: '/data/sft',
      engine: 'trl',
      target: 'gpu-box',
      gpus: 0,
      nodes: 1,
      maxSteps: 5,
    },
    { workspace: ws, python: '/venv/bin/python', repoRoot: ws },
  );
  const cmd = prepared.spec.command;
  assert.equal(cmd[0], 'python');
  assert.equal(cmd[cmd.indexOf('--out') + 1], 'out');
  assert.match(prepared.spec.name ?? '', /^tiny · sft · trl SFT · /);
  // The ssh and Slurm targets stage the job and rewrite `python` to the target's interpreter.
  const job = newJobRecord(prepared.spec, 'j2');
  const plan = stagePlan(job, join(ws, '.quarry', 'jobs', 'j2'), '/remote/j2', '/opt/py/bin/python');
  assert.equal(plan.command[0], '/opt/py/bin/python');
  assert.equal(plan.command[plan.command.indexOf('--out') + 1], 'out');
});

test("a job's metrics files: out/, the launch folder, and verl's VERL_FILE_LOGGER_PATH", () => {
  const job = newJobRecord(
    { target: 'local', command: ['x'], cwd: '/launch', env: { VERL_FILE_LOGGER_PATH: 'logs/verl.jsonl' } },
    'j1',
  );
  assert.deepEqual(jobOutputDirs(job, '/ws/.quarry/jobs/j1'), ['/ws/.quarry/jobs/j1/out', '/launch']);
  assert.deepEqual(jobMetricsFiles(job, '/ws/.quarry/jobs/j1'), [
    '/ws/.quarry/jobs/j1/out/metrics.jsonl',
    '/launch/metrics.jsonl',
    '/launch/logs/verl.jsonl',
  ]);
});

test("verl jobs from the wizard log to verl's file logger too (the --set wins over the mapping's console-only)", () => {
  const applied = applyAssignments(readRecipe('skyrl-sql', tempDir()), parseAssignments([VERL_FILE_LOGGER_SET]));
  assert.deepEqual(applied.problems, []);
  const plan = planVerl({
    recipe: applied.recipe,
    model: 'Qwen/Qwen2.5-Coder-7B-Instruct',
    trainFile: '/data/train.parquet',
    valFile: null,
    outDir: '/launch',
    rows: 653,
    rowsFrom: 'data.json',
    stops: protocolStops(applied.recipe.protocol),
  });
  const logger = plan.overrides.filter((o) => o.key === 'trainer.logger');
  assert.deepEqual(
    logger.map((o) => o.value),
    [['console', 'file']],
  );
});

test(
  'TRL on RL rows (a quarry data rl folder) ' + 'is a GRPO launch through quarry train, checked by the pre-flight',
  async () => {
    const ws = tempDir();
    const data = join(ws, 'rl');
    mkdirSync(data);
    writeFileSync(join(data, 'train.jsonl'), '{}\n');
    const prepared = await prepareJob(
      {
        recipe: 'skyrl-sql',
        model: '/models/tiny',
        data,
        engine: 'trl',
        target: 'local',
        gpus: 0,
        nodes: 1,
        maxSteps: 5,
      },
      { workspace: ws, python: join(ws, 'no-python'), repoRoot: ws, now: new Date('2026-01-02T03:04:05Z') },
    );
    // Not the SFT command: the engine check ran (and, with no Python here, refused).
    assert.ok(
      prepared.errors.some((e) => e.startsWith('[engine.python]')),
      prepared.errors.join('\n'),
    );
    assert.equal(prepared.spec.command.length, 0);
  },
);
