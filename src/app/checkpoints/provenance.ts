// Where a checkpoint came from, read from the files training left beside it: its step (checkpoint-N, global_step_N),
// the run's run.json (quarry_trainer.train.run: config, data files with sha256) found in the checkpoint's folder or up
// to three folders above it, the base model (run.json's --model, else config.json's _name_or_path), and the job
// (given, or the .quarry/jobs/<id>/ folder the checkpoint lives in) with its engine and recipe.
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { JobStore } from '../jobs/store';
import { readRegularFileOrNull } from '../../core/training/boundedRead';
import type { DataHash, Provenance } from '../../core/training/modelRegistry';

/** A JSON object from a regular file of at most 16 MiB (run.json, config.json); null for anything else. */
function readJson(file: string): Record<string, unknown> | null {
  const text = readRegularFileOrNull(file, 16 << 20);
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The training step in a checkpoint's path: the nearest checkpoint-N or global_step_N folder at or above it. */
export function stepOfPath(path: string): number | null {
  for (const part of resolve(path).split(sep).reverse()) {
    const m = /^(?:checkpoint-|global_step_)(\d+)$/.exec(part);
    if (m) return Number(m[1]);
  }
  return null;
}

/** The job id in a path inside `.quarry/jobs/<id>/`, or null. */
export function jobIdOfPath(path: string): string | null {
  const m = /[\\/]\.quarry[\\/]jobs[\\/]([\w.-]+)(?:[\\/]|$)/.exec(resolve(path));
  return m ? m[1] : null;
}

function findRunJson(checkpoint: string): string | null {
  let dir = resolve(checkpoint);
  for (let i = 0; i < 4; i++) {
    const f = join(dir, 'run.json');
    if (existsSync(f)) return f;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

function baseModelOf(run: Record<string, unknown> | null, checkpoint: string): string | null {
  const config = run && typeof run.config === 'object' && run.config ? (run.config as Record<string, unknown>) : null;
  const quarry =
    config && typeof config.quarry === 'object' && config.quarry ? (config.quarry as Record<string, unknown>) : null;
  const fromRun = config?.model ?? quarry?.model;
  if (typeof fromRun === 'string' && fromRun !== '') return fromRun;
  const hf = readJson(join(checkpoint, 'config.json'));
  const name = hf?._name_or_path;
  return typeof name === 'string' && name !== '' && resolve(name) !== resolve(checkpoint) ? name : null;
}

export function checkpointProvenance(checkpoint: string, opts: { workspace: string; jobId?: string }): Provenance {
  const abs = resolve(checkpoint);
  const runJson = findRunJson(abs);
  const run = runJson ? readJson(runJson) : null;
  const data: DataHash[] = Array.isArray(run?.data)
    ? (run!.data as unknown[]).filter(
        (d): d is DataHash =>
          !!d && typeof (d as DataHash).path === 'string' && typeof (d as DataHash).sha256 === 'string',
      )
    : [];
  const jobId = opts.jobId ?? jobIdOfPath(abs);
  let engine: string | null = null;
  let recipe: string | null = null;
  let jobModel: string | null = null;
  if (jobId) {
    const job = new JobStore(opts.workspace).get(jobId); // a named job that is not there is an error, said by the store
    engine = job.engine;
    recipe = job.recipe;
    jobModel = job.model;
  }
  if (!engine && run && typeof run.kind === 'string') engine = `trl-${run.kind}`;
  return {
    checkpoint: abs,
    jobId,
    step: stepOfPath(abs),
    engine,
    recipe,
    baseModel: baseModelOf(run, abs) ?? jobModel,
    data,
    runJson,
  };
}

/** A default registry name for a checkpoint: its run folder and step, e.g. `sft-run-step2`. */
export function defaultModelName(checkpoint: string): string {
  const abs = resolve(checkpoint);
  const step = stepOfPath(abs);
  let run = abs;
  while (/^(checkpoint-\d+|global_step_\d+|actor|policy|huggingface|final|out)$/.test(basename(run))) {
    const up = dirname(run);
    if (up === run) break;
    run = up;
  }
  const base =
    basename(run)
      .replace(/[^\w.-]+/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '') || 'model';
  const tail = step !== null ? `-step${step}` : basename(abs) === 'final' ? '-final' : '';
  return (base + tail).slice(0, 80);
}
