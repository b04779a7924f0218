// verl's launch: `python3 -m verl.trainer.main_ppo` with Hydra overrides built from a recipe. VERL_MAPPING is the
// mapping table — each recipe key, the verl keys it becomes and the file of verl 0.9.1's config folder
// (verl/trainer/config/) that declares them. Quarry's plug-ins come from "Using Quarry's environment" in
// docs/training.md: the reward function quarry_trainer/verl/reward.py, the agent loop quarry_agent
// (quarry_trainer/verl/agent_loop.py, registered by agent_loop.yaml) that plays every rollout as a `quarry serve-env`
// episode, and, for tool-calling protocols, verl's tool agent loop with the tool config
// quarry_trainer/verl/tool_config.yaml; all found through ${QUARRY_TRAINER_DIR}, which the launch script sets.
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
import { overrideValue, shellVar } from './overrides';

const VERL_MODULE = 'verl.trainer.main_ppo';
/** The config verl's entry point composes (its Hydra config folder, inside the verl package). */
export const VERL_CONFIG = 'verl/trainer/config/ppo_trainer.yaml';
/** Protocols whose actions are hermes `<tool_call>` blocks for the tool Quarry's verl tool config declares. */
export const VERL_TOOL_PROTOCOLS: readonly string[] = ['mtir'];
/** Quarry's agent loop (quarry_trainer/verl/agent_loop.yaml's name): the other protocols' episodes on serve-env. */
const VERL_AGENT_LOOP = 'quarry_agent';
/** The agent loop a protocol's rollouts run in: verl's tool loop for the tool protocols, else Quarry's. */
function verlAgentLoop(protocol: string): string {
  return VERL_TOOL_PROTOCOLS.includes(protocol) ? 'tool_agent' : VERL_AGENT_LOOP;
}

const C = 'verl/trainer/config/';
/** quarry_trainer's folder on the training host; the launch script sets it. */
const TRAINER_DIR = shellVar('QUARRY_TRAINER_DIR');

/** verl's total_training_steps and total_epochs for the recipe's steps or epochs. */
function schedule(i: LaunchInputs): Array<[string, EngineValue]> {
  const steps = get<number>(i, 'rl.total_steps');
  const epochs = get<number>(i, 'rl.epochs');
  const batch = get<number>(i, 'rl.train_batch_size') ?? 1;
  if (steps === undefined) return epochs === undefined ? [] : [['trainer.total_epochs', epochs]];
  const perEpoch = stepsPerEpoch(i.rows, batch);
  // verl runs while epoch < total_epochs and step <= total_training_steps: enough epochs to reach the steps.
  const need = perEpoch && perEpoch > 0 ? Math.ceil(steps / perEpoch) : undefined;
  return [
    ['trainer.total_training_steps', steps],
    ...(need !== undefined
      ? [['trainer.total_epochs', need] as [string, EngineValue]]
      : epochs !== undefined
        ? [['trainer.total_epochs', epochs] as [string, EngineValue]]
        : []),
  ];
}

export const VERL_MAPPING: readonly MappingRow[] = [
  {
    recipe: ['rl.algorithm'],
    engine: ['algorithm.adv_estimator'],
    file: `${C}ppo_trainer.yaml`,
    build: copy('rl.algorithm', 'algorithm.adv_estimator'),
  },
  {
    recipe: ['rl.group_size'],
    engine: ['actor_rollout_ref.rollout.n'],
    file: `${C}rollout/rollout.yaml`,
    build: copy('rl.group_size', 'actor_rollout_ref.rollout.n'),
  },
  {
    recipe: ['rl.temperature'],
    engine: ['actor_rollout_ref.rollout.temperature'],
    file: `${C}rollout/rollout.yaml`,
    build: copy('rl.temperature', 'actor_rollout_ref.rollout.temperature'),
  },
  {
    recipe: ['rl.top_p'],
    engine: ['actor_rollout_ref.rollout.top_p'],
    file: `${C}rollout/rollout.yaml`,
    build: copy('rl.top_p', 'actor_rollout_ref.rollout.top_p'),
  },
  {
    recipe: ['rl.lr'],
    engine: ['actor_rollout_ref.actor.optim.lr'],
    file: `${C}actor/actor.yaml`,
    build: copy('rl.lr', 'actor_rollout_ref.actor.optim.lr'),
  },
  {
    recipe: ['rl.train_batch_size'],
    engine: ['data.train_batch_size'],
    file: `${C}data/legacy_data.yaml`,
    how: 'prompts per step',
    build: copy('rl.train_batch_size', 'data.train_batch_size'),
  },
  {
    recipe: ['rl.mini_batch_size'],
    engine: ['actor_rollout_ref.actor.ppo_mini_batch_size'],
    file: `${C}actor/actor.yaml`,
    how: 'prompts per update (verl multiplies by rollout.n)',
    build: copy('rl.mini_batch_size', 'actor_rollout_ref.actor.ppo_mini_batch_size'),
  },
  {
    recipe: ['rl.micro_batch_size_per_gpu'],
    engine: [
      'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
      'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu',
      'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu',
    ],
    file: `${C}actor/actor.yaml, rollout/rollout.yaml, ref/ref.yaml`,
    how:
      'the same number for the log-prob passes (verl/utils/config.py validate_config needs one without ' +
      'dynamic batching)',
    build: (i) => {
      const v = get<number>(i, 'rl.micro_batch_size_per_gpu');
      return v === undefined
        ? null
        : [
            ['actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', v],
            ['actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', v],
            ['actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', v],
          ];
    },
  },
  {
    recipe: ['rl.clip_low'],
    engine: ['actor_rollout_ref.actor.clip_ratio_low'],
    file: `${C}actor/actor.yaml`,
    build: copy('rl.clip_low', 'actor_rollout_ref.actor.clip_ratio_low'),
  },
  {
    recipe: ['rl.clip_high'],
    engine: ['actor_rollout_ref.actor.clip_ratio_high'],
    file: `${C}actor/actor.yaml`,
    build: copy('rl.clip_high', 'actor_rollout_ref.actor.clip_ratio_high'),
  },
  {
    recipe: ['rl.kl_loss'],
    engine: ['actor_rollout_ref.actor.use_kl_loss'],
    file: `${C}actor/actor.yaml`,
    build: copy('rl.kl_loss', 'actor_rollout_ref.actor.use_kl_loss'),
  },
  {
    recipe: ['rl.kl_coef'],
    engine: ['actor_rollout_ref.actor.kl_loss_coef'],
    file: `${C}actor/actor.yaml`,
    build: copy('rl.kl_coef', 'actor_rollout_ref.actor.kl_loss_coef'),
  },
  {
    recipe: ['rl.kl_type'],
    engine: ['actor_rollout_ref.actor.kl_loss_type'],
    file: `${C}actor/actor.yaml`,
    build: copy('rl.kl_type', 'actor_rollout_ref.actor.kl_loss_type'),
  },
  {
    recipe: ['rl.kl_in_reward'],
    engine: ['algorithm.use_kl_in_reward'],
    file: `${C}ppo_trainer.yaml`,
    build: copy('rl.kl_in_reward', 'algorithm.use_kl_in_reward'),
  },
  {
    recipe: ['rl.entropy_coef'],
    engine: ['actor_rollout_ref.actor.entropy_coeff'],
    file: `${C}actor/actor.yaml`,
    build: copy('rl.entropy_coef', 'actor_rollout_ref.actor.entropy_coeff'),
  },
  {
    recipe: ['rl.loss_agg_mode'],
    engine: ['actor_rollout_ref.actor.loss_agg_mode'],
    file: `${C}actor/actor.yaml`,
    build: copy('rl.loss_agg_mode', 'actor_rollout_ref.actor.loss_agg_mode'),
  },
  {
    recipe: ['rl.grad_clip'],
    engine: ['actor_rollout_ref.actor.grad_clip'],
    file: `${C}actor/dp_actor.yaml`,
    build: copy('rl.grad_clip', 'actor_rollout_ref.actor.grad_clip'),
  },
  {
    recipe: ['rl.max_prompt_length'],
    engine: ['data.max_prompt_length'],
    file: `${C}data/legacy_data.yaml`,
    how: 'rollout.prompt_length follows it (rollout/rollout.yaml)',
    build: copy('rl.max_prompt_length', 'data.max_prompt_length'),
  },
  {
    recipe: ['rl.max_response_length'],
    engine: ['data.max_response_length'],
    file: `${C}data/legacy_data.yaml`,
    how: 'the whole multi-turn response; rollout.response_length follows it (rollout/rollout.yaml)',
    build: copy('rl.max_response_length', 'data.max_response_length'),
  },
  {
    recipe: ['rl.max_turns'],
    engine: [
      'actor_rollout_ref.rollout.multi_turn.enable',
      'actor_rollout_ref.rollout.multi_turn.max_assistant_turns',
      'actor_rollout_ref.rollout.agent.agent_loop_config_path',
      'actor_rollout_ref.rollout.agent.default_agent_loop',
      'actor_rollout_ref.rollout.multi_turn.tool_config_path',
    ],
    file: `${C}rollout/rollout.yaml`,
    how:
      `every rollout an episode of ${VERL_AGENT_LOOP} (quarry_trainer/verl/agent_loop.yaml) on quarry serve-env, ` +
      `with the protocol's stop strings and the panel's total as its score; tool-calling protocols ` +
      `(${VERL_TOOL_PROTOCOLS.join(', ')}) run verl's tool agent loop with Quarry's tool config`,
    shellVars: true,
    build: (i) => {
      const turns = get<number>(i, 'rl.max_turns');
      if (turns === undefined) return null;
      const loop = verlAgentLoop(i.recipe.protocol);
      return [
        ['actor_rollout_ref.rollout.multi_turn.enable', true],
        ['actor_rollout_ref.rollout.multi_turn.max_assistant_turns', turns],
        ['actor_rollout_ref.rollout.agent.agent_loop_config_path', `${TRAINER_DIR}/verl/agent_loop.yaml`],
        ['actor_rollout_ref.rollout.agent.default_agent_loop', loop],
        ...(loop === 'tool_agent'
          ? [
              ['actor_rollout_ref.rollout.multi_turn.tool_config_path', `${TRAINER_DIR}/verl/tool_config.yaml`] as [
                string,
                EngineValue,
              ],
            ]
          : []),
      ];
    },
  },
  {
    recipe: ['rl.total_steps', 'rl.epochs'],
    engine: ['trainer.total_training_steps', 'trainer.total_epochs'],
    file: `${C}ppo_trainer.yaml`,
    how: 'with steps: total_epochs = ⌈steps / ⌊rows / train batch⌋⌉, so verl reaches them',
    build: schedule,
  },
  {
    recipe: ['rl.rollout_engine'],
    engine: ['actor_rollout_ref.rollout.name'],
    file: `${C}rollout/rollout.yaml`,
    build: copy('rl.rollout_engine', 'actor_rollout_ref.rollout.name'),
  },
  {
    recipe: ['rl.tensor_parallel'],
    engine: ['actor_rollout_ref.rollout.tensor_model_parallel_size'],
    file: `${C}rollout/rollout.yaml`,
    build: copy('rl.tensor_parallel', 'actor_rollout_ref.rollout.tensor_model_parallel_size'),
  },
  {
    recipe: ['hardware.gpus_per_node'],
    engine: ['trainer.n_gpus_per_node'],
    file: `${C}ppo_trainer.yaml`,
    build: copy('hardware.gpus_per_node', 'trainer.n_gpus_per_node'),
  },
  {
    recipe: ['hardware.nodes'],
    engine: ['trainer.nnodes'],
    file: `${C}ppo_trainer.yaml`,
    build: copy('hardware.nodes', 'trainer.nnodes'),
  },
  {
    recipe: ['data.shuffle'],
    engine: ['data.shuffle'],
    file: `${C}data/legacy_data.yaml`,
    build: copy('data.shuffle', 'data.shuffle'),
  },
  {
    recipe: ['rl.save_freq'],
    engine: ['trainer.save_freq'],
    file: `${C}ppo_trainer.yaml`,
    build: copy('rl.save_freq', 'trainer.save_freq'),
  },
  {
    recipe: ['rl.test_freq', 'rl.val_before_train'],
    engine: ['trainer.test_freq', 'trainer.val_before_train'],
    file: `${C}ppo_trainer.yaml`,
    how: 'validation off (-1, false) when the data folder has no held-out file',
    build: validation('trainer.test_freq', 'trainer.val_before_train'),
  },
  {
    recipe: ['reward.panel'],
    engine: [
      'reward.custom_reward_function.path',
      'reward.custom_reward_function.name',
      'reward.custom_reward_function.reward_kwargs.panel',
    ],
    file: `${C}reward/reward.yaml`,
    how: "Quarry's reward function scores with the panel through quarry serve-env",
    add: ['reward.custom_reward_function.reward_kwargs.panel'],
    shellVars: true,
    build: (i) => {
      const panel = get<string>(i, 'reward.panel');
      return [
        ['reward.custom_reward_function.path', `${TRAINER_DIR}/verl/reward.py`],
        ['reward.custom_reward_function.name', 'compute_score'],
        ...(panel ? [['reward.custom_reward_function.reward_kwargs.panel', panel] as [string, EngineValue]] : []),
      ];
    },
  },
  {
    recipe: [],
    engine: ['actor_rollout_ref.model.path'],
    file: `${C}model/hf_model.yaml`,
    how: '--model',
    build: (i) => [['actor_rollout_ref.model.path', i.model]],
  },
  {
    recipe: [],
    engine: ['data.train_files', 'data.val_files', 'data.filter_overlong_prompts'],
    file: `${C}data/legacy_data.yaml`,
    how:
      '--data DIR: train.parquet; val.parquet or test.parquet beside it, else train.parquet with validation off; ' +
      "a prompt over data.max_prompt_length is dropped when the data loads (verl's default truncation is an error)",
    build: (i) => [
      ['data.train_files', i.trainFile],
      ['data.val_files', i.valFile ?? i.trainFile],
      ['data.filter_overlong_prompts', true],
    ],
  },
  {
    recipe: [],
    engine: ['trainer.logger', 'trainer.project_name', 'trainer.experiment_name', 'trainer.default_local_dir'],
    file: `${C}ppo_trainer.yaml`,
    how:
      "console and verl's file logger (one {step, data} line a step at VERL_FILE_LOGGER_PATH, which launch.sh sets " +
      "to the launch folder's metrics.jsonl; no wandb key needed); checkpoints under --out",
    build: (i) => [
      ['trainer.logger', ['console', 'file']],
      ['trainer.project_name', 'quarry'],
      ['trainer.experiment_name', i.recipe.name],
      ['trainer.default_local_dir', `${i.outDir}/checkpoints`],
    ],
  },
];

/** The verl launch for these inputs: its overrides, what verl cannot take, and notes. */
export function planVerl(inputs: LaunchInputs): EnginePlan {
  const overrides = overridesFrom(VERL_MAPPING, 'verl', inputs);
  const notCarried: NotCarried[] = [];
  const notes: string[] = [];
  if (get(inputs, 'rl.max_turn_tokens') !== undefined) {
    notCarried.push({
      key: 'rl.max_turn_tokens',
      why: 'verl bounds the whole response ' + '(data.max_response_length), not one turn',
    });
  }
  if (get(inputs, 'rl.importance_sampling') === 'sequence') {
    notCarried.push({ key: 'rl.importance_sampling', why: 'sequence-level ratios (GSPO) are carried for TRL only' });
  }
  if (get(inputs, 'rl.filter') !== undefined) {
    notCarried.push({
      key: 'rl.filter',
      why: "the paper's rollout filter has no verl setting here (its criterion is " + 'not published)',
    });
  }
  if (get(inputs, 'rl.loss_agg_mode') === 'seq-mean-token-sum-norm')
    notes.push(
      'seq-mean-token-sum-norm divides by ' +
        'actor.loss_scale_factor when set, else by the response length budget (verl core_algos.agg_loss)',
    );
  if (inputs.valFile === null) {
    notes.push(
      'no held-out file beside train.parquet (val.parquet or test.parquet): validation is off and ' +
        'data.val_files is train.parquet (verl builds a validation set either way)',
    );
  }
  const steps = get<number>(inputs, 'rl.total_steps');
  const perEpoch = stepsPerEpoch(inputs.rows, get<number>(inputs, 'rl.train_batch_size') ?? 1);
  if (steps !== undefined && perEpoch !== null && perEpoch > 0) {
    notes.push(
      `${steps} steps: ${inputs.rows} rows (${inputs.rowsFrom}) make ${perEpoch} batches of ` +
        `${get<number>(inputs, 'rl.train_batch_size')} per epoch (the last partial batch is dropped), so ` +
        `trainer.total_epochs=${overrideValue(overrides, 'trainer.total_epochs')} and verl stops at step ${steps}`,
    );
  } else if (steps !== undefined && inputs.rows === null) {
    notes.push(
      `${steps} steps: the number of rows is unknown, so trainer.total_epochs is verl's default (30) or the ` +
        "recipe's rl.epochs; verl stops at whichever comes first",
    );
  }
  return { engine: 'verl', module: VERL_MODULE, overrides, notCarried, notes };
}
