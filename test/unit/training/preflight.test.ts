// Pre-flight arithmetic with small numbers worked by hand: the batch sizes verl and SkyRL split (train batch × group
// size by mini-batch, by micro-batch × GPUs), GPU placement, prompt + response against the context, a data set
// smaller than one batch; and every built-in recipe's own launch passing them.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${QUARRY_TRAINER_DIR} is a shell variable here
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skyrlArithmetic, verlArithmetic, type ArithmeticInputs } from '../../../src/core/training/preflight';
import type { Override } from '../../../src/core/training/overrides';
import type { EngineValue, Recipe } from '../../../src/core/training/recipe';
import { readRecipe } from '../../../src/app/train/recipes';
import { planVerl } from '../../../src/core/training/verlLaunch';
import { planSkyrl } from '../../../src/core/training/skyrlLaunch';
import { protocolStops } from '../../../src/core/training/protocolStops';
import { settingValue } from '../../../src/core/training/recipe';

const recipe = readRecipe('skyrl-sql', process.cwd());

function ov(values: Record<string, EngineValue>): Override[] {
  return Object.entries(values).map(([key, value]) => ({ key, value, from: 'test' }));
}

function inputs(
  engine: 'verl' | 'skyrl',
  values: Record<string, EngineValue>,
  extra: Partial<ArithmeticInputs> = {},
): ArithmeticInputs {
  return {
    engine,
    recipe,
    overrides: ov(values),
    contextLength: 8192,
    contextFrom: 'test',
    rows: null,
    rowsFrom: 'test',
    env: {},
    ...extra,
  };
}

const checks = (findings: { level: string; check: string }[]) =>
  findings.filter((f) => f.level === 'error').map((f) => f.check);

// verl: 4 GPUs, train 12 prompts × n 2 = 24 sequences; mini 6 × 2 = 12 per update = 3 per GPU; micro 3.
const VERL_OK = {
  'trainer.n_gpus_per_node': 4,
  'trainer.nnodes': 1,
  'data.train_batch_size': 12,
  'actor_rollout_ref.rollout.n': 2,
  'actor_rollout_ref.actor.ppo_mini_batch_size': 6,
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 3,
  'actor_rollout_ref.rollout.tensor_model_parallel_size': 2,
  'data.max_prompt_length': 4096,
  'data.max_response_length': 4096,
  // skyrl-sql plays 5-turn episodes: Quarry's agent loop, registered by its config file.
  'actor_rollout_ref.rollout.multi_turn.enable': true,
  'actor_rollout_ref.rollout.multi_turn.max_assistant_turns': 5,
  'actor_rollout_ref.rollout.agent.default_agent_loop': 'quarry_agent',
  'actor_rollout_ref.rollout.agent.agent_loop_config_path': '${QUARRY_TRAINER_DIR}/verl/agent_loop.yaml',
};

test('verl: a launch whose numbers divide passes', () => {
  assert.equal(settingValue<number>(recipe, 'rl.max_turns'), 5);
  assert.deepEqual(checks(verlArithmetic(inputs('verl', VERL_OK))), []);
});

test("verl: a recipe's turns need a multi-turn launch with an agent loop that plays them", () => {
  const without = (...keys: string[]) =>
    Object.fromEntries(Object.entries(VERL_OK).filter(([k]) => !keys.includes(k))) as Record<string, EngineValue>;
  // verl's defaults: multi-turn off and single_turn_agent, one generation per rollout.
  const lost = verlArithmetic(
    inputs(
      'verl',
      without(
        'actor_rollout_ref.rollout.multi_turn.enable',
        'actor_rollout_ref.rollout.multi_turn.max_assistant_turns',
        'actor_rollout_ref.rollout.agent.default_agent_loop',
      ),
    ),
  );
  assert.deepEqual(checks(lost), ['verl.multi-turn']);
  assert.match(
    lost.find((x) => x.check === 'verl.multi-turn')!.message,
    /5-turn episodes .*multi_turn.enable is not true; .*max_assistant_turns is unset, not 5; .*single_turn_agent/,
  );
  const unregistered = verlArithmetic(
    inputs('verl', without('actor_rollout_ref.rollout.agent.agent_loop_config_path')),
  );
  assert.match(unregistered.find((x) => x.check === 'verl.multi-turn')!.message, /quarry_agent is not registered/);
  const fewer = verlArithmetic(
    inputs('verl', { ...VERL_OK, 'actor_rollout_ref.rollout.multi_turn.max_assistant_turns': 2 }),
  );
  assert.match(fewer.find((x) => x.check === 'verl.multi-turn')!.message, /max_assistant_turns is 2, not 5/);
  assert.deepEqual(
    checks(
      verlArithmetic(
        inputs('verl', { ...VERL_OK, 'actor_rollout_ref.rollout.agent.default_agent_loop': 'tool_agent' }),
      ),
    ),
    [],
  );
});

test('verl: train batch × n must divide among the GPUs (validate_config)', () => {
  // 12 × 2 = 24 over 5 GPUs leaves 4.
  const f = verlArithmetic(
    inputs('verl', {
      ...VERL_OK,
      'trainer.n_gpus_per_node': 5,
      'actor_rollout_ref.rollout.tensor_model_parallel_size': 1,
    }),
  );
  assert.ok(checks(f).includes('verl.batch-gpus'));
  assert.match(
    f.find((x) => x.check === 'verl.batch-gpus')!.message,
    /12 × rollout.n 2 = 24 sequences do not divide among 5 GPUs/,
  );
});

test("verl: each GPU's share of an update must be a whole number of micro-batches", () => {
  // mini 6 × n 2 = 12 over 4 GPUs = 3 each; micro 2 does not divide 3.
  const f = verlArithmetic(inputs('verl', { ...VERL_OK, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 2 }));
  assert.deepEqual(checks(f), ['verl.micro-batch']);
  assert.match(f[0].message, /6 × 2 \/ 4 = 3 sequences, not a multiple of actor.ppo_micro_batch_size_per_gpu 2/);
  // With dynamic batching verl packs by tokens: no micro-batch rule.
  assert.deepEqual(
    checks(
      verlArithmetic(
        inputs('verl', {
          ...VERL_OK,
          'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 2,
          'actor_rollout_ref.actor.use_dynamic_bsz': true,
        }),
      ),
    ),
    [],
  );
});

test("verl: an update's sequences must split among the data-parallel ranks; mini-batch at most the train batch", () => {
  // mini 3 × n 2 = 6 over 4 ranks.
  assert.deepEqual(
    checks(verlArithmetic(inputs('verl', { ...VERL_OK, 'actor_rollout_ref.actor.ppo_mini_batch_size': 3 }))),
    ['verl.mini-gpus'],
  );
  assert.deepEqual(
    checks(verlArithmetic(inputs('verl', { ...VERL_OK, 'actor_rollout_ref.actor.ppo_mini_batch_size': 24 }))),
    ['verl.mini-batch'],
  );
  // 12 is not a multiple of 8: a warning (verl's last update is smaller), and 8 × 2 = 16 splits over 4 GPUs.
  const f = verlArithmetic(
    inputs('verl', {
      ...VERL_OK,
      'actor_rollout_ref.actor.ppo_mini_batch_size': 8,
      'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 4,
    }),
  );
  assert.deepEqual(checks(f), []);
  assert.match(f.find((x) => x.check === 'verl.mini-batch')!.message, /last update uses 4 prompts instead of 8/);
});

test('verl: rollout tensor parallelism must divide the GPUs; prompt + response must fit the context', () => {
  assert.deepEqual(
    checks(verlArithmetic(inputs('verl', { ...VERL_OK, 'actor_rollout_ref.rollout.tensor_model_parallel_size': 3 }))),
    ['verl.tensor-parallel'],
  );
  const f = verlArithmetic(inputs('verl', { ...VERL_OK, 'data.max_response_length': 4097 }));
  assert.deepEqual(checks(f), ['context']);
  assert.match(
    f[0].message,
    /4096 \+ data.max_response_length 4097 = 8193 tokens are more than the model's context of 8192/,
  );
});

// SkyRL: 4 GPUs, train 8 × n 2 = 16 → 4 per GPU; mini 4 × 2 = 8 → 2 per GPU; micro 2; 2 engines × TP 2 = 4 GPUs.
const SKYRL_OK = {
  'trainer.train_batch_size': 8,
  'trainer.policy_mini_batch_size': 4,
  'trainer.micro_train_batch_size_per_gpu': 2,
  'generator.n_samples_per_prompt': 2,
  'trainer.placement.policy_num_gpus_per_node': 4,
  'trainer.placement.policy_num_nodes': 1,
  'generator.num_inference_engines': 2,
  'generator.inference_engine_tensor_parallel_size': 2,
  'generator.max_turns': 3,
  'trainer.max_prompt_length': 1000,
  'generator.max_input_length': 6000,
  'generator.sampling_params.max_generate_length': 2000,
  'trainer.algorithm.use_kl_loss': false,
  'trainer.logger': 'console',
  'generator.sampling_params.stop': ['</sql>'],
};

test('skyrl: a launch whose numbers divide passes', () => {
  assert.deepEqual(checks(skyrlArithmetic(inputs('skyrl', SKYRL_OK))), []);
});

test('skyrl: train batch a multiple of the mini-batch; per-GPU shares a multiple of the micro-batch', () => {
  // 8 prompts are not a multiple of 3 (3 × 2 / 4 GPUs = 1 each, micro 1).
  assert.deepEqual(
    checks(
      skyrlArithmetic(
        inputs('skyrl', {
          ...SKYRL_OK,
          'trainer.policy_mini_batch_size': 3,
          'trainer.micro_train_batch_size_per_gpu': 1,
        }),
      ),
    ),
    ['skyrl.mini-batch'],
  );
  // train 20, mini 10, n 1, 4 GPUs: 2 per GPU per update (10 / 4 rounded down), 5 per GPU per step: 5 is not 2k.
  assert.deepEqual(
    checks(
      skyrlArithmetic(
        inputs('skyrl', {
          ...SKYRL_OK,
          'trainer.train_batch_size': 20,
          'trainer.policy_mini_batch_size': 10,
          'generator.n_samples_per_prompt': 1,
        }),
      ),
    ),
    ['skyrl.train-gpus'],
  );
  // mini 4 × 2 / 4 GPUs = 2 per GPU, micro 4.
  const f = skyrlArithmetic(inputs('skyrl', { ...SKYRL_OK, 'trainer.micro_train_batch_size_per_gpu': 4 }));
  assert.deepEqual(checks(f), ['skyrl.micro-batch']);
  assert.match(
    f[0].message,
    /every GPU 2 sequences \(4 × 2 \/ 4\), not a multiple of trainer.micro_train_batch_size_per_gpu 4/,
  );
  // mini 1 × 2 = 2 sequences for 4 GPUs: none each.
  assert.deepEqual(checks(skyrlArithmetic(inputs('skyrl', { ...SKYRL_OK, 'trainer.policy_mini_batch_size': 1 }))), [
    'skyrl.mini-gpus',
  ]);
});

test("skyrl: colocated engines fill the policy's GPUs; input lengths; SGLang with stop strings; KL; context", () => {
  assert.deepEqual(checks(skyrlArithmetic(inputs('skyrl', { ...SKYRL_OK, 'generator.num_inference_engines': 1 }))), [
    'skyrl.placement',
  ]);
  assert.deepEqual(checks(skyrlArithmetic(inputs('skyrl', { ...SKYRL_OK, 'generator.max_input_length': 900 }))), [
    'skyrl.input-length',
  ]);
  assert.deepEqual(
    checks(
      skyrlArithmetic(
        inputs('skyrl', {
          ...SKYRL_OK,
          'generator.backend': 'sglang',
          'generator.num_inference_engines': 4,
          'generator.inference_engine_tensor_parallel_size': 1,
        }),
      ),
    ),
    ['skyrl.sglang-stop'],
  );
  assert.deepEqual(
    checks(
      skyrlArithmetic(
        inputs('skyrl', {
          ...SKYRL_OK,
          'trainer.algorithm.use_kl_loss': true,
          'trainer.algorithm.use_kl_in_reward': true,
        }),
      ),
    ),
    ['skyrl.kl'],
  );
  // 6000 + 2000 fits 8192; 6500 + 2000 does not.
  assert.deepEqual(checks(skyrlArithmetic(inputs('skyrl', { ...SKYRL_OK, 'generator.max_input_length': 6500 }))), [
    'context',
  ]);
});

test('fewer rows than one batch: no step would run', () => {
  const f = verlArithmetic(inputs('verl', VERL_OK, { rows: 11, rowsFrom: 'data.json' }));
  assert.deepEqual(checks(f), ['data.rows']);
  assert.match(f[0].message, /11 training rows \(data.json\) are fewer than one batch of 12 prompts/);
});

test("every built-in recipe's own launch passes the arithmetic on both engines", () => {
  for (const name of ['skyrl-sql', 'sql-trail', 'mtir-sql', 'mtsql-r1', 'progress-sql']) {
    const r: Recipe = readRecipe(name, process.cwd());
    const launch = {
      recipe: r,
      model: 'm',
      trainFile: '/d/train.parquet',
      valFile: null,
      outDir: '/o',
      rows: settingValue<number>(r, 'data.train_size') ?? null,
      rowsFrom: 'the paper',
      stops: protocolStops(r.protocol),
    };
    for (const plan of [planVerl(launch), planSkyrl(launch)]) {
      const f = (plan.engine === 'verl' ? verlArithmetic : skyrlArithmetic)({
        engine: plan.engine,
        recipe: r,
        overrides: plan.overrides,
        contextLength: settingValue<number>(r, 'model.context_length')!,
        contextFrom: 'recipe',
        rows: launch.rows,
        rowsFrom: 'the paper',
        env: {},
      });
      assert.deepEqual(
        f.filter((x) => x.level === 'error'),
        [],
        `${name} on ${plan.engine}`,
      );
    }
  }
});
