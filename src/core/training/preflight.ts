// Pre-flight arithmetic: what verl and SkyRL only find out after minutes on the GPUs (or after Ray has started),
// checked on the launch's own override values before anything runs — batch sizes that do not divide (train batch ×
// group size by mini-batch, by micro-batch × GPUs), a response budget over the model's context, a step count the data
// cannot reach, reward numbers the panel would not use. Each finding names the engine file whose check it mirrors.
import type { EngineValue, LaunchEngine, Recipe } from './recipe';
import { rewardDifferences, settingValue } from './recipe';
import { overrideValue, type Override } from './overrides';

type Level = 'error' | 'warning';

export interface Finding {
  level: Level;
  /** A short id (`verl.micro-batch`), stable for tests and --json readers. */
  check: string;
  message: string;
}

export interface ArithmeticInputs {
  engine: LaunchEngine;
  recipe: Recipe;
  overrides: readonly Override[];
  /** Tokens the model attends to, and where that number comes from. */
  contextLength: number;
  contextFrom: string;
  /** Training rows, when known, and where the number comes from. */
  rows: number | null;
  rowsFrom: string;
  /** Environment variable names set where the launch is checked (WANDB_API_KEY …). */
  env?: Record<string, string | undefined>;
}

/** Engine defaults for keys a launch may leave out (an override replaces them), from the files cited. */
const VERL_DEFAULTS: Record<string, EngineValue> = {
  // verl/trainer/config/ppo_trainer.yaml, data/legacy_data.yaml, actor/actor.yaml, actor/dp_actor.yaml,
  // rollout/rollout.yaml
  'trainer.n_gpus_per_node': 8,
  'trainer.nnodes': 1,
  'data.train_batch_size': 1024,
  'actor_rollout_ref.rollout.n': 1,
  'actor_rollout_ref.actor.ppo_mini_batch_size': 256,
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': null,
  'actor_rollout_ref.actor.use_dynamic_bsz': false,
  'actor_rollout_ref.actor.ulysses_sequence_parallel_size': 1,
  'actor_rollout_ref.rollout.tensor_model_parallel_size': 2,
  'data.max_prompt_length': 512,
  'data.max_response_length': 512,
  'actor_rollout_ref.rollout.max_model_len': null,
  'algorithm.adv_estimator': 'gae',
  'actor_rollout_ref.rollout.multi_turn.enable': false,
  'actor_rollout_ref.rollout.multi_turn.max_assistant_turns': null,
  'actor_rollout_ref.rollout.agent.default_agent_loop': 'single_turn_agent',
  'actor_rollout_ref.rollout.agent.agent_loop_config_path': null,
};
/** The agent loops that play a recipe's turns: verl's tool loop and Quarry's (quarry_trainer/verl/agent_loop.yaml). */
const VERL_MULTI_TURN_LOOPS = ['tool_agent', 'quarry_agent'];
const SKYRL_DEFAULTS: Record<string, EngineValue> = {
  // skyrl_train/config/ppo_base_config.yaml
  'trainer.train_batch_size': 1024,
  'trainer.policy_mini_batch_size': 256,
  'trainer.micro_train_batch_size_per_gpu': 1,
  'generator.n_samples_per_prompt': 5,
  'trainer.placement.policy_num_gpus_per_node': 4,
  'trainer.placement.policy_num_nodes': 1,
  'trainer.policy.sequence_parallel_size': 1,
  'trainer.placement.colocate_all': true,
  'generator.num_inference_engines': 1,
  'generator.inference_engine_tensor_parallel_size': 4,
  'generator.inference_engine_pipeline_parallel_size': 1,
  'generator.inference_engine_data_parallel_size': 1,
  'generator.max_turns': 1,
  'trainer.max_prompt_length': 512,
  'generator.max_input_length': 512,
  'generator.sampling_params.max_generate_length': 1024,
  'generator.backend': 'vllm',
  'generator.run_engines_locally': true,
  'generator.sampling_params.stop': null,
  'trainer.algorithm.use_kl_loss': true,
  'trainer.algorithm.use_kl_in_reward': false,
  'trainer.logger': 'wandb',
  'trainer.algorithm.advantage_estimator': 'grpo',
};

const TRL_DEFAULTS: Record<string, EngineValue> = {
  // trl/trainer/grpo_config.py, transformers/training_args.py
  per_device_train_batch_size: 8,
  gradient_accumulation_steps: 1,
  num_generations: 8,
  max_completion_length: 512,
};

class Values {
  constructor(
    private readonly overrides: readonly Override[],
    private readonly defaults: Record<string, EngineValue>,
  ) {}
  get(key: string): EngineValue | undefined {
    const v = overrideValue(this.overrides, key);
    return v !== undefined ? v : this.defaults[key];
  }
  num(key: string): number | null {
    const v = this.get(key);
    return typeof v === 'number' ? v : null;
  }
  bool(key: string): boolean {
    return this.get(key) === true;
  }
}

const finding = (level: Level, check: string, message: string): Finding => ({ level, check, message });

/** Checks that do not depend on the engine: the recipe's own numbers, the data size, the reward panel. */
function recipeChecks(a: ArithmeticInputs, batch: number | null): Finding[] {
  const out: Finding[] = [];
  const r = a.recipe;
  const seq = settingValue<number>(r, 'rl.max_sequence_length');
  const prompt = settingValue<number>(r, 'rl.max_prompt_length');
  const response = settingValue<number>(r, 'rl.max_response_length');
  if (seq !== undefined && prompt !== undefined && response !== undefined && prompt + response > seq) {
    out.push(
      finding(
        'error',
        'recipe.sequence',
        `rl.max_prompt_length ${prompt} + rl.max_response_length ${response} ` +
          `= ${prompt + response} is over the paper's maximum sequence length rl.max_sequence_length ${seq}`,
      ),
    );
  }
  if (a.rows !== null && batch !== null && a.rows < batch) {
    out.push(
      finding(
        'error',
        'data.rows',
        `${a.rows} training rows (${a.rowsFrom}) are fewer than one batch of ` +
          `${batch} prompts: both engines drop the last partial batch, so training would run 0 steps`,
      ),
    );
  }
  const group = settingValue<number>(r, 'rl.group_size');
  if (group !== undefined && group < 2) {
    out.push(
      finding(
        'warning',
        'recipe.group',
        `rl.group_size ${group}: GRPO's advantage is a reward minus its group's ` +
          'mean, so one rollout per prompt gives every advantage 0 and no gradient',
      ),
    );
  }
  for (const d of rewardDifferences(r)) {
    out.push(
      finding(
        'error',
        'reward.terms',
        `the recipe's reward.terms differ from the built-in panel ` +
          `'${String(settingValue(r, 'reward.panel'))}' that the launch uses by name: ${d}`,
      ),
    );
  }
  return out;
}

/**
 * verl: verl/utils/config.py validate_config, verl/workers/config/actor.py ActorConfig.validate, and the worker splits.
 */
export function verlArithmetic(a: ArithmeticInputs): Finding[] {
  const v = new Values(a.overrides, VERL_DEFAULTS);
  const out: Finding[] = [];
  const nodes = v.num('trainer.nnodes') ?? 1;
  const gpus = (v.num('trainer.n_gpus_per_node') ?? 1) * nodes;
  const train = v.num('data.train_batch_size') ?? 0;
  const n = v.num('actor_rollout_ref.rollout.n') ?? 1;
  const mini = v.num('actor_rollout_ref.actor.ppo_mini_batch_size') ?? 0;
  const micro = v.num('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu');
  const dynamic = v.bool('actor_rollout_ref.actor.use_dynamic_bsz');
  const sp = v.num('actor_rollout_ref.actor.ulysses_sequence_parallel_size') ?? 1;
  const dp = Math.floor(gpus / sp);
  const gpuText = `${gpus} GPUs (trainer.nnodes ${nodes} × trainer.n_gpus_per_node ${gpus / nodes})`;
  if (!dynamic && (train * n) % gpus !== 0) {
    out.push(
      finding(
        'error',
        'verl.batch-gpus',
        `data.train_batch_size ${train} × rollout.n ${n} = ${train * n} ` +
          `sequences do not divide among ${gpuText} (verl/utils/config.py validate_config)`,
      ),
    );
  }
  if (!dynamic && mini > train) {
    out.push(
      finding(
        'error',
        'verl.mini-batch',
        `actor.ppo_mini_batch_size ${mini} is more than data.train_batch_size ` +
          `${train} (verl/workers/config/actor.py ActorConfig.validate)`,
      ),
    );
  } else if (mini > 0 && train % mini !== 0) {
    out.push(
      finding(
        'warning',
        'verl.mini-batch',
        `data.train_batch_size ${train} is not a multiple of ` +
          `actor.ppo_mini_batch_size ${mini}: the step's last update uses ${train % mini} prompts instead of ${mini}`,
      ),
    );
  }
  if (sp > 0 && gpus % sp !== 0) {
    out.push(
      finding('error', 'verl.sequence-parallel', `${gpuText} do not divide by ulysses_sequence_parallel_size ${sp}`),
    );
  } else if ((mini * n) % dp !== 0) {
    out.push(
      finding(
        'error',
        'verl.mini-gpus',
        `actor.ppo_mini_batch_size ${mini} × rollout.n ${n} = ${mini * n} ` +
          `sequences per update do not divide among ${dp} data-parallel ranks (verl/workers/engine_workers.py, ` +
          'at the first update)',
      ),
    );
  } else if (!dynamic && micro !== null && ((mini * n) / dp) % micro !== 0) {
    out.push(
      finding(
        'error',
        'verl.micro-batch',
        `each update gives every GPU ${mini} × ${n} / ${dp} = ${(mini * n) / dp} ` +
          `sequences, not a multiple of actor.ppo_micro_batch_size_per_gpu ${micro} (verl/workers/engine/utils.py, ` +
          'at the first update)',
      ),
    );
  }
  const tp = v.num('actor_rollout_ref.rollout.tensor_model_parallel_size') ?? 1;
  if (gpus % tp !== 0) {
    out.push(
      finding(
        'error',
        'verl.tensor-parallel',
        `${gpuText} do not divide into rollout engines of ` + `rollout.tensor_model_parallel_size ${tp}`,
      ),
    );
  }
  const prompt = v.num('data.max_prompt_length') ?? 0;
  const response = v.num('data.max_response_length') ?? 0;
  if (prompt + response > a.contextLength) {
    out.push(
      finding(
        'error',
        'context',
        `data.max_prompt_length ${prompt} + data.max_response_length ${response} = ` +
          `${prompt + response} tokens are more than the model's context of ${a.contextLength} (${a.contextFrom})`,
      ),
    );
  }
  const modelLen = v.num('actor_rollout_ref.rollout.max_model_len');
  if (modelLen !== null && prompt + response > modelLen) {
    out.push(
      finding(
        'error',
        'verl.max-model-len',
        `prompt ${prompt} + response ${response} tokens are more than ` + `rollout.max_model_len ${modelLen}`,
      ),
    );
  }
  out.push(...verlTurnChecks(a.recipe, v));
  return [...out, ...recipeChecks(a, train)];
}

/**
 * A recipe with turns needs a multi-turn verl launch: rollout.multi_turn on, its turn budget, and an agent loop that
 * plays turns (verl's default, single_turn_agent, generates once: verl/trainer/config/rollout/rollout.yaml), Quarry's
 * registered by its agent loop config (AgentLoopWorker reads agent.agent_loop_config_path).
 */
function verlTurnChecks(recipe: Recipe, v: Values): Finding[] {
  const turns = settingValue<number>(recipe, 'rl.max_turns');
  if (turns === undefined) return [];
  const problems: string[] = [];
  if (!v.bool('actor_rollout_ref.rollout.multi_turn.enable')) problems.push('rollout.multi_turn.enable is not true');
  const budget = v.num('actor_rollout_ref.rollout.multi_turn.max_assistant_turns');
  if (budget !== turns) problems.push(`rollout.multi_turn.max_assistant_turns is ${budget ?? 'unset'}, not ${turns}`);
  const loop = String(v.get('actor_rollout_ref.rollout.agent.default_agent_loop'));
  if (!VERL_MULTI_TURN_LOOPS.includes(loop))
    problems.push(`rollout.agent.default_agent_loop is ${loop}, not one of ${VERL_MULTI_TURN_LOOPS.join(', ')}`);
  if (loop === 'quarry_agent' && !v.get('actor_rollout_ref.rollout.agent.agent_loop_config_path'))
    problems.push('quarry_agent is not registered: rollout.agent.agent_loop_config_path is unset');
  if (problems.length === 0) return [];
  return [
    finding(
      'error',
      'verl.multi-turn',
      `recipe ${recipe.name} plays ${turns}-turn episodes (rl.max_turns) and this launch cannot: ` +
        `${problems.join('; ')} (verl/trainer/config/rollout/rollout.yaml)`,
    ),
  ];
}

/** SkyRL: skyrl_train/utils/utils.py validate_batch_sizes, validate_generator_cfg and validate_cfg's placement. */
export function skyrlArithmetic(a: ArithmeticInputs): Finding[] {
  const v = new Values(a.overrides, SKYRL_DEFAULTS);
  const out: Finding[] = [];
  const U = '(skyrl_train/utils/utils.py validate_batch_sizes)';
  const train = v.num('trainer.train_batch_size') ?? 0;
  const mini = v.num('trainer.policy_mini_batch_size') ?? 0;
  const micro = v.num('trainer.micro_train_batch_size_per_gpu') ?? 1;
  const n = v.num('generator.n_samples_per_prompt') ?? 1;
  const nodes = v.num('trainer.placement.policy_num_nodes') ?? 1;
  const gpus = (v.num('trainer.placement.policy_num_gpus_per_node') ?? 1) * nodes;
  const sp = v.num('trainer.policy.sequence_parallel_size') ?? 1;
  const dp = Math.floor(gpus / sp);
  if (mini > train) {
    out.push(
      finding(
        'error',
        'skyrl.mini-batch',
        `trainer.policy_mini_batch_size ${mini} is more than ` + `trainer.train_batch_size ${train} ${U}`,
      ),
    );
  } else if (mini > 0 && train % mini !== 0) {
    out.push(
      finding(
        'error',
        'skyrl.mini-batch',
        `trainer.train_batch_size ${train} is not a multiple of ` + `trainer.policy_mini_batch_size ${mini} ${U}`,
      ),
    );
  }
  const miniPerGpu = dp > 0 ? Math.floor((mini * n) / dp) : 0;
  if (miniPerGpu === 0) {
    out.push(
      finding(
        'error',
        'skyrl.mini-gpus',
        `policy_mini_batch_size ${mini} × n_samples_per_prompt ${n} = ` +
          `${mini * n} sequences give none to each of ${dp} data-parallel ranks ${U}`,
      ),
    );
  } else {
    if ((mini * n) % dp !== 0) {
      out.push(
        finding(
          'warning',
          'skyrl.mini-gpus',
          `${mini} × ${n} = ${mini * n} sequences per update do not divide ` +
            `among ${dp} data-parallel ranks: SkyRL rounds each rank's share down to ${miniPerGpu}`,
        ),
      );
    }
    if (miniPerGpu % micro !== 0) {
      out.push(
        finding(
          'error',
          'skyrl.micro-batch',
          `each update gives every GPU ${miniPerGpu} sequences ` +
            `(${mini} × ${n} / ${dp}), not a multiple of trainer.micro_train_batch_size_per_gpu ${micro} ${U}`,
        ),
      );
    }
    const trainPerGpu = Math.floor((train * n) / dp);
    if (trainPerGpu % miniPerGpu !== 0) {
      out.push(
        finding(
          'error',
          'skyrl.train-gpus',
          `each step gives every GPU ${trainPerGpu} sequences, not a multiple ` +
            `of its ${miniPerGpu} per update ${U}`,
        ),
      );
    }
  }
  if (v.get('trainer.placement.colocate_all') === true) {
    const engines =
      (v.num('generator.num_inference_engines') ?? 1) *
      (v.num('generator.inference_engine_tensor_parallel_size') ?? 1) *
      (v.num('generator.inference_engine_pipeline_parallel_size') ?? 1) *
      (v.num('generator.inference_engine_data_parallel_size') ?? 1);
    if (engines !== gpus) {
      out.push(
        finding(
          'error',
          'skyrl.placement',
          `colocate_all: the policy's ${gpus} GPUs must equal the inference ` +
            `engines' ${engines} (num_inference_engines × tensor × pipeline × data parallel; ` +
            `skyrl_train/utils/utils.py ` +
            'validate_cfg)',
        ),
      );
    }
  }
  const turns = v.num('generator.max_turns') ?? 1;
  const prompt = v.num('trainer.max_prompt_length') ?? 0;
  const input = v.num('generator.max_input_length') ?? 0;
  const G = '(skyrl_train/utils/utils.py validate_generator_cfg)';
  if (turns === 1 && input !== prompt) {
    out.push(
      finding(
        'error',
        'skyrl.input-length',
        `one turn: generator.max_input_length ${input} must equal ` + `trainer.max_prompt_length ${prompt} ${G}`,
      ),
    );
  } else if (turns > 1 && input < prompt) {
    out.push(
      finding(
        'error',
        'skyrl.input-length',
        `generator.max_input_length ${input} is less than ` + `trainer.max_prompt_length ${prompt} ${G}`,
      ),
    );
  }
  const backend = v.get('generator.backend');
  const stop = v.get('generator.sampling_params.stop');
  if (backend === 'sglang' && stop !== null && stop !== undefined) {
    out.push(
      finding(
        'error',
        'skyrl.sglang-stop',
        `the SGLang backend refuses sampling_params.stop ${G}, and protocol ` +
          `'${a.recipe.protocol}' ends each turn at a stop string: use vLLM (skyrl.generator.backend=vllm)`,
      ),
    );
  }
  const tp = v.num('generator.inference_engine_tensor_parallel_size') ?? 1;
  if (backend === 'sglang' && v.bool('generator.run_engines_locally') && tp !== 1) {
    out.push(
      finding(
        'error',
        'skyrl.sglang-tp',
        `local SGLang engines need inference_engine_tensor_parallel_size 1, ` + `got ${tp} ${G}`,
      ),
    );
  }
  if (v.bool('trainer.algorithm.use_kl_loss') && v.bool('trainer.algorithm.use_kl_in_reward')) {
    out.push(
      finding(
        'error',
        'skyrl.kl',
        'use_kl_loss and use_kl_in_reward are mutually exclusive ' + '(skyrl_train/utils/utils.py validate_cfg)',
      ),
    );
  }
  const generate = v.num('generator.sampling_params.max_generate_length') ?? 0;
  if (input + generate > a.contextLength) {
    out.push(
      finding(
        'error',
        'context',
        `generator.max_input_length ${input} + sampling_params.max_generate_length ` +
          `${generate} = ${input + generate} tokens are more than the model's context of ${a.contextLength} ` +
          `(${a.contextFrom})`,
      ),
    );
  }
  const logger = v.get('trainer.logger');
  const loggers = Array.isArray(logger) ? logger : [logger];
  if (loggers.includes('wandb') && !a.env?.WANDB_API_KEY) {
    out.push(
      finding(
        'warning',
        'skyrl.wandb',
        'trainer.logger wandb needs WANDB_API_KEY where SkyRL starts ' +
          '(skyrl_train/utils/utils.py validate_generator_cfg); it is not set here',
      ),
    );
  }
  return [...out, ...recipeChecks(a, train)];
}

/** TRL: GRPOConfig.__post_init__'s batch checks (trl/trainer/grpo_config.py) and the context, for one process. */
function trlArithmetic(a: ArithmeticInputs): Finding[] {
  const v = new Values(a.overrides, TRL_DEFAULTS);
  const out: Finding[] = [];
  const perDevice = v.num('per_device_train_batch_size') ?? 8;
  const g = v.num('num_generations') ?? 8;
  const perGeneration = v.num('steps_per_generation') ?? v.num('gradient_accumulation_steps') ?? 1;
  const accumulation = v.num('gradient_accumulation_steps') ?? 1;
  const generation = perDevice * perGeneration;
  if (generation % g !== 0) {
    out.push(
      finding(
        'error',
        'trl.generation-batch',
        `per_device_train_batch_size ${perDevice} × steps_per_generation ${perGeneration} = ${generation} ` +
          `completions per generation do not divide into groups of num_generations ${g} ` +
          '(trl/trainer/grpo_config.py __post_init__)',
      ),
    );
  }
  if (perGeneration % accumulation !== 0) {
    out.push(
      finding(
        'warning',
        'trl.accumulation',
        `steps_per_generation ${perGeneration} is not a multiple of gradient_accumulation_steps ` +
          `${accumulation}: an optimiser step would mix two generation batches`,
      ),
    );
  }
  const response = v.num('max_completion_length') ?? 512;
  const prompt = settingValue<number>(a.recipe, 'rl.max_prompt_length') ?? 0;
  if (prompt + response > a.contextLength) {
    out.push(
      finding(
        'error',
        'context',
        `rl.max_prompt_length ${prompt} + max_completion_length ${response} = ${prompt + response} tokens are ` +
          `more than the model's context of ${a.contextLength} (${a.contextFrom})`,
      ),
    );
  }
  const batch = settingValue<number>(a.recipe, 'rl.train_batch_size') ?? null;
  return [...out, ...recipeChecks(a, batch)];
}

export function arithmetic(a: ArithmeticInputs): Finding[] {
  if (a.engine === 'trl') return trlArithmetic(a);
  return a.engine === 'verl' ? verlArithmetic(a) : skyrlArithmetic(a);
}
