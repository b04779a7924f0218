// Launches from recipes: the paper's numbers land on the engine keys of each mapping table, steps become epochs by
// hand-checked arithmetic, every verl launch is multi-turn (Quarry's agent loop; verl's tool loop for tool calls),
// SkyRL gets the protocol's stop strings; Hydra values and shell quoting survive a real bash; the launch script
// parses in bash.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${QUARRY_TRAINER_DIR} is a shell variable in these strings
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRecipe } from '../../../src/app/train/recipes';
import { renderLaunchScript, trainerCommand } from '../../../src/app/train/launchScript';
import { planVerl, VERL_MAPPING } from '../../../src/core/training/verlLaunch';
import { planSkyrl, SKYRL_MAPPING } from '../../../src/core/training/skyrlLaunch';
import type { LaunchInputs } from '../../../src/core/training/launchPlan';
import { hydraValue, overrideArg, overrideValue, shellQuote } from '../../../src/core/training/overrides';
import { protocolStops } from '../../../src/core/training/protocolStops';
import { RECIPE_SETTINGS } from '../../../src/core/training/recipe';
import { tempDir } from '../../helpers/fixtures';

function launch(name: string, extra: Partial<LaunchInputs> = {}): LaunchInputs {
  const recipe = readRecipe(name, process.cwd());
  return {
    recipe,
    model: '/models/base',
    trainFile: '/data/train.parquet',
    valFile: null,
    outDir: '/runs/x',
    rows: null,
    rowsFrom: 'test',
    stops: protocolStops(recipe.protocol),
    ...extra,
  };
}

test('SQL-Trail on verl: G 6, T 1.0, top-p 0.99, clip-higher 0.2/0.28, no KL, lr 1e-6, batch 128, 108 steps', () => {
  const p = planVerl(launch('sql-trail', { rows: 1027, rowsFrom: 'the paper' }));
  const v = (k: string) => overrideValue(p.overrides, k);
  assert.equal(v('algorithm.adv_estimator'), 'grpo');
  assert.equal(v('actor_rollout_ref.rollout.n'), 6);
  assert.equal(v('actor_rollout_ref.rollout.temperature'), 1);
  assert.equal(v('actor_rollout_ref.rollout.top_p'), 0.99);
  assert.equal(v('actor_rollout_ref.actor.clip_ratio_low'), 0.2);
  assert.equal(v('actor_rollout_ref.actor.clip_ratio_high'), 0.28);
  assert.equal(v('actor_rollout_ref.actor.use_kl_loss'), false);
  assert.equal(v('algorithm.use_kl_in_reward'), false);
  assert.equal(v('actor_rollout_ref.actor.optim.lr'), 1e-6);
  assert.equal(v('data.train_batch_size'), 128);
  // 1027 rows / 128 = 8 full batches an epoch; 108 steps need ⌈108 / 8⌉ = 14 epochs.
  assert.equal(v('trainer.total_training_steps'), 108);
  assert.equal(v('trainer.total_epochs'), 14);
  assert.equal(v('reward.custom_reward_function.reward_kwargs.panel'), 'sqltrail');
  assert.equal(p.overrides.find((o) => o.key === 'reward.custom_reward_function.reward_kwargs.panel')?.add, true);
  // sqltrail acts with <sql> tags: its 10-turn episodes run in Quarry's agent loop on serve-env.
  assert.equal(v('actor_rollout_ref.rollout.multi_turn.enable'), true);
  assert.equal(v('actor_rollout_ref.rollout.multi_turn.max_assistant_turns'), 10);
  assert.equal(v('actor_rollout_ref.rollout.agent.default_agent_loop'), 'quarry_agent');
  assert.equal(
    v('actor_rollout_ref.rollout.agent.agent_loop_config_path'),
    '${QUARRY_TRAINER_DIR}/verl/agent_loop.yaml',
  );
  assert.equal(v('actor_rollout_ref.rollout.multi_turn.tool_config_path'), undefined);
  assert.ok(!p.notCarried.some((n) => n.key === 'rl.max_turns'));
  assert.ok(p.notes.some((n) => /1027 rows \(the paper\) make 8 batches of 128 per epoch/.test(n)));
});

test("MTIR-SQL on verl: the tool agent loop with Quarry's tool config, 6 assistant turns, 8192-token sequences", () => {
  const p = planVerl(launch('mtir-sql'));
  const v = (k: string) => overrideValue(p.overrides, k);
  assert.equal(v('actor_rollout_ref.rollout.multi_turn.enable'), true);
  assert.equal(v('actor_rollout_ref.rollout.multi_turn.max_assistant_turns'), 6);
  assert.equal(
    v('actor_rollout_ref.rollout.multi_turn.tool_config_path'),
    '${QUARRY_TRAINER_DIR}/verl/tool_config.yaml',
  );
  assert.equal(v('actor_rollout_ref.rollout.agent.default_agent_loop'), 'tool_agent');
  assert.equal((v('data.max_prompt_length') as number) + (v('data.max_response_length') as number), 8192);
  assert.equal(v('actor_rollout_ref.rollout.temperature'), 0.6);
  assert.ok(!p.notCarried.some((n) => n.key === 'rl.max_turns'));
  assert.ok(p.notCarried.some((n) => n.key === 'rl.filter'));
});

test("MTSQL-R1 on verl: App. B's own keys pass through after the table, and win over it", () => {
  const p = planVerl(launch('mtsql-r1'));
  const v = (k: string) => overrideValue(p.overrides, k);
  assert.equal(v('actor_rollout_ref.actor.use_dynamic_bsz'), true);
  assert.equal(v('actor_rollout_ref.actor.ppo_max_token_len_per_gpu'), 30000);
  // The table sets the log-prob micro-batch to rl.micro_batch_size_per_gpu (32); App. B says 64, and App. B wins.
  assert.equal(v('actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu'), 64);
  assert.equal(
    p.overrides.filter((o) => o.key === 'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu').length,
    1,
  );
  assert.equal(v('actor_rollout_ref.actor.loss_agg_mode'), 'seq-mean-token-mean');
  assert.equal(v('trainer.total_epochs'), 60);
  assert.equal(v('actor_rollout_ref.rollout.name'), 'sglang');
  // No held-out file: validation off even though App. B validates every 10 steps.
  assert.equal(v('trainer.test_freq'), -1);
  assert.equal(
    planVerl(launch('mtsql-r1', { valFile: '/data/val.parquet' })).overrides.find((o) => o.key === 'trainer.test_freq')
      ?.value,
    10,
  );
});

test('SkyRL-SQL on SkyRL: n 5, T 0.6, top-p 0.95, 5 turns, stop strings; 35 steps become epochs by hand', () => {
  const p = planSkyrl(launch('skyrl-sql', { rows: 653, rowsFrom: 'the paper' }));
  const v = (k: string) => overrideValue(p.overrides, k);
  assert.equal(v('generator.n_samples_per_prompt'), 5);
  assert.equal(v('generator.sampling_params.temperature'), 0.6);
  assert.equal(v('generator.sampling_params.top_p'), 0.95);
  assert.equal(v('generator.max_turns'), 5);
  assert.equal(v('trainer.policy.optimizer_config.lr'), 1e-6);
  assert.equal(v('trainer.train_batch_size'), 256);
  assert.deepEqual(v('generator.sampling_params.stop'), ['</sql>', '</solution>']);
  assert.equal(v('environment.env_class'), 'quarry-text2sql');
  assert.equal(v('environment.skyrl_gym.quarry-text2sql.panel'), 'skyrl');
  // prompt 6000 + response 23000 is the conversation; 4 engines × TP 2 fill 8 GPUs.
  assert.equal(v('generator.max_input_length'), 29000);
  assert.equal(v('generator.num_inference_engines'), 4);
  // 653 rows / 256 = 2 full batches an epoch: 35 steps need 18 epochs = 36 steps.
  assert.equal(v('trainer.epochs'), 18);
  assert.ok(p.notes.some((n) => /trainer.epochs=18: 36 steps, 1 more than the paper's/.test(n)));
});

test('SkyRL: the curriculum order cannot be kept, KL estimators and loss reductions are renamed', () => {
  const p = planSkyrl(launch('mtsql-r1'));
  const v = (k: string) => overrideValue(p.overrides, k);
  assert.ok(p.notCarried.some((n) => n.key === 'data.shuffle' && /shuffle=True/.test(n.why)));
  assert.equal(v('trainer.algorithm.kl_estimator_type'), 'k3');
  assert.equal(v('trainer.algorithm.loss_reduction'), 'sequence_mean');
  // The recipe's SkyRL section keeps vLLM (SGLang refuses stop strings in SkyRL).
  assert.equal(v('generator.backend'), 'vllm');
  assert.deepEqual(v('generator.sampling_params.stop'), ['</tool_call>']);
});

test('the mapping tables cite an engine file for each row, and read only known recipe keys', () => {
  for (const [engine, table] of [
    ['verl', VERL_MAPPING],
    ['skyrl', SKYRL_MAPPING],
  ] as const) {
    for (const row of table) {
      assert.match(row.file, engine === 'verl' ? /^verl\/trainer\/config\// : /^skyrl_train\/config\//);
      for (const k of row.recipe) assert.ok(RECIPE_SETTINGS[k], `${engine}: ${k}`);
    }
  }
});

test('Hydra values: numbers as Hydra reads them back, strings quoted when they would read otherwise', () => {
  assert.equal(hydraValue(1e-6), '1e-6');
  assert.equal(hydraValue(0.28), '0.28');
  assert.equal(hydraValue(1, false, true), '1.0');
  assert.equal(hydraValue('Qwen/Qwen3-4B'), 'Qwen/Qwen3-4B');
  assert.equal(hydraValue('1.0'), "'1.0'");
  assert.equal(hydraValue('true'), "'true'");
  assert.equal(hydraValue(['</sql>', '</solution>']), "['</sql>','</solution>']");
  assert.equal(hydraValue("it's"), "'it\\'s'");
  assert.equal(hydraValue(null), 'null');
  assert.equal(overrideArg({ key: 'a.b', value: 'x', add: true, from: 't' }), '+a.b=x');
});

test('shell quoting: what bash hands the program is the argument, with ${VAR} expanded only where meant', () => {
  const args = [
    'plain=1',
    "g.stop=['</sql>','</solution>']",
    'a=it\'s "q" $HOME `x`',
    'p=${QUARRY_TRAINER_DIR}/verl/r.py',
  ];
  const quoted = args.map((a) => shellQuote(a, a.includes('${QUARRY_TRAINER_DIR}')));
  const out = execFileSync('bash', ['-c', `QUARRY_TRAINER_DIR=/t; printf '%s\\n' ${quoted.join(' ')}`], {
    encoding: 'utf8',
  });
  assert.deepEqual(out.trimEnd().split('\n'), [args[0], args[1], args[2], 'p=/t/verl/r.py']);
});

test('the launch script parses in bash and runs the engine with every override', () => {
  const inputs = launch('skyrl-sql');
  const plan = planSkyrl(inputs);
  const script = renderLaunchScript({
    recipe: inputs.recipe,
    plan,
    quarryCommand: '/opt/quarry/bin/quarry',
    dbDir: '/db dir',
    multiNode: false,
  });
  const file = join(tempDir('quarry-launch-'), 'launch.sh');
  writeFileSync(file, script);
  execFileSync('bash', ['-n', file]);
  assert.match(script, /"\$PYTHON" -m quarry_trainer\.skyrl\.main \\\n/);
  assert.match(script, /DB_DIR="\$\{QUARRY_DB_DIR:-\/db dir\}"/);
  assert.match(script, /serve-env --host "\$ENV_HOST" --port 0 --db-dir "\$DB_DIR" --token-file "\$TOKEN_FILE"/);
  assert.equal(trainerCommand(plan).length, plan.overrides.length + 2);
  for (const o of plan.overrides) assert.ok(script.includes(shellQuote(overrideArg(o), o.shellVars)), o.key);
});
