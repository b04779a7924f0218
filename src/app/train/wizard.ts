// What "Quarry: Train a Model…" offers and builds, without the editor: the choices (built-in recipes, `quarry data`
// folders in the workspace, the targets named in .quarry/targets.json besides `local`), and the job itself — for verl
// and SkyRL the launch `quarry train` writes (prepareTrain + writeLaunch: launch.sh, launch.json, job.json, after the
// pre-flight; for TRL on RL rows, `quarry train --engine trl`'s GRPO launch), and for TRL on SFT data the recipe's SFT
// stage run by quarry_trainer.train.sft. Either way the result is a saved
// job.json spec the user may edit before it is submitted through app/jobs.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { jobSpecProblem, type JobSpec } from '../../core/training/jobs/job';
import { settingValue, type Recipe } from '../../core/training/recipe';
import { parseTargets } from '../../core/training/jobs/targets';
import type { Finding } from '../../core/training/preflight';
import { listBuiltinRecipes, readRecipe } from './recipes';
import { prepareTrain, writeLaunch } from './index';
import { hardwareProblems } from './resources';
import { jobDisplayName } from './wizardChoices';
import type { SeenGpus } from '../../core/training/gpus';
import { QUARRY_LAYOUT, quarryPath } from '../../core/workspace/quarryLayout';

export type WizardEngine = 'trl' | 'verl' | 'skyrl';
export const WIZARD_ENGINES: readonly WizardEngine[] = ['trl', 'verl', 'skyrl'];

/** verl's file logger beside the console, so the job panel charts the run as it goes (verl/utils/tracking.py). */
export const VERL_FILE_LOGGER_SET = "verl.trainer.logger=['console','file']";

export interface WizardChoices {
  /** A built-in recipe name or a recipe file. */
  recipe: string;
  model: string;
  /** A `quarry data` folder (rl for verl/SkyRL; sft for TRL) or an SFT JSONL file. */
  data: string;
  engine: WizardEngine;
  target: string;
  /** GPUs per node (0: the CPU; TRL only). */
  gpus: number;
  nodes: number;
  /** TRL only: stop after this many optimiser steps. */
  maxSteps: number | null;
  /** Where the launch is written (default: .quarry/launches/<recipe>-<engine>-<time>). */
  out?: string;
}

/** A data folder `quarry data` wrote, found in the workspace. */
export interface DataFolder {
  dir: string;
  kind: string;
  label: string;
}

/** Folders with a quarry.data/1 data.json, searched `depth` levels under `root` (skipping dot folders and deps). */
export function findDataFolders(root: string, depth = 4): DataFolder[] {
  const out: DataFolder[] = [];
  const visit = (dir: string, left: number) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    if (names.includes('data.json')) {
      try {
        const doc = JSON.parse(readFileSync(join(dir, 'data.json'), 'utf8')) as {
          schema?: string;
          kind?: string;
          counts?: { written?: number };
        };
        if (doc.schema === 'quarry.data/1') {
          const rows = doc.counts?.written;
          out.push({
            dir,
            kind: String(doc.kind ?? '?'),
            label: `${relative(root, dir) || '.'} (${doc.kind ?? '?'}${rows !== undefined ? `, ${rows} rows` : ''})`,
          });
        }
      } catch {
        /* not ours */
      }
    }
    if (left === 0) return;
    for (const n of names.sort()) {
      if (n.startsWith('.') || n === 'node_modules' || n === '__pycache__') continue;
      const p = join(dir, n);
      try {
        if (statSync(p).isDirectory()) visit(p, left - 1);
      } catch {
        /* gone */
      }
    }
  };
  visit(root, depth);
  // The data the wizard made (app/train/wizardData.ts) is under .quarry/data, which the walk above skips.
  visit(quarryPath(root, 'data'), 1);
  return out;
}

/**
 * The target names: `local`, then those in .quarry/targets.json — an object keyed by name (`{"gpu-box": {...}}`),
 * or `{"targets": …}` holding such an object or a list of `{"name": …}`.
 */
export function targetNames(workspace: string): { names: string[]; problem: string | null } {
  const file = quarryPath(workspace, 'targets');
  const names = ['local'];
  if (!existsSync(file)) return { names, problem: null };
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { names, problem: `${file} is not JSON: ${(err as Error).message}` };
  }
  try {
    // The format the job targets read (core/training/jobs/targets.ts): an object of named targets.
    for (const n of Object.keys(parseTargets(doc, file))) if (!names.includes(n)) names.push(n);
  } catch (err) {
    return { names, problem: (err as Error).message };
  }
  return { names, problem: null };
}

export function builtinRecipeChoices(): Array<{ name: string; file: string; title: string }> {
  return listBuiltinRecipes().map((r) => {
    let title = '';
    try {
      title = readRecipe(r.file, '/').paper.title;
    } catch {
      /* shown without its title */
    }
    return { ...r, title };
  });
}

/** The recipe's base model and hardware, to offer as defaults. */
export function recipeDefaults(recipe: Recipe): { model: string | null; gpus: number | null; nodes: number | null } {
  return {
    model: settingValue<string>(recipe, 'model.base') ?? null,
    gpus: settingValue<number>(recipe, 'hardware.gpus_per_node') ?? null,
    nodes: settingValue<number>(recipe, 'hardware.nodes') ?? null,
  };
}

export interface PreparedJob {
  /** The saved spec (job.json) the user may edit before submitting. */
  specFile: string;
  spec: JobSpec;
  outDir: string;
  findings: Finding[];
  /** Errors that stop the launch (the pre-flight's), empty when it may go. */
  errors: string[];
}

export interface PrepareEnv {
  workspace: string;
  python: string;
  /** The GPUs the target has (core/training/gpus.ts), when known: a launch it cannot run is refused. */
  gpus?: SeenGpus | null;
  /** The checkout or extension folder holding trainer/ and bin/quarry. */
  repoRoot: string;
  now?: Date;
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
}

/**
 * The TRL job: the recipe's SFT stage (sft.* settings) with quarry_trainer.train.sft. It writes into `out/` of the
 * folder the job runs in: every target runs a job in its own job folder and brings back (or relays) that `out/`'s
 * metrics.jsonl and checkpoints, so the panel charts it wherever it runs. On a target other than `local` the program is
 * `python`, which the target replaces with its own "python" (this machine's interpreter path means nothing there).
 */
export function trlSftCommand(recipe: Recipe, c: WizardChoices, python: string): string[] {
  const program = c.target === 'local' ? python : 'python';
  const cmd = [program, '-m', 'quarry_trainer.train.sft', '--model', c.model, '--data', c.data, '--out', 'out'];
  const num = (k: string) => settingValue<number>(recipe, k);
  const lr = num('sft.lr');
  const epochs = num('sft.epochs');
  const perDevice = num('sft.per_device_batch_size');
  const batch = num('sft.batch_size');
  const warmup = num('sft.warmup_ratio');
  const scheduler = settingValue<string>(recipe, 'sft.scheduler');
  if (lr !== undefined) cmd.push('--lr', String(lr));
  if (epochs !== undefined) cmd.push('--epochs', String(epochs));
  const devices = Math.max(1, c.gpus) * Math.max(1, c.nodes);
  // Without a per-device size, at most 8 sequences a pass (quarry_trainer.train.sft's default), the rest accumulated.
  const micro = perDevice ?? (batch !== undefined ? Math.max(1, Math.min(8, Math.floor(batch / devices))) : undefined);
  if (micro !== undefined) cmd.push('--batch-size', String(micro));
  if (batch !== undefined && micro !== undefined && batch > micro * devices) {
    cmd.push('--grad-accum', String(Math.max(1, Math.round(batch / (micro * devices)))));
  }
  if (warmup !== undefined) cmd.push('--warmup-ratio', String(warmup));
  if (typeof scheduler === 'string') cmd.push('--scheduler', scheduler);
  // A run cut to N steps saves checkpoint-N (HF Trainer's save_steps): Load Checkpoint… lists it once the job ends.
  if (c.maxSteps !== null) cmd.push('--max-steps', String(c.maxSteps), '--save-steps', String(c.maxSteps));
  if (c.gpus === 0) cmd.push('--cpu');
  return cmd;
}

/** RL rows (`quarry data rl`'s folder: train.jsonl / train.parquet), which TRL trains on with GRPO; else SFT data. */
export function isRlData(data: string, workspace: string): boolean {
  const path = resolve(workspace, data);
  if (/train\.(jsonl|parquet)$/.test(path)) return true;
  return existsSync(join(path, 'train.jsonl')) || existsSync(join(path, 'train.parquet'));
}

/**
 * Writes the launch for the choices and its job.json (not submitted). For verl and SkyRL the pre-flight runs first;
 * its errors come back in `errors` and nothing is written then.
 */
export async function prepareJob(c: WizardChoices, env: PrepareEnv): Promise<PreparedJob> {
  const recipe = readRecipe(c.recipe, env.workspace);
  const outDir = resolve(
    env.workspace,
    c.out ?? join(QUARRY_LAYOUT.launches, `${recipe.name}-${c.engine}-${stamp(env.now ?? new Date())}`),
  );
  const specFile = join(outDir, 'job.json');
  const rl = isRlData(c.data, env.workspace);
  // Named by what differs between runs; the target is shown beside the name, not in it.
  const name = jobDisplayName({
    model: c.model,
    data: c.data,
    engine: c.engine,
    stage: c.engine !== 'trl' ? 'RL' : rl ? 'GRPO' : 'SFT',
    now: env.now ?? new Date(),
  });
  // The target's hardware first: a GPU launch on a machine without CUDA is refused before anything is written.
  const hardware = hardwareProblems(c, env.gpus ?? null);
  if (hardware.length > 0) {
    const findings = hardware.map((message) => ({ level: 'error' as const, check: 'hardware', message }));
    return {
      specFile,
      spec: { target: c.target, command: [] },
      outDir,
      findings,
      errors: hardware.map((m) => `[hardware] ${m}`),
    };
  }
  if (c.engine === 'trl' && !rl) {
    mkdirSync(outDir, { recursive: true });
    const spec: JobSpec = {
      name,
      target: c.target,
      engine: 'trl',
      recipe: recipe.name,
      model: c.model,
      data: c.data,
      command: trlSftCommand(recipe, c, env.python),
      cwd: outDir,
      env: c.gpus > 0 ? { CUDA_VISIBLE_DEVICES: [...Array(c.gpus).keys()].join(',') } : {},
    };
    writeFileSync(specFile, `${JSON.stringify(spec, null, 2)}\n`);
    return { specFile, spec, outDir, findings: [], errors: [] };
  }
  // A CPU-only TRL run (0 GPUs) keeps the recipe's hardware as the paper's record.
  const sets = c.gpus > 0 ? [`hardware.gpus_per_node=${c.gpus}`, `hardware.nodes=${c.nodes}`] : [];
  if (c.engine === 'verl') sets.push(VERL_FILE_LOGGER_SET);
  const plan = await prepareTrain({
    recipe: c.recipe,
    engine: c.engine,
    model: c.model,
    data: c.data,
    out: outDir,
    sets,
    cwd: env.workspace,
    python: env.python,
    repoRoot: env.repoRoot,
    quarryCommand: join(env.repoRoot, 'bin', 'quarry'),
    dryRun: false,
    env: process.env,
  });
  const errors = plan.findings.filter((f) => f.level === 'error').map((f) => `[${f.check}] ${f.message}`);
  if (!plan.ok) return { specFile, spec: { target: c.target, command: [] }, outDir, findings: plan.findings, errors };
  writeLaunch(plan, outDir, ['quarry', 'train', '--recipe', c.recipe, '--engine', c.engine], true);
  const spec = JSON.parse(readFileSync(specFile, 'utf8')) as JobSpec;
  spec.target = c.target;
  spec.name = name;
  if (c.engine === 'verl') spec.env = { ...(spec.env ?? {}), VERL_FILE_LOGGER_PATH: join(outDir, 'metrics.jsonl') };
  // TRL trains where the job runs, with the project's Python and this checkout's quarry_trainer.
  if (c.engine === 'trl')
    spec.env = { ...(spec.env ?? {}), PYTHON: env.python, PYTHONPATH: join(env.repoRoot, 'trainer') };
  writeFileSync(specFile, `${JSON.stringify(spec, null, 2)}\n`);
  return { specFile, spec, outDir, findings: plan.findings, errors };
}

/** The saved spec as it is now (the user may have edited it), or why it cannot be submitted. */
export function readSpec(file: string): { spec: JobSpec } | { problem: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { problem: `${file} is not JSON: ${(err as Error).message}` };
  }
  const problem = jobSpecProblem(doc);
  return problem ? { problem: `${file}: ${problem}` } : { spec: doc as JobSpec };
}
