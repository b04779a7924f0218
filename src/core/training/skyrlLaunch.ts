// SkyRL's launch: skyrl-train's PPO entry point run through `python3 -m quarry_trainer.skyrl.main` (it registers
// Quarry's environment `quarry-text2sql` in the process that builds the generator, then runs skyrl_train's own
// BasePPOExp), with Hydra overrides built from a recipe. SKYRL_MAPPING is the mapping table: each recipe key, the
// SkyRL keys it becomes and the file of skyrl-train 0.3.1's config folder (skyrl_train/config/) that declares them.
import type { EngineValue } from './recipe';
import {
  copy,
  get,
  overridesFrom,
  validation,
  stepsPerEpoch,
  type EnginePlan,
  type LaunchInputs,
  type MappingRow,
  type NotCarried,
} from './launchPlan';

const SKYRL_MODULE = 'quarry_trainer.skyrl.main';
export const SKYRL_CONFIG = 'skyrl_train/config/ppo_base_config.yaml';
/** The environment id `quarry_trainer.skyrl.register()` registers with skyrl-gym. */
const SKYRL_ENV_ID = 'quarry-text2sql';

const BASE = 'skyrl_train/config/ppo_base_config.yaml';
const GYM = 'skyrl_train/config/skyrl_gym_config/default.yaml';

/** verl's loss_agg_mode names (the recipe's vocabulary) as SkyRL's loss_reduction; null where SkyRL has none. */
const LOSS_REDUCTION: Readonly<Record<string, string | null>> = {
  'token-mean': 'token_mean',
  'seq-mean-token-mean': 'sequence_mean',
  'seq-mean-token-sum-norm': 'seq_mean_token_sum_norm',
  'seq-mean-token-sum': null,
};
/** verl's KL estimator names as SkyRL's kl_estimator_type (k1 = kl, k2 = mse, k3 = low_var_kl). */
const KL_ESTIMATOR: Readonly<Record<string, string>> = { kl: 'k1', mse: 'k2', low_var_kl: 'k3', abs: 'abs' };

/** SkyRL counts only epochs: enough of them to reach the recipe's steps (⌊rows / batch⌋ steps each). */
function epochs(i: LaunchInputs): Array<[string, EngineValue]> | null {
  const steps = get<number>(i, 'rl.total_steps');
  const epochsSet = get<number>(i, 'rl.epochs');
  const perEpoch = stepsPerEpoch(i.rows, get<number>(i, 'rl.train_batch_size') ?? 1);
  if (steps !== undefined && perEpoch !== null && perEpoch > 0)
    return [['trainer.epochs', Math.ceil(steps / perEpoch)]];
  return epochsSet === undefined ? null : [['trainer.epochs', epochsSet]];
}

function gpus(i: LaunchInputs): number {
  return (get<number>(i, 'hardware.gpus_per_node') ?? 1) * (get<number>(i, 'hardware.nodes') ?? 1);
}

export const SKYRL_MAPPING: readonly MappingRow[] = [
  {
    recipe: ['rl.algorithm'],
    engine: ['trainer.algorithm.advantage_estimator'],
    file: BASE,
    build: copy('rl.algorithm', 'trainer.algorithm.advantage_estimator'),
  },
  {
    recipe: ['rl.group_size'],
    engine: ['generator.n_samples_per_prompt'],
    file: BASE,
    build: copy('rl.group_size', 'generator.n_samples_per_prompt'),
  },
  {
    recipe: ['rl.temperature'],
    engine: ['generator.sampling_params.temperature'],
    file: BASE,
    build: copy('rl.temperature', 'generator.sampling_params.temperature'),
  },
  {
    recipe: ['rl.top_p'],
    engine: ['generator.sampling_params.top_p'],
    file: BASE,
    build: copy('rl.top_p', 'generator.sampling_params.top_p'),
  },
  {
    recipe: ['rl.lr'],
    engine: ['trainer.policy.optimizer_config.lr'],
    file: BASE,
    build: copy('rl.lr', 'trainer.policy.optimizer_config.lr'),
  },
  {
    recipe: ['rl.train_batch_size'],
    engine: ['trainer.train_batch_size'],
    file: BASE,
    how: 'prompts per step',
    build: copy('rl.train_batch_size', 'trainer.train_batch_size'),
  },
  {
    recipe: ['rl.mini_batch_size'],
    engine: ['trainer.policy_mini_batch_size'],
    file: BASE,
    how: 'prompts per update (SkyRL multiplies by n_samples_per_prompt)',
    build: copy('rl.mini_batch_size', 'trainer.policy_mini_batch_size'),
  },
  {
    recipe: ['rl.micro_batch_size_per_gpu'],
    engine: ['trainer.micro_train_batch_size_per_gpu', 'trainer.micro_forward_batch_size_per_gpu'],
    file: BASE,
    how: 'the same number for forward-only passes',
    build: (i) => {
      const v = get<number>(i, 'rl.micro_batch_size_per_gpu');
      return v === undefined
        ? null
        : [
            ['trainer.micro_train_batch_size_per_gpu', v],
            ['trainer.micro_forward_batch_size_per_gpu', v],
          ];
    },
  },
  {
    recipe: ['rl.clip_low'],
    engine: ['trainer.algorithm.eps_clip_low'],
    file: BASE,
    build: copy('rl.clip_low', 'trainer.algorithm.eps_clip_low'),
  },
  {
    recipe: ['rl.clip_high'],
    engine: ['trainer.algorithm.eps_clip_high'],
    file: BASE,
    build: copy('rl.clip_high', 'trainer.algorithm.eps_clip_high'),
  },
  {
    recipe: ['rl.kl_loss'],
    engine: ['trainer.algorithm.use_kl_loss'],
    file: BASE,
    build: copy('rl.kl_loss', 'trainer.algorithm.use_kl_loss'),
  },
  {
    recipe: ['rl.kl_coef'],
    engine: ['trainer.algorithm.kl_loss_coef'],
    file: BASE,
    build: copy('rl.kl_coef', 'trainer.algorithm.kl_loss_coef'),
  },
  {
    recipe: ['rl.kl_type'],
    engine: ['trainer.algorithm.kl_estimator_type'],
    file: BASE,
    how: 'kl → k1, mse → k2, low_var_kl → k3, abs → abs',
    build: (i) => {
      const v = get<string>(i, 'rl.kl_type');
      return v === undefined ? null : [['trainer.algorithm.kl_estimator_type', KL_ESTIMATOR[v] ?? v]];
    },
  },
  {
    recipe: ['rl.kl_in_reward'],
    engine: ['trainer.algorithm.use_kl_in_reward'],
    file: BASE,
    build: copy('rl.kl_in_reward', 'trainer.algorithm.use_kl_in_reward'),
  },
  {
    recipe: ['rl.entropy_coef'],
    engine: ['trainer.algorithm.use_entropy_loss', 'trainer.algorithm.entropy_loss_coef'],
    file: BASE,
    how: 'use_entropy_loss = coefficient > 0',
    build: (i) => {
      const v = get<number>(i, 'rl.entropy_coef');
      return v === undefined
        ? null
        : [
            ['trainer.algorithm.use_entropy_loss', v > 0],
            ['trainer.algorithm.entropy_loss_coef', v],
          ];
    },
  },
  {
    recipe: ['rl.loss_agg_mode'],
    engine: ['trainer.algorithm.loss_reduction'],
    file: BASE,
    how:
      'token-mean → token_mean, seq-mean-token-mean → sequence_mean, seq-mean-token-sum-norm → ' +
      'seq_mean_token_sum_norm',
    build: (i) => {
      const v = get<string>(i, 'rl.loss_agg_mode');
      const r = v === undefined ? undefined : LOSS_REDUCTION[v];
      return r ? [['trainer.algorithm.loss_reduction', r]] : null;
    },
  },
  {
    recipe: ['rl.grad_clip'],
    engine: ['trainer.policy.optimizer_config.max_grad_norm'],
    file: BASE,
    build: copy('rl.grad_clip', 'trainer.policy.optimizer_config.max_grad_norm'),
  },
  {
    recipe: ['rl.max_prompt_length'],
    engine: ['trainer.max_prompt_length'],
    file: BASE,
    build: copy('rl.max_prompt_length', 'trainer.max_prompt_length'),
  },
  {
    recipe: ['rl.max_prompt_length', 'rl.max_response_length'],
    engine: ['generator.max_input_length'],
    file: BASE,
    how: 'prompt + response: the conversation SkyRL keeps generating into',
    build: (i) => {
      const p = get<number>(i, 'rl.max_prompt_length');
      const r = get<number>(i, 'rl.max_response_length');
      return p === undefined || r === undefined ? null : [['generator.max_input_length', p + r]];
    },
  },
  {
    recipe: ['rl.max_turn_tokens'],
    engine: ['generator.sampling_params.max_generate_length'],
    file: BASE,
    how: 'per turn (eval_sampling_params follows it)',
    build: copy('rl.max_turn_tokens', 'generator.sampling_params.max_generate_length'),
  },
  {
    recipe: ['rl.max_turns'],
    engine: ['generator.max_turns'],
    file: BASE,
    build: copy('rl.max_turns', 'generator.max_turns'),
  },
  {
    recipe: ['rl.total_steps', 'rl.epochs'],
    engine: ['trainer.epochs'],
    file: BASE,
    how: 'with steps: ⌈steps / ⌊rows / train batch⌋⌉ epochs (SkyRL has no step limit)',
    build: epochs,
  },
  {
    recipe: ['rl.rollout_engine'],
    engine: ['generator.backend'],
    file: BASE,
    build: copy('rl.rollout_engine', 'generator.backend'),
  },
  {
    recipe: ['rl.tensor_parallel', 'hardware.gpus_per_node', 'hardware.nodes'],
    engine: ['generator.inference_engine_tensor_parallel_size', 'generator.num_inference_engines'],
    file: BASE,
    how: 'engines = GPUs / tensor parallel (colocate_all: every GPU trains and generates)',
    build: (i) => {
      const tp = get<number>(i, 'rl.tensor_parallel');
      return tp === undefined
        ? null
        : [
            ['generator.inference_engine_tensor_parallel_size', tp],
            ['generator.num_inference_engines', Math.max(1, Math.floor(gpus(i) / tp))],
          ];
    },
  },
  {
    recipe: ['hardware.gpus_per_node'],
    engine: ['trainer.placement.policy_num_gpus_per_node', 'trainer.placement.ref_num_gpus_per_node'],
    file: BASE,
    build: (i) => {
      const v = get<number>(i, 'hardware.gpus_per_node');
      return v === undefined
        ? null
        : [
            ['trainer.placement.policy_num_gpus_per_node', v],
            ['trainer.placement.ref_num_gpus_per_node', v],
          ];
    },
  },
  {
    recipe: ['hardware.nodes'],
    engine: ['trainer.placement.policy_num_nodes', 'trainer.placement.ref_num_nodes'],
    file: BASE,
    build: (i) => {
      const v = get<number>(i, 'hardware.nodes');
      return v === undefined
        ? null
        : [
            ['trainer.placement.policy_num_nodes', v],
            ['trainer.placement.ref_num_nodes', v],
          ];
    },
  },
  {
    recipe: ['rl.save_freq'],
    engine: ['trainer.ckpt_interval', 'trainer.hf_save_interval'],
    file: BASE,
    how: 'Hugging Face exports at the same interval',
    build: (i) => {
      const v = get<number>(i, 'rl.save_freq');
      return v === undefined
        ? null
        : [
            ['trainer.ckpt_interval', v],
            ['trainer.hf_save_interval', v],
          ];
    },
  },
  {
    recipe: ['rl.test_freq', 'rl.val_before_train'],
    engine: ['trainer.eval_interval', 'trainer.eval_before_train'],
    file: BASE,
    how: 'evaluation off (-1, false) when the data folder has no held-out file',
    build: validation('trainer.eval_interval', 'trainer.eval_before_train'),
  },
  {
    recipe: ['reward.panel'],
    engine: [`environment.skyrl_gym.${SKYRL_ENV_ID}.panel`],
    file: GYM,
    how: "the environment's option (env_config.panel): the service scores each finished episode with it",
    add: [`environment.skyrl_gym.${SKYRL_ENV_ID}.panel`],
    build: (i) => {
      const panel = get<string>(i, 'reward.panel');
      return panel ? [[`environment.skyrl_gym.${SKYRL_ENV_ID}.panel`, panel]] : null;
    },
  },
  {
    recipe: [],
    engine: ['environment.env_class'],
    file: BASE,
    how: "Quarry's skyrl-gym environment",
    build: () => [['environment.env_class', SKYRL_ENV_ID]],
  },
  {
    recipe: [],
    engine: ['trainer.policy.model.path'],
    file: BASE,
    how: '--model',
    build: (i) => [['trainer.policy.model.path', i.model]],
  },
  {
    recipe: [],
    engine: ['data.train_data', 'data.val_data'],
    file: BASE,
    how: '--data DIR: train.parquet; val.parquet or test.parquet beside it, else train.parquet with evaluation off',
    build: (i) => [
      ['data.train_data', [i.trainFile]],
      ['data.val_data', [i.valFile ?? i.trainFile]],
    ],
  },
  {
    recipe: [],
    engine: [
      'generator.sampling_params.stop',
      'generator.eval_sampling_params.stop',
      'generator.use_conversation_multi_turn',
    ],
    file: BASE,
    how: "the protocol's stop strings (the service restores the one a turn ended on); observations as user messages",
    build: (i) => {
      const stop: EngineValue = i.stops.length > 0 ? i.stops : null;
      return [
        ['generator.sampling_params.stop', stop],
        ['generator.eval_sampling_params.stop', stop],
        ['generator.use_conversation_multi_turn', true],
      ];
    },
  },
  {
    recipe: [],
    engine: ['trainer.logger', 'trainer.project_name', 'trainer.run_name', 'trainer.ckpt_path', 'trainer.export_path'],
    file: BASE,
    how: 'console logging (no wandb key needed); checkpoints and exports under --out',
    build: (i) => [
      ['trainer.logger', 'console'],
      ['trainer.project_name', 'quarry'],
      ['trainer.run_name', i.recipe.name],
      ['trainer.ckpt_path', `${i.outDir}/ckpts`],
      ['trainer.export_path', `${i.outDir}/exports`],
    ],
  },
];

/** The SkyRL launch for these inputs: its overrides, what SkyRL cannot take, and notes. */
export function planSkyrl(inputs: LaunchInputs): EnginePlan {
  const overrides = overridesFrom(SKYRL_MAPPING, 'skyrl', inputs);
  const notCarried: NotCarried[] = [];
  const notes: string[] = [];
  if (get<boolean>(inputs, 'data.shuffle') === false) {
    notCarried.push({
      key: 'data.shuffle',
      why:
        'SkyRL always shuffles its training rows (skyrl_train/utils/' +
        "trainer_utils.py build_dataloader, shuffle=True): a curriculum's order is lost; train each level as its own " +
        "run (its rows in their own --data folder, --model the previous run's checkpoint)",
    });
  }
  const mode = get<string>(inputs, 'rl.loss_agg_mode');
  if (mode !== undefined && LOSS_REDUCTION[mode] === null) {
    notCarried.push({
      key: 'rl.loss_agg_mode',
      why:
        `SkyRL has no '${mode}' reduction (token_mean, sequence_mean, ` +
        'seq_mean_token_sum_norm): its default token_mean stays',
    });
  }
  if (get(inputs, 'rl.importance_sampling') === 'sequence') {
    notCarried.push({ key: 'rl.importance_sampling', why: 'sequence-level ratios (GSPO) are carried for TRL only' });
  }
  if (get(inputs, 'rl.filter') !== undefined) {
    notCarried.push({
      key: 'rl.filter',
      why: "the paper's rollout filter has no SkyRL setting here (its criterion is " + 'not published)',
    });
  }
  const steps = get<number>(inputs, 'rl.total_steps');
  const batch = get<number>(inputs, 'rl.train_batch_size') ?? 1;
  const perEpoch = stepsPerEpoch(inputs.rows, batch);
  if (steps !== undefined && perEpoch !== null && perEpoch > 0) {
    const e = Math.ceil(steps / perEpoch);
    notes.push(
      `${steps} steps: ${inputs.rows} rows (${inputs.rowsFrom}) make ${perEpoch} batches of ${batch} per ` +
        `epoch (SkyRL drops the last partial batch); SkyRL counts epochs only, so trainer.epochs=${e}: ` +
        `${e * perEpoch} steps${e * perEpoch === steps ? '' : `, ${e * perEpoch - steps} more than the paper's`}`,
    );
  } else if (steps !== undefined) {
    notCarried.push({
      key: 'rl.total_steps',
      why:
        'SkyRL counts epochs only and the number of rows is unknown ' +
        '(no data.json and no data.train_size): set rl.epochs',
    });
  }
  if (inputs.valFile === null) {
    notes.push(
      'no held-out file beside train.parquet (val.parquet or test.parquet): evaluation is off and ' +
        'data.val_data is train.parquet',
    );
  }
  return { engine: 'skyrl', module: SKYRL_MODULE, overrides, notCarried, notes };
}
