// Recipes (trainer/recipes/*.yaml): every built-in one reads and validates, carries the paper's numbers, and agrees
// with the built-in reward panel it names; hand-made documents show each validation rule; --set replaces a value and
// says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  applyAssignments,
  rewardDifferences,
  settingValue,
  validateRecipe,
  RECIPE_SETTINGS,
  type Recipe,
} from '../../../src/core/training/recipe';
import { listBuiltinRecipes, parseAssignments, readRecipe, RecipeError } from '../../../src/app/train/recipes';
import { tempDir } from '../../helpers/fixtures';

const NAMES = ['mtir-sql', 'mtsql-r1', 'progress-sql', 'skyrl-sql', 'sql-trail'];

function builtin(name: string): Recipe {
  return readRecipe(name, process.cwd());
}

/** A minimal valid document: every required setting, each with a provenance. */
function minimal(): Record<string, unknown> {
  const values: Record<string, unknown> = {
    'model.base': 'm',
    'model.context_length': 4096,
    'hardware.gpus_per_node': 2,
    'hardware.nodes': 1,
    'rl.algorithm': 'grpo',
    'rl.group_size': 4,
    'rl.lr': 1e-6,
    'rl.train_batch_size': 8,
    'rl.mini_batch_size': 8,
    'rl.micro_batch_size_per_gpu': 1,
    'rl.temperature': 1,
    'rl.top_p': 1,
    'rl.max_turns': 3,
    'rl.max_prompt_length': 1000,
    'rl.max_response_length': 2000,
    'rl.max_turn_tokens': 500,
    'rl.clip_low': 0.2,
    'rl.clip_high': 0.2,
    'rl.kl_loss': false,
    'rl.kl_in_reward': false,
    'rl.entropy_coef': 0,
    'rl.loss_agg_mode': 'token-mean',
    'rl.grad_clip': 1,
    'rl.rollout_engine': 'vllm',
    'rl.tensor_parallel': 1,
    'reward.panel': 'skyrl',
  };
  const settings = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { value: v, source: '§1' }]));
  return { schema: 'quarry.recipe/1', name: 'mini', paper: { title: 'T' }, protocol: 'skyrl', settings, engines: {} };
}

test('the five papers each have a built-in recipe, and each validates', () => {
  assert.deepEqual(
    listBuiltinRecipes().map((r) => r.name),
    NAMES,
  );
  for (const name of NAMES) {
    const r = builtin(name);
    assert.equal(r.name, name);
    for (const [key, s] of Object.entries(r.settings)) {
      assert.ok(RECIPE_SETTINGS[key], `${name}: ${key} is a known setting`);
      assert.ok((s.source === undefined) !== (s.quarry === undefined), `${name}: ${key} is the paper's or Quarry's`);
    }
  }
});

test("the recipes carry the papers' stated numbers, each with its source", () => {
  const expect: Record<string, Record<string, unknown>> = {
    'skyrl-sql': {
      'rl.lr': 1e-6,
      'rl.train_batch_size': 256,
      'rl.total_steps': 35,
      'rl.group_size': 5,
      'rl.temperature': 0.6,
      'rl.top_p': 0.95,
      'data.train_size': 653,
      'model.base': 'Qwen/Qwen2.5-Coder-7B-Instruct',
    },
    'sql-trail': {
      'rl.group_size': 6,
      'rl.temperature': 1,
      'rl.top_p': 0.99,
      'rl.max_turns': 10,
      'rl.lr': 1e-6,
      'rl.train_batch_size': 128,
      'rl.total_steps': 108,
      'rl.kl_loss': false,
      'sft.lr': 1e-5,
      'sft.epochs': 2,
      'sft.batch_size': 128,
      'sft.betas': [0.9, 0.95],
      'sft.warmup_ratio': 0.1,
      'data.train_size': 1027,
    },
    'mtir-sql': {
      'rl.train_batch_size': 64,
      'rl.lr': 1e-6,
      'rl.group_size': 5,
      'rl.temperature': 0.6,
      'rl.max_sequence_length': 8192,
      'rl.max_turns': 6,
      'rl.kl_loss': false,
      'hardware.gpus_per_node': 8,
    },
    'mtsql-r1': {
      'rl.train_batch_size': 256,
      'rl.max_prompt_length': 4000,
      'rl.max_response_length': 8000,
      'rl.lr': 1e-6,
      'rl.max_turns': 4,
      'rl.group_size': 5,
      'rl.mini_batch_size': 256,
      'rl.micro_batch_size_per_gpu': 32,
      'rl.epochs': 60,
      'rl.rollout_engine': 'sglang',
      'data.curriculum_bin_size': 2000,
      'sft.lr': 5e-6,
      'sft.rollouts_per_item': 20,
      'sft.temperature': 0.7,
    },
    'progress-sql': {
      'rl.lr': 1e-6,
      'rl.train_batch_size': 64,
      'rl.group_size': 8,
      'rl.temperature': 1,
      'rl.max_response_length': 8192,
      'rl.max_prompt_length': 6000,
      'rl.clip_low': 0.2,
      'rl.max_turns': 4,
      'rl.kl_loss': false,
      'data.train_size': 20000,
      'model.base': 'Qwen/Qwen2.5-Coder-7B-Instruct',
    },
  };
  for (const [name, values] of Object.entries(expect)) {
    const r = builtin(name);
    for (const [key, value] of Object.entries(values)) {
      assert.deepEqual(settingValue(r, key), value, `${name}: ${key}`);
      assert.ok(r.settings[key].source, `${name}: ${key} cites the paper`);
    }
  }
  // A value the paper leaves open is Quarry's choice with a reason (SQL-Trail gives no ε values for clip-higher).
  assert.match(builtin('sql-trail').settings['rl.clip_high'].quarry ?? '', /DAPO/);
  assert.deepEqual(builtin('mtsql-r1').engines.verl['actor_rollout_ref.actor.ppo_max_token_len_per_gpu'], {
    value: 30000,
    source: 'App. B.0.2',
  });
});

test("each recipe's reward numbers are its built-in panel's; a changed weight is named", () => {
  for (const name of NAMES) assert.deepEqual(rewardDifferences(builtin(name)), [], name);
  const r = builtin('sql-trail');
  const { recipe } = applyAssignments(r, [
    { key: 'reward.terms', value: { exec: { weight: 4 }, turns: { weight: 2 } } },
  ]);
  assert.deepEqual(rewardDifferences(recipe), ['exec.weight: recipe 4, panel 5']);
  const p = applyAssignments(builtin('progress-sql'), [
    { key: 'reward.terms', value: { late: { params: { gamma: 0.9 } } } },
  ]);
  assert.deepEqual(rewardDifferences(p.recipe), ['late.params.gamma: recipe 0.9, panel 0.5']);
});

test('validation: provenance, types, bounds, required keys, protocol and panel, each named', () => {
  assert.deepEqual(validateRecipe(minimal(), 'r.yaml').problems, []);
  const doc = minimal();
  const s = doc.settings as Record<string, Record<string, unknown>>;
  s['rl.lr'] = { value: 1e-6 };
  s['rl.top_p'] = { value: 0.9, source: '§2', quarry: 'because' };
  s['rl.group_size'] = { value: 2.5, source: '§3' };
  s['rl.clip_low'] = { value: 1.5, source: '§3' };
  s['rl.loss_agg_mode'] = { value: 'mean', source: '§3' };
  s['rl.groupsize'] = { value: 4, source: '§3' };
  delete s['rl.temperature'];
  s['reward.panel'] = { value: 'nope', source: '§4' };
  doc.protocol = 'chatty';
  const { recipe, problems } = validateRecipe(doc, 'r.yaml');
  assert.equal(recipe, null);
  const text = problems.join('\n');
  assert.match(text, /settings\.rl\.lr: say where the value comes from/);
  assert.match(text, /settings\.rl\.top_p: both source and quarry/);
  assert.match(text, /rl\.group_size must be a whole number, got 2\.5/);
  assert.match(text, /rl\.clip_low must be at most 1, got 1\.5/);
  assert.match(text, /rl\.loss_agg_mode must be one of token-mean, /);
  assert.match(text, /unknown setting 'rl\.groupsize' \(did you mean rl\.group_size\?\)/);
  assert.match(text, /settings\.rl\.temperature is missing/);
  assert.match(text, /protocol must be one of skyrl, sqltrail, mtir, mtsqlr1, progress, got "chatty"/);
  assert.match(text, /reward\.panel 'nope' is not a built-in panel/);
});

test('engine keys in a recipe: dotted keys with a value and a provenance', () => {
  const doc = minimal();
  doc.engines = {
    verl: { 'a.b': { value: 1, source: 'App. B' }, 'bad key': { value: 1, source: 'x' } },
    skyrl: { 'c.d': { value: { nested: true }, quarry: 'x' } },
    deepspeed: {},
  };
  const text = validateRecipe(doc, 'r.yaml').problems.join('\n');
  assert.match(text, /engines\.verl\.bad key: not a dotted config key/);
  assert.match(text, /engines\.skyrl\.c\.d must be \{value: a number, string, boolean, null or list/);
  assert.match(text, /engines\.deepspeed: engines are verl, skyrl, trl/);
});

test('--set replaces a setting (marked as set) or sets an engine key; a bad one is refused with the reason', () => {
  const r = builtin('skyrl-sql');
  const { recipe, problems } = applyAssignments(
    r,
    parseAssignments(['rl.lr=2e-6', 'verl.trainer.save_freq=5', 'rl.top_p=0.9']),
  );
  assert.deepEqual(problems, []);
  assert.equal(settingValue(recipe, 'rl.lr'), 2e-6);
  assert.equal(recipe.settings['rl.lr'].set, '--set on the command line');
  assert.match(recipe.settings['rl.lr'].note ?? '', /recipe's value was 0\.000001/);
  assert.deepEqual(recipe.engines.verl['trainer.save_freq'], { value: 5, set: '--set on the command line' });
  assert.equal(settingValue(r, 'rl.lr'), 1e-6, 'the recipe read is unchanged');
  const bad = applyAssignments(r, parseAssignments(['rl.group_size=many', 'rl.grup_size=4']));
  assert.match(bad.problems[0], /rl\.group_size must be a whole number, got "many"/);
  assert.match(bad.problems[1], /unknown setting 'rl\.grup_size' \(did you mean rl\.group_size\?\); engine keys are/);
  assert.throws(() => parseAssignments(['rl.lr']), RecipeError);
});

test("a recipe file of one's own: read by path, YAML errors with line and column", () => {
  const dir = tempDir('quarry-recipe-');
  const file = join(dir, 'mine.yaml');
  writeFileSync(file, 'schema: quarry.recipe/1\nname: mine\n  protocol: [\n');
  assert.throws(() => readRecipe(file, dir), /mine\.yaml:\d+:\d+: not valid YAML/);
  writeFileSync(file, JSON.stringify(minimal()));
  assert.equal(readRecipe('./mine.yaml', dir).name, 'mini');
  assert.throws(() => readRecipe('no-such-recipe', dir), /no built-in recipe 'no-such-recipe' \(built-in: mtir-sql, /);
});
