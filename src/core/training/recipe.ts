// Training recipes (trainer/recipes/<name>.yaml): one paper's hyperparameters as data. Every setting carries its
// value and where it comes from — the paper's section or table (`source`) or, for what the paper leaves open, Quarry's
// choice with the reason (`quarry`). This module holds the catalogue of setting keys, validates a parsed recipe
// document, and applies `--set key=value` overrides. It reads no files: src/app/train finds and parses them.
import { PROTOCOL_NAMES, type ProtocolName } from '../agent/types';
import { BUILTIN_PANELS, BUILTIN_TERMS } from '../rewards/builtins';
import type { PanelSpec } from '../rewards/types';

const RECIPE_SCHEMA = 'quarry.recipe/1';
export const ENGINE_NAMES = ['verl', 'skyrl', 'trl'] as const;
export type LaunchEngine = (typeof ENGINE_NAMES)[number];

/** A reward panel's numbers as a recipe states them: per term, its weight and its parameters. */
type RewardTerms = Record<string, { weight?: number; params?: Record<string, number> }>;
export type SettingValue = string | number | boolean | string[] | number[] | RewardTerms;
/** A value handed to an engine as a Hydra override. */
export type EngineValue = string | number | boolean | null | EngineValue[];

interface Provenance {
  /** Where the paper states it: section, table, appendix. */
  source?: string;
  /** The paper leaves it open: Quarry's choice, and why. */
  quarry?: string;
  /** Set on the command line (`--set`), replacing the recipe's value. */
  set?: string;
  note?: string;
}

interface Setting extends Provenance {
  value: SettingValue;
}

interface EngineSetting extends Provenance {
  value: EngineValue;
}

export interface Recipe {
  schema: typeof RECIPE_SCHEMA;
  name: string;
  paper: { title: string; authors?: string; arxiv?: string };
  protocol: ProtocolName;
  settings: Record<string, Setting>;
  /** Engine keys the paper (or Quarry) sets directly, passed to that engine as they are. */
  engines: Record<LaunchEngine, Record<string, EngineSetting>>;
}

type Kind = 'int' | 'number' | 'bool' | 'string' | 'strings' | 'numbers' | 'terms';

interface SettingSpec {
  kind: Kind;
  what: string;
  choices?: readonly string[];
  /** Inclusive bounds. */
  min?: number;
  max?: number;
  /** Every launch needs it. */
  required?: boolean;
}

/** Every key a recipe may hold. Engines read the `rl.*`, `hardware.*`, `data.shuffle` and `reward.panel` keys. */
export const RECIPE_SETTINGS: Readonly<Record<string, SettingSpec>> = {
  'model.base': { kind: 'string', what: 'the base model the paper trains (its Hugging Face id)', required: true },
  'model.context_length': {
    kind: 'int',
    min: 1,
    what:
      'tokens the model attends to (its max_position_embeddings); ' +
      "read from --model's config.json when it is a local folder",
    required: true,
  },
  'hardware.gpu': { kind: 'string', what: 'the accelerator the paper trained on' },
  'hardware.gpus_per_node': { kind: 'int', min: 1, what: 'GPUs per node', required: true },
  'hardware.nodes': { kind: 'int', min: 1, what: 'nodes', required: true },
  'data.sources': { kind: 'strings', what: 'where the training questions come from' },
  'data.train_size': { kind: 'int', min: 1, what: 'training questions (rows) the paper uses' },
  'data.filters': { kind: 'strings', what: 'how the paper selects its training questions' },
  'data.curriculum_bin_size': { kind: 'int', min: 1, what: 'questions per curriculum level, easiest first' },
  'data.shuffle': { kind: 'bool', what: "whether the trainer shuffles the rows (false keeps a curriculum's order)" },
  'data.command': { kind: 'string', what: "the `quarry data rl` command that builds data like the paper's" },
  'sft.stage': { kind: 'bool', what: 'whether the paper fine-tunes (SFT) before RL' },
  'sft.framework': { kind: 'string', what: 'what the paper fine-tunes with' },
  'sft.teacher': { kind: 'string', what: 'the model whose trajectories the SFT data are' },
  'sft.data': { kind: 'string', what: 'how the SFT data are made' },
  'sft.size': { kind: 'int', min: 1, what: 'SFT examples' },
  'sft.max_turns': { kind: 'int', min: 1, what: 'turn budget of the SFT trajectories' },
  'sft.batch_size': { kind: 'int', min: 1, what: 'SFT global batch size' },
  'sft.per_device_batch_size': { kind: 'int', min: 1, what: 'SFT batch size per device' },
  'sft.epochs': { kind: 'number', min: 0, what: 'SFT epochs' },
  'sft.lr': { kind: 'number', min: 0, what: 'SFT learning rate' },
  'sft.betas': { kind: 'numbers', what: 'SFT AdamW betas' },
  'sft.weight_decay': { kind: 'number', min: 0, what: 'SFT weight decay' },
  'sft.warmup_ratio': { kind: 'number', min: 0, max: 1, what: 'SFT warm-up fraction' },
  'sft.grad_clip': { kind: 'number', min: 0, what: 'SFT gradient norm clip' },
  'sft.scheduler': { kind: 'string', what: 'SFT learning-rate schedule' },
  'sft.rounds': { kind: 'int', min: 1, what: 'self-taught rounds (sample, filter, fine-tune)' },
  'sft.rollouts_per_item': { kind: 'int', min: 1, what: 'samples per question when collecting SFT trajectories' },
  'sft.temperature': { kind: 'number', min: 0, what: 'sampling temperature when collecting SFT trajectories' },
  'sft.selection': { kind: 'string', what: 'which collected trajectories are kept' },
  'rl.framework': { kind: 'string', what: 'what the paper trains with' },
  'rl.algorithm': { kind: 'string', choices: ['grpo'], what: 'the advantage estimator', required: true },
  'rl.optimizer': { kind: 'string', what: 'the optimizer' },
  'rl.group_size': { kind: 'int', min: 1, what: 'rollouts per prompt (G)', required: true },
  'rl.lr': { kind: 'number', min: 0, what: 'policy learning rate', required: true },
  'rl.train_batch_size': { kind: 'int', min: 1, what: 'prompts per training step', required: true },
  'rl.mini_batch_size': { kind: 'int', min: 1, what: 'prompts per policy update', required: true },
  'rl.micro_batch_size_per_gpu': {
    kind: 'int',
    min: 1,
    what: 'sequences per GPU per forward/backward pass',
    required: true,
  },
  'rl.epochs': { kind: 'int', min: 1, what: 'passes over the training rows' },
  'rl.total_steps': { kind: 'int', min: 1, what: 'training steps (batches); wins over rl.epochs' },
  'rl.temperature': { kind: 'number', min: 0, what: 'rollout sampling temperature', required: true },
  'rl.top_p': { kind: 'number', min: 0, max: 1, what: 'rollout nucleus sampling', required: true },
  'rl.max_turns': { kind: 'int', min: 1, what: 'assistant turns per rollout', required: true },
  'rl.max_sequence_length': { kind: 'int', min: 1, what: 'prompt and response together, when the paper bounds them' },
  'rl.max_prompt_length': { kind: 'int', min: 1, what: 'prompt tokens', required: true },
  'rl.max_response_length': {
    kind: 'int',
    min: 1,
    what: 'tokens after the prompt: every turn and observation',
    required: true,
  },
  'rl.max_turn_tokens': { kind: 'int', min: 1, what: 'tokens one turn may generate', required: true },
  'rl.clip_low': { kind: 'number', min: 0, max: 1, what: 'PPO clip ε below 1', required: true },
  'rl.clip_high': { kind: 'number', min: 0, what: 'PPO clip ε above 1', required: true },
  'rl.kl_loss': { kind: 'bool', what: 'a KL loss to the reference policy', required: true },
  'rl.kl_coef': { kind: 'number', min: 0, what: 'its coefficient' },
  'rl.kl_type': { kind: 'string', choices: ['kl', 'abs', 'mse', 'low_var_kl'], what: 'its estimator' },
  'rl.kl_in_reward': { kind: 'bool', what: 'a KL penalty in the reward', required: true },
  'rl.entropy_coef': { kind: 'number', min: 0, what: 'entropy bonus coefficient', required: true },
  'rl.loss_agg_mode': {
    kind: 'string',
    what: 'how token losses are averaged',
    required: true,
    choices: ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'],
  },
  'rl.grad_clip': { kind: 'number', min: 0, what: 'gradient norm clip', required: true },
  'rl.filter': { kind: 'string', what: 'rollout filtering the paper applies' },
  'rl.importance_sampling': {
    kind: 'string',
    choices: ['token', 'sequence'],
    what: "the policy ratio per token (GRPO) or per sequence (GSPO); TRL's importance_sampling_level",
  },
  'rl.rollout_engine': {
    kind: 'string',
    choices: ['vllm', 'sglang'],
    what: 'inference engine for rollouts',
    required: true,
  },
  'rl.tensor_parallel': { kind: 'int', min: 1, what: 'tensor-parallel GPUs per inference engine', required: true },
  'rl.save_freq': { kind: 'int', what: 'checkpoint every N steps (-1: none)' },
  'rl.test_freq': { kind: 'int', what: 'validate every N steps (-1: never)' },
  'rl.val_before_train': { kind: 'bool', what: 'validate before the first step' },
  'reward.panel': { kind: 'string', what: "Quarry's built-in reward panel (docs/rewards.md)", required: true },
  'reward.terms': { kind: 'terms', what: "the paper's reward weights and parameters, per panel term" },
};

export const SETTING_KEYS: readonly string[] = Object.keys(RECIPE_SETTINGS);

/** A Hydra override key: dotted names, optionally prefixed `+` (add a key the config does not have). */
const ENGINE_KEY = /^\+?[A-Za-z_][\w-]*(\.[\w-]+)*$/;
const NAME = /^[a-z0-9][a-z0-9-]*$/;

interface RecipeCheck {
  recipe: Recipe | null;
  problems: string[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What is wrong with `value` as the kind `spec` asks for, or null. */
function checkSettingValue(key: string, value: unknown): string | null {
  const spec = RECIPE_SETTINGS[key];
  if (!spec) return `unknown setting '${key}'${suggest(key)}`;
  const bounds = (n: number): string | null => {
    if (spec.min !== undefined && n < spec.min) return `${key} must be at least ${spec.min}, got ${n}`;
    if (spec.max !== undefined && n > spec.max) return `${key} must be at most ${spec.max}, got ${n}`;
    return null;
  };
  switch (spec.kind) {
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value))
        return `${key} must be a whole number, got ${show(value)}`;
      return bounds(value);
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `${key} must be a number, got ${show(value)}`;
      return bounds(value);
    case 'bool':
      return typeof value === 'boolean' ? null : `${key} must be true or false, got ${show(value)}`;
    case 'string':
      if (typeof value !== 'string' || value.trim() === '')
        return `${key} must be a non-empty string, got ${show(value)}`;
      if (spec.choices && !spec.choices.includes(value))
        return `${key} must be one of ${spec.choices.join(', ')}, got '${value}'`;
      return null;
    case 'strings':
      return Array.isArray(value) && value.every((s) => typeof s === 'string')
        ? null
        : `${key} must be a list of strings, got ${show(value)}`;
    case 'numbers':
      return Array.isArray(value) && value.every((n) => typeof n === 'number' && Number.isFinite(n))
        ? null
        : `${key} must be a list of numbers, got ${show(value)}`;
    case 'terms':
      return checkTerms(key, value);
  }
}

function checkTerms(key: string, value: unknown): string | null {
  if (!isObject(value)) return `${key} must map each panel term to {weight, params}, got ${show(value)}`;
  for (const [term, spec] of Object.entries(value)) {
    if (!isObject(spec)) return `${key}.${term} must be {weight?, params?}, got ${show(spec)}`;
    for (const k of Object.keys(spec)) {
      if (k !== 'weight' && k !== 'params') return `${key}.${term} has '${k}': only weight and params`;
    }
    if (spec.weight !== undefined && (typeof spec.weight !== 'number' || !Number.isFinite(spec.weight)))
      return `${key}.${term}.weight must be a number, got ${show(spec.weight)}`;
    if (spec.params !== undefined) {
      if (!isObject(spec.params)) return `${key}.${term}.params must map names to numbers`;
      for (const [p, n] of Object.entries(spec.params)) {
        if (typeof n !== 'number' || !Number.isFinite(n))
          return `${key}.${term}.params.${p} must be a number, got ${show(n)}`;
      }
    }
  }
  return null;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** " (did you mean X?)" for a key one edit-ish away from a known one (same words in another order, a typo). */
function suggest(key: string): string {
  const norm = (k: string) => k.replace(/[._-]/g, '').toLowerCase();
  const close = SETTING_KEYS.filter((k) => norm(k) === norm(key) || distance(k, key) <= 2);
  return close.length > 0 ? ` (did you mean ${close.join(' or ')}?)` : '';
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const keep = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = keep;
    }
  }
  return row[b.length];
}

/** The provenance fields of one entry, with what is wrong about them. */
function provenance(where: string, entry: Record<string, unknown>, problems: string[]): Provenance {
  const out: Provenance = {};
  for (const k of Object.keys(entry)) {
    if (!['value', 'source', 'quarry', 'note', 'set'].includes(k)) problems.push(`${where}: unknown field '${k}'`);
  }
  for (const k of ['source', 'quarry', 'note', 'set'] as const) {
    const v = entry[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.trim() === '') problems.push(`${where}.${k} must be a non-empty string`);
    else out[k] = v;
  }
  const said = [out.source, out.quarry, out.set].filter((v) => v !== undefined).length;
  if (said === 0) {
    problems.push(
      `${where}: say where the value comes from: source (the paper's section or table) or quarry ` +
        "(the paper leaves it open: Quarry's choice and why)",
    );
  } else if (out.source !== undefined && out.quarry !== undefined) {
    problems.push(`${where}: both source and quarry: a value is either the paper's or Quarry's choice`);
  }
  return out;
}

function isEngineValue(v: unknown): v is EngineValue {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  return Array.isArray(v) && v.every(isEngineValue);
}

/** Validates a parsed recipe document. `where` names it in messages (its file). */
export function validateRecipe(doc: unknown, where: string): RecipeCheck {
  const problems: string[] = [];
  const fail = (msg: string): RecipeCheck => ({ recipe: null, problems: [...problems, `${where}: ${msg}`] });
  if (!isObject(doc)) return fail('a recipe is a mapping (schema, name, paper, protocol, settings, engines)');
  for (const k of Object.keys(doc)) {
    if (!['schema', 'name', 'paper', 'protocol', 'settings', 'engines'].includes(k))
      problems.push(`${where}: unknown top-level key '${k}'`);
  }
  if (doc.schema !== RECIPE_SCHEMA) return fail(`schema must be '${RECIPE_SCHEMA}', got ${show(doc.schema)}`);
  if (typeof doc.name !== 'string' || !NAME.test(doc.name))
    problems.push(`${where}: name must be lowercase letters, digits and '-', got ${show(doc.name)}`);
  const paper = isObject(doc.paper) ? doc.paper : null;
  if (!paper || typeof paper.title !== 'string' || paper.title.trim() === '')
    problems.push(`${where}: paper.title is required`);
  if (typeof doc.protocol !== 'string' || !(PROTOCOL_NAMES as readonly string[]).includes(doc.protocol)) {
    problems.push(`${where}: protocol must be one of ${PROTOCOL_NAMES.join(', ')}, got ${show(doc.protocol)}`);
  }
  const settings: Record<string, Setting> = {};
  if (!isObject(doc.settings)) {
    problems.push(`${where}: settings must be a mapping of setting keys`);
  } else {
    for (const [key, entry] of Object.entries(doc.settings)) {
      const at = `${where}: settings.${key}`;
      if (!isObject(entry) || !('value' in entry)) {
        problems.push(`${at} must be {value, source | quarry, note?}`);
        continue;
      }
      const bad = checkSettingValue(key, entry.value);
      if (bad) problems.push(`${where}: ${bad}`);
      const prov = provenance(at, entry, problems);
      if (!bad) settings[key] = { value: entry.value as SettingValue, ...prov };
    }
    for (const key of SETTING_KEYS.filter((k) => RECIPE_SETTINGS[k].required)) {
      if (!(key in doc.settings))
        problems.push(
          `${where}: settings.${key} is missing (${RECIPE_SETTINGS[key].what}): ` +
            "give the paper's value with its source, or Quarry's choice with its reason",
        );
    }
  }
  const engines = { verl: {}, skyrl: {}, trl: {} } as Recipe['engines'];
  if (doc.engines !== undefined && !isObject(doc.engines))
    problems.push(`${where}: engines must map verl/skyrl/trl to engine keys`);
  for (const [engine, keys] of Object.entries(isObject(doc.engines) ? doc.engines : {})) {
    if (!(ENGINE_NAMES as readonly string[]).includes(engine)) {
      problems.push(`${where}: engines.${engine}: engines are ${ENGINE_NAMES.join(', ')}`);
      continue;
    }
    if (keys === null) continue;
    if (!isObject(keys)) {
      problems.push(`${where}: engines.${engine} must map engine keys to {value, source | quarry}`);
      continue;
    }
    for (const [key, entry] of Object.entries(keys)) {
      const at = `${where}: engines.${engine}.${key}`;
      if (!ENGINE_KEY.test(key)) problems.push(`${at}: not a dotted config key`);
      if (!isObject(entry) || !('value' in entry) || !isEngineValue(entry.value)) {
        problems.push(`${at} must be {value: a number, string, boolean, null or list, source | quarry}`);
        continue;
      }
      engines[engine as LaunchEngine][key] = { value: entry.value as EngineValue, ...provenance(at, entry, problems) };
    }
  }
  if (isObject(doc.settings) && typeof settings['reward.panel']?.value === 'string') {
    const panel = settings['reward.panel'].value;
    if (!BUILTIN_PANELS.some((p) => p.name === panel)) {
      problems.push(
        `${where}: reward.panel '${panel}' is not a built-in panel (${BUILTIN_PANELS.map((p) => p.name).join(', ')})`,
      );
    }
  }
  if (problems.length > 0) return { recipe: null, problems };
  return {
    recipe: {
      schema: RECIPE_SCHEMA,
      name: doc.name as string,
      paper: {
        title: String(paper?.title),
        ...(typeof paper?.authors === 'string' ? { authors: paper.authors } : {}),
        ...(typeof paper?.arxiv === 'string' ? { arxiv: paper.arxiv } : {}),
      },
      protocol: doc.protocol as ProtocolName,
      settings,
      engines,
    },
    problems,
  };
}

/** One `--set`: a recipe setting (`rl.lr`) or an engine key (`verl.actor_rollout_ref.rollout.n`). */
export interface Assignment {
  key: string;
  value: unknown;
}

/** Splits `key=value` at the first '='; the value is left as text for the caller to parse. */
export function splitAssignment(text: string): { key: string; text: string } | null {
  const i = text.indexOf('=');
  if (i <= 0) return null;
  return { key: text.slice(0, i).trim(), text: text.slice(i + 1) };
}

/** The recipe with each assignment applied (a new object); problems name assignments that cannot apply. */
export function applyAssignments(recipe: Recipe, assignments: Assignment[]): { recipe: Recipe; problems: string[] } {
  const out: Recipe = structuredClone(recipe);
  const problems: string[] = [];
  for (const { key, value } of assignments) {
    const dot = key.indexOf('.');
    const head = dot > 0 ? key.slice(0, dot) : '';
    if ((ENGINE_NAMES as readonly string[]).includes(head)) {
      const engineKey = key.slice(dot + 1);
      if (!ENGINE_KEY.test(engineKey)) problems.push(`--set ${key}: '${engineKey}' is not a dotted config key`);
      else if (!isEngineValue(value)) problems.push(`--set ${key}: a number, string, boolean, null or list`);
      else out.engines[head as LaunchEngine][engineKey] = { value, set: '--set on the command line' };
      continue;
    }
    const bad = checkSettingValue(key, value);
    if (bad) {
      problems.push(
        `--set ${key}: ${bad}${RECIPE_SETTINGS[key] ? '' : '; engine keys are verl.<key>, skyrl.<key> or trl.<key>'}`,
      );
      continue;
    }
    const before = out.settings[key];
    out.settings[key] = {
      value: value as SettingValue,
      set: '--set on the command line',
      ...(before ? { note: `the recipe's value was ${show(before.value)}` } : {}),
    };
  }
  return { recipe: out, problems };
}

/** The setting's value, when the recipe has it. */
export function settingValue<T extends SettingValue = SettingValue>(recipe: Recipe, key: string): T | undefined {
  return recipe.settings[key]?.value as T | undefined;
}

/** Where a value comes from, in a few words, for tables: "paper: App. B", "Quarry's choice", "--set". */
export function provenanceLabel(p: Provenance): string {
  if (p.set) return '--set';
  if (p.source) return `paper: ${p.source}`;
  return "Quarry's choice";
}

/**
 * How the recipe's reward numbers differ from the built-in panel it names (launches pass the panel by name, so a
 * difference is a number the run would not use). Empty when they agree or the recipe states none.
 */
export function rewardDifferences(recipe: Recipe, panels: readonly PanelSpec[] = BUILTIN_PANELS): string[] {
  const terms = settingValue<RewardTerms>(recipe, 'reward.terms');
  const panelName = settingValue<string>(recipe, 'reward.panel');
  const panel = panels.find((p) => p.name === panelName);
  if (!terms || !panel) return [];
  const out: string[] = [];
  const panelTerms = new Map((panel.terms ?? []).map((t) => [t.name, t]));
  for (const [name, spec] of Object.entries(terms)) {
    const t = panelTerms.get(name);
    if (!t) {
      out.push(`term '${name}' is not in panel '${panel.name}' (its terms: ${[...panelTerms.keys()].join(', ')})`);
      continue;
    }
    const weight = t.weight ?? 1;
    if (spec.weight !== undefined && spec.weight !== weight)
      out.push(`${name}.weight: recipe ${spec.weight}, panel ${weight}`);
    for (const [p, v] of Object.entries(spec.params ?? {})) {
      const defaults = BUILTIN_TERMS.find((d) => d.id === t.term)?.defaultParams;
      const pv = t.params?.[p] ?? defaults?.[p];
      if (pv !== v) out.push(`${name}.params.${p}: recipe ${v}, panel ${pv === undefined ? 'none' : String(pv)}`);
    }
  }
  return out;
}
