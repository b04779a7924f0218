// What verl's and SkyRL's launch builders share: the inputs of a launch, a row of an engine's mapping table (recipe
// keys → engine keys, citing the engine file that declares them), and turning a table into the override list. The
// tables themselves are verlLaunch.ts and skyrlLaunch.ts; docs/training.md prints them.
import {
  RECIPE_SETTINGS,
  settingValue,
  type EngineValue,
  type LaunchEngine,
  type Recipe,
  type SettingValue,
} from './recipe';
import { dedupeOverrides, type Override } from './overrides';

export interface LaunchInputs {
  recipe: Recipe;
  /** --model: a Hugging Face id, or an absolute path on the machine that trains. */
  model: string;
  /** Absolute path of the training rows (`quarry data rl`'s train.parquet). */
  trainFile: string;
  /** A held-out file beside it (val.parquet / test.parquet), or null: validation is then off. */
  valFile: string | null;
  /** The launch folder (absolute): checkpoints and logs go under it. */
  outDir: string;
  /** Training rows: data.json's count, else the recipe's data.train_size, else null. */
  rows: number | null;
  /** Where `rows` comes from, for messages. */
  rowsFrom: string;
  /** The protocol's stop strings (each turn ends at one). */
  stops: string[];
}

export interface MappingRow {
  /** Recipe keys read; empty for Quarry's own plumbing (data files, the reward plug-in, logging). */
  recipe: readonly string[];
  /** Engine keys written. */
  engine: readonly string[];
  /** The engine file that declares them, relative to the engine's package. */
  file: string;
  /** How the value is converted, when it is not copied. */
  how?: string;
  /** Engine key/value pairs for these inputs; null or [] when the recipe does not set what the row reads. */
  build(inputs: LaunchInputs): Array<[string, EngineValue]> | null;
  /** Keys written with `+` (the engine's config does not declare them). */
  add?: readonly string[];
  /** The values hold `${NAME}` references the launch script defines. */
  shellVars?: boolean;
}

/** A recipe value an engine cannot take, and why. */
export interface NotCarried {
  key: string;
  why: string;
}

export interface EnginePlan {
  engine: LaunchEngine;
  /** The Python module the launch runs (`python3 -m <module> <overrides>`). */
  module: string;
  overrides: Override[];
  notCarried: NotCarried[];
  /** Facts about this launch worth reading before it runs (validation off, steps rounded, …). */
  notes: string[];
}

/** The recipe's value of `key`, typed by the caller. */
export function get<T extends SettingValue>(inputs: LaunchInputs, key: string): T | undefined {
  return settingValue<T>(inputs.recipe, key);
}

/** A row's build that copies one recipe setting to one engine key (nothing when the recipe leaves it out). */
export function copy(key: string, engineKey: string): (i: LaunchInputs) => Array<[string, EngineValue]> | null {
  return (i) => {
    const v = get(i, key);
    return v === undefined ? null : [[engineKey, v as EngineValue]];
  };
}

/** Validation keys: off (-1, false) without a held-out file, else the recipe's frequency and before-training flag. */
export function validation(freqKey: string, beforeKey: string): (i: LaunchInputs) => Array<[string, EngineValue]> {
  return (i) => {
    if (i.valFile === null)
      return [
        [freqKey, -1],
        [beforeKey, false],
      ];
    const freq = get<number>(i, 'rl.test_freq');
    const before = get<boolean>(i, 'rl.val_before_train');
    const out: Array<[string, EngineValue]> = [];
    if (freq !== undefined) out.push([freqKey, freq]);
    if (before !== undefined) out.push([beforeKey, before]);
    return out;
  };
}

/** Runs each row of `table`, then the recipe's own engine keys (they win over the table's). */
export function overridesFrom(table: readonly MappingRow[], engine: LaunchEngine, inputs: LaunchInputs): Override[] {
  const out: Override[] = [];
  for (const row of table) {
    // A row copying one real-valued setting writes it as one (1.0, not 1).
    const float = row.recipe.length === 1 && RECIPE_SETTINGS[row.recipe[0]]?.kind === 'number';
    for (const [key, value] of row.build(inputs) ?? []) {
      out.push({
        key,
        value,
        from: row.recipe.length > 0 ? row.recipe.join(' + ') : 'quarry',
        ...(row.add?.includes(key) ? { add: true } : {}),
        ...(row.shellVars ? { shellVars: true } : {}),
        ...(float && typeof value === 'number' ? { float: true } : {}),
      });
    }
  }
  for (const [rawKey, setting] of Object.entries(inputs.recipe.engines[engine])) {
    const add = rawKey.startsWith('+');
    const key = add ? rawKey.slice(1) : rawKey;
    out.push({ key, value: setting.value, from: setting.set ? '--set' : `engines.${engine}`, ...(add ? { add } : {}) });
  }
  return dedupeOverrides(out);
}

/** Steps per epoch when both engines drop the last partial batch: ⌊rows / batch⌋ (null when rows are unknown). */
export function stepsPerEpoch(rows: number | null, batch: number): number | null {
  return rows === null ? null : Math.floor(rows / batch);
}
