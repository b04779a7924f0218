// TRL's launch: `python -m quarry_trainer.train.grpo key=value …` — TRL 1.16's GRPOTrainer with Quarry's multi-turn
// rollout on `quarry serve-env` (trainer/quarry_trainer/train/grpo.py). TRL_MAPPING is the mapping table: each recipe
// key, the GRPOConfig field it becomes (trl/trainer/grpo_config.py, or transformers/training_args.py for the
// TrainingArguments fields GRPOConfig extends) and how. `quarry.*` keys are Quarry's own (the rollout, the filters);
// grpo.py's docstring lists them. TRL trains on this machine as one process: batch sizes are for one device.
import type { EngineValue } from './recipe';
import {
  copy,
  get,
  overridesFrom,
  type EnginePlan,
  type LaunchInputs,
  type MappingRow,
  type NotCarried,
} from './launchPlan';
import { overrideValue } from './overrides';

const TRL_MODULE = 'quarry_trainer.train.grpo';
/** The config class TRL's launch constructs (trl/trainer/grpo_config.py). */
export const TRL_CONFIG = 'trl/trainer/grpo_config.py GRPOConfig';

const G = 'trl/trainer/grpo_config.py';
const T = 'transformers/training_args.py';
const Q = 'quarry_trainer/train/grpo.py';

/** verl's loss aggregation names → TRL's loss_type (grpo_config.py, `loss_type` help; core_algos.agg_loss in verl). */
const LOSS_TYPES: Record<string, string> = {
  // the mean over every loss token of the batch: TRL's "dapo" (normalised by active tokens in the global batch)
  'token-mean': 'dapo',
  // each sequence's token mean, then the mean over sequences: TRL's "grpo"
  'seq-mean-token-mean': 'grpo',
  // token sums over a constant (the response budget): TRL's "dr_grpo" (max_completion_length)
  'seq-mean-token-sum-norm': 'dr_grpo',
};

/** Per-device batch, gradient accumulation and generation steps for the recipe's batch sizes on one device. */
function trlBatches(
  train: number,
  mini: number,
  micro: number,
  group: number,
): { perDevice: number; accumulation: number; stepsPerGeneration: number } {
  // GRPOConfig counts completions: generation_batch_size = per_device_train_batch_size × processes ×
  // steps_per_generation; one optimiser step takes per_device × gradient_accumulation_steps completions.
  return {
    perDevice: micro,
    accumulation: Math.max(1, Math.round((mini * group) / micro)),
    stepsPerGeneration: Math.max(1, Math.round((train * group) / micro)),
  };
}

function batches(i: LaunchInputs): Array<[string, EngineValue]> | null {
  const group = get<number>(i, 'rl.group_size');
  const train = get<number>(i, 'rl.train_batch_size');
  if (group === undefined || train === undefined) return null;
  const mini = get<number>(i, 'rl.mini_batch_size') ?? train;
  const micro = get<number>(i, 'rl.micro_batch_size_per_gpu') ?? 1;
  const b = trlBatches(train, mini, micro, group);
  return [
    ['per_device_train_batch_size', b.perDevice],
    ['gradient_accumulation_steps', b.accumulation],
    ['steps_per_generation', b.stepsPerGeneration],
  ];
}

export const TRL_MAPPING: readonly MappingRow[] = [
  { recipe: ['rl.group_size'], engine: ['num_generations'], file: G, build: copy('rl.group_size', 'num_generations') },
  { recipe: ['rl.lr'], engine: ['learning_rate'], file: G, build: copy('rl.lr', 'learning_rate') },
  { recipe: ['rl.temperature'], engine: ['temperature'], file: G, build: copy('rl.temperature', 'temperature') },
  { recipe: ['rl.top_p'], engine: ['top_p'], file: G, build: copy('rl.top_p', 'top_p') },
  {
    recipe: ['rl.train_batch_size', 'rl.mini_batch_size', 'rl.micro_batch_size_per_gpu', 'rl.group_size'],
    engine: ['per_device_train_batch_size', 'gradient_accumulation_steps', 'steps_per_generation'],
    file: `${G}, ${T}`,
    how:
      'completions, not prompts: micro-batch per pass, mini-batch × G / micro passes per optimiser step, ' +
      'train batch × G / micro passes per generation (one process)',
    build: batches,
  },
  { recipe: ['rl.clip_low'], engine: ['epsilon'], file: G, build: copy('rl.clip_low', 'epsilon') },
  {
    recipe: ['rl.clip_high'],
    engine: ['epsilon_high'],
    file: G,
    how: 'clip-higher (DAPO): the upper bound apart from the lower',
    build: copy('rl.clip_high', 'epsilon_high'),
  },
  {
    recipe: ['rl.kl_loss', 'rl.kl_coef'],
    engine: ['beta'],
    file: G,
    how: 'the KL loss coefficient; 0.0 when rl.kl_loss is false (TRL then loads no reference model)',
    build: (i) => {
      const on = get<boolean>(i, 'rl.kl_loss');
      const coef = get<number>(i, 'rl.kl_coef');
      if (on === undefined && coef === undefined) return null;
      return [['beta', on === false ? 0 : (coef ?? 0)]];
    },
  },
  {
    recipe: ['rl.loss_agg_mode'],
    engine: ['loss_type'],
    file: G,
    how: 'token-mean → dapo, seq-mean-token-mean → grpo, seq-mean-token-sum-norm → dr_grpo',
    build: (i) => {
      const mode = get<string>(i, 'rl.loss_agg_mode');
      return mode !== undefined && LOSS_TYPES[mode] ? [['loss_type', LOSS_TYPES[mode]]] : null;
    },
  },
  {
    recipe: ['rl.importance_sampling'],
    engine: ['importance_sampling_level'],
    file: G,
    how: "GSPO's sequence-level ratio when `sequence`",
    build: copy('rl.importance_sampling', 'importance_sampling_level'),
  },
  { recipe: ['rl.entropy_coef'], engine: ['entropy_coef'], file: G, build: copy('rl.entropy_coef', 'entropy_coef') },
  { recipe: ['rl.grad_clip'], engine: ['max_grad_norm'], file: T, build: copy('rl.grad_clip', 'max_grad_norm') },
  {
    recipe: ['rl.max_response_length'],
    engine: ['max_completion_length'],
    file: G,
    how: 'every turn and observation after the prompt',
    build: copy('rl.max_response_length', 'max_completion_length'),
  },
  { recipe: ['rl.total_steps'], engine: ['max_steps'], file: T, build: copy('rl.total_steps', 'max_steps') },
  { recipe: ['rl.epochs'], engine: ['num_train_epochs'], file: T, build: copy('rl.epochs', 'num_train_epochs') },
  { recipe: ['rl.save_freq'], engine: ['save_steps'], file: T, build: copy('rl.save_freq', 'save_steps') },
  { recipe: ['data.shuffle'], engine: ['shuffle_dataset'], file: G, build: copy('data.shuffle', 'shuffle_dataset') },
  {
    recipe: ['rl.max_turns'],
    engine: ['quarry.max_turns'],
    file: Q,
    build: copy('rl.max_turns', 'quarry.max_turns'),
  },
  {
    recipe: ['rl.max_turn_tokens'],
    engine: ['quarry.max_turn_tokens'],
    file: Q,
    how: 'new tokens per turn (Hugging Face generate, stopped at the protocol’s stop strings)',
    build: copy('rl.max_turn_tokens', 'quarry.max_turn_tokens'),
  },
  {
    recipe: ['rl.filter'],
    engine: ['quarry.filter'],
    file: Q,
    how: "a filter naming GRPO-Filter → mtir (filters.py: Quarry's reading of MTIR-SQL eq. 3)",
    build: (i) => {
      const f = get<string>(i, 'rl.filter');
      return f === undefined ? null : [['quarry.filter', /grpo-filter|mtir/i.test(f) ? 'mtir' : 'none']];
    },
  },
  {
    recipe: ['data.curriculum_bin_size'],
    engine: ['quarry.curriculum'],
    file: Q,
    how: "rows in the data's curriculum order (extra_info.curriculum_level), not shuffled",
    build: (i) => (get(i, 'data.curriculum_bin_size') === undefined ? null : [['quarry.curriculum', true]]),
  },
  { recipe: ['reward.panel'], engine: ['quarry.panel'], file: Q, build: copy('reward.panel', 'quarry.panel') },
  {
    recipe: [],
    engine: ['quarry.model', 'quarry.train_file', 'output_dir', 'logging_steps', 'report_to'],
    file: `${Q}, ${T}`,
    how: '--model; --data DIR/train.jsonl; checkpoint-N, metrics.jsonl and final/ under --out; every step logged',
    build: (i) => [
      ['quarry.model', i.model],
      ['quarry.train_file', i.trainFile.replace(/\.parquet$/, '.jsonl')],
      ['output_dir', i.outDir],
      ['logging_steps', 1],
      ['report_to', 'none'],
    ],
  },
];

/** The TRL launch for these inputs: its arguments, what TRL cannot take here, and notes. */
export function planTrl(inputs: LaunchInputs): EnginePlan {
  const overrides = overridesFrom(TRL_MAPPING, 'trl', inputs);
  const notCarried: NotCarried[] = [];
  const notes: string[] = [];
  const mode = get<string>(inputs, 'rl.loss_agg_mode');
  if (mode !== undefined && !LOSS_TYPES[mode]) {
    notCarried.push({ key: 'rl.loss_agg_mode', why: `TRL has no loss_type for verl's '${mode}'` });
  }
  if (get(inputs, 'rl.kl_in_reward') === true) {
    notCarried.push({ key: 'rl.kl_in_reward', why: 'TRL puts KL in the loss (beta), never in the reward' });
  }
  for (const key of ['rl.rollout_engine', 'rl.tensor_parallel'] as const) {
    if (get(inputs, key) !== undefined) {
      notCarried.push({
        key,
        why: "Quarry's TRL rollout generates with the policy itself (transformers generate), not an inference engine",
      });
    }
  }
  if (get(inputs, 'rl.max_prompt_length') !== undefined) {
    notCarried.push({ key: 'rl.max_prompt_length', why: 'GRPOConfig has no prompt bound; long prompts are kept' });
  }
  if (get(inputs, 'rl.test_freq') !== undefined || get(inputs, 'rl.val_before_train') !== undefined) {
    notCarried.push({
      key: 'rl.test_freq',
      why: 'no validation during TRL runs: evaluate checkpoints with quarry bench',
    });
  }
  const gpus = (get<number>(inputs, 'hardware.gpus_per_node') ?? 1) * (get<number>(inputs, 'hardware.nodes') ?? 1);
  if (gpus > 1) {
    notes.push(
      `the recipe trained on ${gpus} GPUs; TRL here is one process, so each optimiser step runs the whole batch ` +
        'through gradient accumulation (same batch, more time)',
    );
  }
  const accumulation = overrideValue(overrides, 'gradient_accumulation_steps');
  const perGeneration = overrideValue(overrides, 'steps_per_generation');
  if (typeof accumulation === 'number' && typeof perGeneration === 'number' && perGeneration > accumulation) {
    notes.push(
      `each generation batch feeds ${perGeneration / accumulation} optimiser steps (mini-batch updates, as ` +
        'ppo_mini_batch_size does in verl)',
    );
  }
  return { engine: 'trl', module: TRL_MODULE, overrides, notCarried, notes };
}
