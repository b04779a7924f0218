// Finding the checkpoints a training job wrote, for every engine's layout, read from the engines' own source:
// - TRL / Hugging Face Trainer: OUTPUT/checkpoint-N/ (transformers trainer.py, PREFIX_CHECKPOINT_DIR), full weights
//   (model.safetensors or sharded *.safetensors with an index) beside config.json; trainer_state.json's log_history
//   holds the metrics logged up to step N.
// - verl: default_local_dir/global_step_N/actor/ (verl/trainer/ppo/ray_trainer.py _save_checkpoint) holding FSDP shards
//   model_world_size_W_rank_R.pt (verl/utils/checkpoint/fsdp_checkpoint_manager.py) and huggingface/ with the config
//   and tokenizer (and the full model when checkpoint.save_contents includes hf_model); shards are merged with
//   `python -m verl.model_merger merge --backend fsdp`.
// - SkyRL: export_path/global_step_N/policy/ in Hugging Face format (skyrl_train/trainer.py save_models, every
//   trainer.hf_save_interval steps), and ckpt_path/global_step_N/policy/ with the trainer's sharded state
//   (save_checkpoints), which resumes training but is not a model to load.
// A job's own metrics.jsonl (one object per step) gives each checkpoint the metrics of its step. The files read are a
// job folder's (someone else's, when synced or cloned): only regular files, size-capped, so a named pipe where a file
// is expected is passed over instead of blocking the listing.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readRegularFileOrNull } from './boundedRead';

/** The most of metrics.jsonl or trainer_state.json read. */
const MAX_METRICS_BYTES = 64 << 20;

type CheckpointEngine = 'trl' | 'verl' | 'skyrl';
type CheckpointLayout = 'hf' | 'verl-fsdp' | 'skyrl-sharded';

export interface FoundCheckpoint {
  /** The folder to load, merge or resume from. */
  path: string;
  /** Relative to the searched folder. */
  name: string;
  step: number;
  engine: CheckpointEngine;
  layout: CheckpointLayout;
  /** Hugging Face weights are there: transformers loads it (and `export-onnx` exports it) as it is. */
  loadable: boolean;
  /** What has to happen before it can be loaded, when it cannot be as it is. */
  note: string | null;
  /** The metrics logged at (or last before) this step, when the job recorded any. */
  metrics: Record<string, unknown> | null;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function list(p: string): string[] {
  try {
    return readdirSync(p);
  } catch {
    return [];
  }
}

/** Full Hugging Face weights in a folder: a config and safetensors/bin weights (single or sharded with an index). */
export function hasHfWeights(dir: string): boolean {
  if (!existsSync(join(dir, 'config.json'))) return false;
  return list(dir).some(
    (f) => /^(model|pytorch_model)(-\d+-of-\d+)?\.(safetensors|bin)$/.test(f) || /\.safetensors\.index\.json$/.test(f),
  );
}

function stepOf(name: string, prefix: string): number | null {
  const m = new RegExp(`^${prefix}(\\d+)$`).exec(name);
  return m ? Number(m[1]) : null;
}

/** metrics.jsonl of a job: one JSON object per line with a numeric `step`; bad lines are skipped. */
export function readMetrics(file: string): Array<Record<string, unknown> & { step: number }> {
  const text = readRegularFileOrNull(file, MAX_METRICS_BYTES);
  if (text === null) return [];
  const out: Array<Record<string, unknown> & { step: number }> = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (typeof o.step === 'number') out.push(o as Record<string, unknown> & { step: number });
    } catch {
      /* a torn last line of a running job */
    }
  }
  return out.sort((a, b) => a.step - b.step);
}

/**
 * The metrics of the last logged step at or before `step`: every row of that step merged in order. A step can have
 * several rows: the last step of a TRL run has its per-step row (`loss`, `lr`, …) and then the run's closing summary
 * (`train_loss`, `train_runtime`, …, no `loss`), which alone would leave the last checkpoint without its loss.
 */
function metricsAt(
  rows: ReadonlyArray<Record<string, unknown> & { step: number }>,
  step: number,
): Record<string, unknown> | null {
  let at: number | null = null;
  for (const r of rows) if (r.step <= step) at = r.step;
  if (at === null) return null;
  const merged: Record<string, unknown> = {};
  for (const r of rows) if (r.step === at) Object.assign(merged, r);
  return merged;
}

/** TRL's trainer_state.json: the log_history entries up to the checkpoint's step, merged (last value wins). */
function trainerState(dir: string): Record<string, unknown> | null {
  const text = readRegularFileOrNull(join(dir, 'trainer_state.json'), MAX_METRICS_BYTES);
  if (text === null) return null;
  try {
    const s = JSON.parse(text) as {
      log_history?: Array<Record<string, unknown>>;
    };
    const merged: Record<string, unknown> = {};
    for (const e of s.log_history ?? []) Object.assign(merged, e);
    return Object.keys(merged).length ? merged : null;
  } catch {
    return null;
  }
}

/** Every checkpoint under `root` (searched three levels deep), newest step last per engine. */
export function findCheckpoints(root: string): FoundCheckpoint[] {
  const found: FoundCheckpoint[] = [];
  const metrics = readMetrics(join(root, 'metrics.jsonl'));
  const visit = (dir: string, depth: number) => {
    for (const name of list(dir).sort()) {
      const path = join(dir, name);
      if (!isDir(path)) continue;
      const hfStep = stepOf(name, 'checkpoint-');
      const gsStep = stepOf(name, 'global_step_');
      if (hfStep !== null) {
        const loadable = hasHfWeights(path);
        found.push({
          path,
          name: relative(root, path),
          step: hfStep,
          engine: 'trl',
          layout: 'hf',
          loadable,
          note: loadable ? null : 'no Hugging Face weights in it (config.json and model weights expected)',
          metrics: metricsAt(metrics, hfStep) ?? trainerState(path),
        });
        continue;
      }
      if (gsStep !== null) {
        const actor = join(path, 'actor');
        const policy = join(path, 'policy');
        if (isDir(actor)) {
          const hf = join(actor, 'huggingface');
          const shards = list(actor).filter((f) => /^model_world_size_\d+_rank_\d+\.pt$/.test(f));
          const loadable = hasHfWeights(hf);
          found.push({
            path: loadable ? hf : actor,
            name: relative(root, actor),
            step: gsStep,
            engine: 'verl',
            layout: 'verl-fsdp',
            loadable,
            note: loadable
              ? null
              : shards.length
                ? `${shards.length} FSDP shard(s): merge them with \`python -m verl.model_merger merge ` +
                  `--backend fsdp --local_dir ${actor} --target_dir <out>\` on the job's host`
                : 'no FSDP shards and no huggingface/ weights',
            metrics: metricsAt(metrics, gsStep),
          });
        }
        if (isDir(policy)) {
          const loadable = hasHfWeights(policy);
          found.push({
            path: policy,
            name: relative(root, policy),
            step: gsStep,
            engine: 'skyrl',
            layout: loadable ? 'hf' : 'skyrl-sharded',
            loadable,
            note: loadable
              ? null
              : 'trainer state for resuming (ckpt_path); the loadable export is under trainer.export_path ' +
                '(hf_save_interval)',
            metrics: metricsAt(metrics, gsStep),
          });
        }
        continue;
      }
      if (depth < 3) visit(path, depth + 1);
    }
  };
  visit(root, 0);
  return found.sort((a, b) => (a.engine === b.engine ? a.step - b.step : a.engine.localeCompare(b.engine)));
}
