// `quarry train` from the command line: TRL's plan, bad input exits 2 with the reason, the mapping tables
// print, and a launch whose engine cannot be checked (no Python at --python) prints its launch and the reason, exits 1
// and writes nothing. The engine's own check with a real verl and SkyRL config is trainer/tests/test_preflight.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { tempDir } from '../../helpers/fixtures';
import { capture } from '../captureStream';

async function quarry(args: string[], cwd = process.cwd()) {
  const out = capture();
  const err = capture();
  const code = await main(['train', ...args], { stdout: out.stream, stderr: err.stream, cwd });
  return { code, out: out.text(), err: err.text() };
}

test(
  '--engine trl (the default) plans a TRL run: ' + 'GRPOConfig fields from the recipe, Quarry keys for the rollout',
  async () => {
    const dir = tempDir('quarry-train-');
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'train.jsonl'), '{}\n');
    for (const engine of [[], ['--engine', 'trl']]) {
      const r = await quarry([
        '--recipe',
        'sql-trail',
        ...engine,
        '--model',
        'Qwen/Qwen2.5-Coder-7B-Instruct',
        '--data',
        data,
        '--out',
        join(dir, 'run'),
        '--python',
        join(dir, 'no-python'),
        '--dry-run',
      ]);
      // No Python at --python: the engine check cannot pass, but the plan is printed.
      assert.equal(r.code, 1);
      assert.match(r.out, /-m quarry_trainer\.train\.grpo/);
      assert.match(r.out, /num_generations=6 \\/);
      assert.match(r.out, /epsilon_high=0\.28 \\/);
      assert.match(r.out, /beta=0(\.0)? \\/);
      assert.match(r.out, /loss_type=dapo \\/);
      assert.match(r.out, /quarry\.max_turns=10 \\/);
    }
    assert.equal(existsSync(join(dir, 'run')), false);
  },
);

test('bad input exits 2 with the reason', async () => {
  let r = await quarry(['--recipe', 'nope', '--engine', 'verl', '--model', 'm', '--data', 'd', '--out', 'o']);
  assert.equal(r.code, 2);
  assert.match(r.err, /no built-in recipe 'nope'/);
  r = await quarry([
    '--recipe',
    'sql-trail',
    '--engine',
    'verl',
    '--model',
    'm',
    '--data',
    'd',
    '--out',
    'o',
    '--set',
    'rl.grup_size=4',
  ]);
  assert.equal(r.code, 2);
  assert.match(r.err, /unknown setting 'rl\.grup_size' \(did you mean rl\.group_size\?\)/);
  r = await quarry(['--recipe', 'sql-trail', '--engine', 'verl', '--data', 'd', '--out', 'o']);
  assert.equal(r.code, 2);
  assert.match(r.err, /--model is required/);
  r = await quarry(['--recipe', 'sql-trail', '--engine', 'deepspeed']);
  assert.equal(r.code, 2);
});

test("--list and --mapping print the recipes and each engine's table", async () => {
  let r = await quarry(['--list']);
  assert.equal(r.code, 0);
  assert.match(r.out, /^mtir-sql .*trainer\/recipes\/mtir-sql\.yaml$/m);
  r = await quarry(['--mapping', 'verl', '--json']);
  const rows = JSON.parse(r.out) as { recipe: string[]; engine: string[]; file: string }[];
  const n = rows.find((x) => x.recipe.includes('rl.group_size'));
  assert.deepEqual(n?.engine, ['actor_rollout_ref.rollout.n']);
  assert.equal(n?.file, 'verl/trainer/config/rollout/rollout.yaml');
  r = await quarry(['--mapping', 'skyrl']);
  assert.match(
    r.out,
    /rl\.group_size → generator\.n_samples_per_prompt\n\s+skyrl_train\/config\/ppo_base_config\.yaml/,
  );
});

test(
  "without the project's Python the pre-flight cannot pass: the launch is printed, the reason given, " +
    'nothing written',
  async () => {
    const dir = tempDir('quarry-train-');
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'train.parquet'), 'PAR1');
    const out = join(dir, 'run');
    const args = [
      '--recipe',
      'sql-trail',
      '--engine',
      'verl',
      '--model',
      'Qwen/Qwen2.5-Coder-7B-Instruct',
      '--data',
      data,
      '--out',
      out,
      '--python',
      join(dir, 'no-python'),
      '--set',
      'rl.group_size=8',
    ];
    let r = await quarry([...args, '--dry-run']);
    assert.equal(r.code, 1);
    assert.match(r.out, /rl\.group_size {2,}8 {2,}.*--set/);
    assert.match(r.out, /x error \[engine\.python\] no Python interpreter at '.*no-python'/);
    assert.match(r.out, /actor_rollout_ref\.rollout\.n=8 \\/);
    assert.match(r.out, /actor_rollout_ref\.actor\.clip_ratio_high=0\.28 \\/);
    r = await quarry(args);
    assert.equal(r.code, 1);
    assert.match(r.out, /nothing was written/);
    assert.equal(existsSync(out), false);
  },
);

test(
  "an error in Quarry's own checks is named before the " + 'engine is asked: the data built for another protocol',
  async () => {
    const dir = tempDir('quarry-train-');
    writeFileSync(join(dir, 'train.parquet'), 'PAR1');
    writeFileSync(
      join(dir, 'data.json'),
      JSON.stringify({
        schema: 'quarry.data/1',
        kind: 'rl',
        protocol: { name: 'mtir', maxTurns: 6 },
        dataset: { dbDir: dir },
        outputs: [{ file: 'train.parquet', rows: 100 }],
      }),
    );
    const r = await quarry([
      '--recipe',
      'sql-trail',
      '--engine',
      'skyrl',
      '--model',
      'm',
      '--data',
      dir,
      '--out',
      join(dir, 'o'),
      '--python',
      join(dir, 'no-python'),
      '--dry-run',
      '--json',
    ]);
    assert.equal(r.code, 1);
    const doc = JSON.parse(r.out) as { preflight: { findings: { check: string; message: string }[] } };
    const checks = doc.preflight.findings.map((f) => f.check);
    assert.ok(checks.includes('data.protocol'));
    assert.ok(checks.includes('data.turns'));
    // 100 rows are fewer than SQL-Trail's batch of 128.
    assert.ok(checks.includes('data.rows'));
  },
);

test("a local model folder's config.json gives the context the response budget is checked against", async () => {
  const dir = tempDir('quarry-train-');
  const model = join(dir, 'model');
  mkdirSync(model);
  writeFileSync(
    join(model, 'config.json'),
    JSON.stringify({ architectures: ['Qwen2ForCausalLM'], max_position_embeddings: 16384 }),
  );
  const r = await quarry([
    '--recipe',
    'sql-trail',
    '--engine',
    'verl',
    '--model',
    model,
    '--data',
    join(dir, 'd'),
    '--out',
    join(dir, 'o'),
    '--python',
    join(dir, 'no-python'),
    '--dry-run',
    '--json',
  ]);
  const doc = JSON.parse(r.out) as {
    context: { length: number; from: string };
    model: string;
    preflight: { findings: { check: string; message: string }[] };
  };
  assert.equal(doc.model, model);
  assert.deepEqual(doc.context, { length: 16384, from: `${model}/config.json max_position_embeddings` });
  // SQL-Trail's 6000 prompt + 16000 response tokens are over 16384.
  const context = doc.preflight.findings.find((f) => f.check === 'context');
  assert.match(
    context?.message ?? '',
    /6000 \+ data.max_response_length 16000 = 22000 tokens are more than the model's context of 16384/,
  );
});

test("verl's tool loop wants rows leaving the tool to the chat template; other launches, in the prompt", async () => {
  const findings = async (engine: string, toolsDeclared?: string) => {
    const dir = tempDir('quarry-train-');
    writeFileSync(join(dir, 'train.parquet'), 'PAR1');
    const protocol = { name: 'mtir', maxTurns: 6, ...(toolsDeclared ? { toolsDeclared } : {}) };
    writeFileSync(
      join(dir, 'data.json'),
      JSON.stringify({ schema: 'quarry.data/1', kind: 'rl', protocol, dataset: { dbDir: dir } }),
    );
    const r = await quarry([
      ...['--recipe', 'mtir-sql', '--engine', engine, '--model', 'm', '--data', dir, '--out', join(dir, 'o')],
      ...['--python', join(dir, 'no-python'), '--dry-run', '--json'],
    ]);
    const doc = JSON.parse(r.out) as { preflight: { findings: { check: string; message: string }[] } };
    return doc.preflight.findings.filter((f) => f.check === 'data.tools').map((f) => f.message);
  };
  // The paper's prompt (data.json before the field, or 'prompt') on verl: the template would declare the tool again.
  for (const declared of [undefined, 'prompt']) {
    const [msg, ...rest] = await findings('verl', declared);
    assert.equal(rest.length, 0);
    assert.match(msg, /declares it again through the chat template .*--tools-in-template/);
  }
  assert.deepEqual(await findings('verl', 'chat-template'), []);
  // SkyRL and TRL pass no tools to the template: rows without the declaration would never name the tool.
  for (const engine of ['skyrl', 'trl']) {
    assert.deepEqual(await findings(engine, 'prompt'), []);
    assert.match((await findings(engine, 'chat-template'))[0], /passes no tools to it/);
  }
});
