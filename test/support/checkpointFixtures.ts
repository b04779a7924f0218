// Checkpoint fixtures the checkpoint tests share: a finished job in a workspace's .quarry/jobs/ whose out/checkpoint-N
// holds the tiny model's weights and the run's run.json (as quarry_trainer.train.sft writes them), and a registry
// entry for a model that is only served (no checkpoint behind it, e.g. a loopback replay server).
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JobStore } from '../../src/app/jobs/store';
import { newJobRecord, type JobSpec } from '../../src/core/training/jobs/job';
import type { RegisteredModel } from '../../src/core/training/modelRegistry';

const TINY_FILES = [
  'config.json',
  'generation_config.json',
  'model.safetensors',
  'tokenizer.json',
  'tokenizer_config.json',
];

/** A succeeded job `id` whose out/checkpoint-`step` is the tiny model; returns the checkpoint folder. */
export function finishedJobCheckpoint(
  repoRoot: string,
  workspace: string,
  id: string,
  opts: { step?: number; name?: string; spec?: Partial<JobSpec> } = {},
): string {
  const job = newJobRecord({ target: 'local', command: ['true'], engine: 'trl', recipe: 'sft-tiny', ...opts.spec }, id);
  const dir = new JobStore(workspace).create({ ...job, name: opts.name ?? job.name, status: 'succeeded', exitCode: 0 });
  const checkpoint = join(dir, 'out', `checkpoint-${opts.step ?? 2}`);
  mkdirSync(checkpoint, { recursive: true });
  for (const f of TINY_FILES) cpSync(join(repoRoot, 'media', 'models', 'tiny-sql', f), join(checkpoint, f));
  writeFileSync(
    join(dir, 'out', 'run.json'),
    JSON.stringify({ schema: 'quarry.run/1', kind: 'sft', config: { model: 'media/models/tiny-sql' }, data: [] }),
  );
  return checkpoint;
}

/** A registry entry for a served model with no checkpoint behind it. */
export function servedOnlyModel(name: string, spec: string): RegisteredModel {
  return {
    name,
    spec,
    form: 'served',
    loadedAt: new Date().toISOString(),
    provenance: {
      checkpoint: `/nowhere/${name}`,
      jobId: null,
      step: null,
      engine: null,
      recipe: null,
      baseModel: null,
      data: [],
      runJson: null,
    },
    parity: null,
    server: null,
    evaluations: [],
  };
}
