// A checkpoint's provenance from the files training left: the step in its path, run.json found above it (data hashes,
// base model), the job it lives in (engine, recipe), and the default registry name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkpointProvenance,
  defaultModelName,
  jobIdOfPath,
  stepOfPath,
} from '../../../src/app/checkpoints/provenance';
import { JobStore } from '../../../src/app/jobs/store';
import { newJobRecord } from '../../../src/core/training/jobs/job';
import { tempDir } from '../../helpers/fixtures';

test('the step and the job id are read from the path', () => {
  assert.equal(stepOfPath('/w/out/checkpoint-40'), 40);
  assert.equal(stepOfPath('/w/out/global_step_7/actor/huggingface'), 7);
  assert.equal(stepOfPath('/w/out/final'), null);
  assert.equal(jobIdOfPath('/w/.quarry/jobs/20260101-000000-abcd/out/checkpoint-2'), '20260101-000000-abcd');
  assert.equal(jobIdOfPath('/w/runs/checkpoint-2'), null);
});

test('a TRL checkpoint inside a job: run.json data hashes and base model, the job engine and recipe', () => {
  const ws = tempDir('quarry-prov-');
  const store = new JobStore(ws);
  const job = newJobRecord(
    { target: 'local', command: ['true'], engine: 'trl', recipe: 'sft-tiny', model: 'from-job' },
    'job-a',
  );
  const dir = store.create(job);
  const ckpt = join(dir, 'out', 'checkpoint-2');
  mkdirSync(ckpt, { recursive: true });
  writeFileSync(join(ckpt, 'config.json'), JSON.stringify({ _name_or_path: 'media/models/tiny-sql' }));
  writeFileSync(
    join(dir, 'out', 'run.json'),
    JSON.stringify({
      schema: 'quarry.run/1',
      kind: 'sft',
      config: { model: 'media/models/tiny-sql', data: 'sft.jsonl' },
      data: [{ path: '/d/sft.jsonl', sha256: 'f'.repeat(64) }, { path: 3 }],
    }),
  );
  const p = checkpointProvenance(ckpt, { workspace: ws });
  assert.deepEqual(p, {
    checkpoint: ckpt,
    jobId: 'job-a',
    step: 2,
    engine: 'trl',
    recipe: 'sft-tiny',
    baseModel: 'media/models/tiny-sql',
    data: [{ path: '/d/sft.jsonl', sha256: 'f'.repeat(64) }],
    runJson: join(dir, 'out', 'run.json'),
  });
  assert.throws(() => checkpointProvenance(ckpt, { workspace: ws, jobId: 'missing' }), /no job missing/);
});

test('without run.json or a job: config.json names the base model, the engine is unknown', () => {
  const ws = tempDir('quarry-prov-');
  const ckpt = join(ws, 'loose', 'checkpoint-5');
  mkdirSync(ckpt, { recursive: true });
  writeFileSync(join(ckpt, 'config.json'), JSON.stringify({ _name_or_path: '/base/qwen' }));
  const p = checkpointProvenance(ckpt, { workspace: ws });
  assert.equal(p.baseModel, '/base/qwen');
  assert.equal(p.engine, null);
  assert.equal(p.runJson, null);
  assert.deepEqual(p.data, []);
});

test('the default name is the run folder and the step', () => {
  assert.equal(defaultModelName('/w/runs/sft run/checkpoint-2'), 'sft-run-step2');
  assert.equal(defaultModelName('/w/.quarry/jobs/j1/out/final'), 'j1-final');
  assert.equal(defaultModelName('/w/ckpts/v1/global_step_30/actor/huggingface'), 'v1-step30');
  assert.equal(defaultModelName('/m/tiny-sql'), 'tiny-sql');
});
