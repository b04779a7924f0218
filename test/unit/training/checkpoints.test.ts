// Checkpoint discovery in every engine's layout (as the engines' own source writes them: transformers' trainer.py
// checkpoint-N, verl's global_step_N/actor with FSDP shards and huggingface/, SkyRL's global_step_N/policy), the job's
// metrics at each step (the last step's loss beside the run's closing summary), and `quarry checkpoints list` /
// `export-onnx`'s refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { findCheckpoints, readMetrics } from '../../../src/core/training/checkpoints';
import { main } from '../../../src/cli/main';
import { tempDir } from '../../helpers/fixtures';
import { runQuarry } from '../../support/cli';
import { finishedJobCheckpoint } from '../../support/checkpointFixtures';

function touch(path: string, text = '') {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

function jobTree(): string {
  const root = tempDir();
  // TRL / transformers Trainer
  for (const n of [100, 200]) {
    touch(join(root, 'trl', `checkpoint-${n}`, 'config.json'), '{}');
    touch(join(root, 'trl', `checkpoint-${n}`, 'model.safetensors'));
  }
  touch(
    join(root, 'trl', 'checkpoint-200', 'trainer_state.json'),
    JSON.stringify({
      log_history: [
        { step: 100, loss: 2 },
        { step: 200, loss: 1.5, reward: 0.4 },
      ],
    }),
  );
  touch(join(root, 'trl', 'checkpoint-300', 'optimizer.pt'));
  // verl: shards only, then shards + huggingface/ with full weights
  touch(join(root, 'verl', 'global_step_10', 'actor', 'model_world_size_2_rank_0.pt'));
  touch(join(root, 'verl', 'global_step_10', 'actor', 'model_world_size_2_rank_1.pt'));
  touch(join(root, 'verl', 'global_step_10', 'actor', 'huggingface', 'config.json'), '{}');
  touch(join(root, 'verl', 'global_step_20', 'actor', 'model_world_size_1_rank_0.pt'));
  touch(join(root, 'verl', 'global_step_20', 'actor', 'huggingface', 'config.json'), '{}');
  touch(join(root, 'verl', 'global_step_20', 'actor', 'huggingface', 'model-00001-of-00002.safetensors'));
  touch(join(root, 'verl', 'global_step_20', 'actor', 'huggingface', 'model.safetensors.index.json'), '{}');
  // SkyRL: trainer state (ckpt_path) and the HF export (export_path)
  touch(join(root, 'skyrl', 'ckpts', 'global_step_5', 'policy', 'model_state.pt'));
  touch(join(root, 'skyrl', 'exports', 'global_step_5', 'policy', 'config.json'), '{}');
  touch(join(root, 'skyrl', 'exports', 'global_step_5', 'policy', 'model.safetensors'));
  writeFileSync(
    join(root, 'metrics.jsonl'),
    [{ step: 5, reward: 0.1 }, { step: 15, reward: 0.3 }, 'torn', { step: 150, reward: 0.5 }]
      .map((x) => (typeof x === 'string' ? '{"step": 1' : JSON.stringify(x)))
      .join('\n'),
  );
  return root;
}

test("findCheckpoints: every engine's layout, loadable or what to do, and the metrics of its step", () => {
  const root = jobTree();
  const found = findCheckpoints(root);
  assert.deepEqual(
    found.map((c) => [c.engine, c.step, c.name, c.layout, c.loadable]),
    [
      ['skyrl', 5, 'skyrl/ckpts/global_step_5/policy', 'skyrl-sharded', false],
      ['skyrl', 5, 'skyrl/exports/global_step_5/policy', 'hf', true],
      ['trl', 100, 'trl/checkpoint-100', 'hf', true],
      ['trl', 200, 'trl/checkpoint-200', 'hf', true],
      ['trl', 300, 'trl/checkpoint-300', 'hf', false],
      ['verl', 10, 'verl/global_step_10/actor', 'verl-fsdp', false],
      ['verl', 20, 'verl/global_step_20/actor', 'verl-fsdp', true],
    ],
  );
  const verl10 = found.find((c) => c.engine === 'verl' && c.step === 10)!;
  assert.match(
    verl10.note ?? '',
    /^2 FSDP shard\(s\): merge them with `python -m verl\.model_merger merge --backend fsdp --local_dir /,
  );
  assert.equal(
    found.find((c) => c.engine === 'verl' && c.step === 20)!.path,
    join(root, 'verl', 'global_step_20', 'actor', 'huggingface'),
  );
  // metrics.jsonl: the last row at or before the step; a torn line is skipped
  assert.deepEqual(
    readMetrics(join(root, 'metrics.jsonl')).map((r) => r.step),
    [5, 15, 150],
  );
  assert.deepEqual(found.find((c) => c.name === 'trl/checkpoint-200')!.metrics, { step: 150, reward: 0.5 });
  assert.deepEqual(found.find((c) => c.engine === 'verl' && c.step === 10)!.metrics, { step: 5, reward: 0.1 });
});

test(
  'quarry checkpoints list --json and export-onnx ' + 'refusing a folder that is not a Hugging Face checkpoint',
  async () => {
    const root = jobTree();
    let out = '';
    let err = '';
    const io = {
      stdout: new Writable({
        write(c, _e, cb) {
          out += String(c);
          cb();
        },
      }),
      stderr: new Writable({
        write(c, _e, cb) {
          err += String(c);
          cb();
        },
      }),
      cwd: root,
    };
    assert.equal(await main(['checkpoints', 'list', root, '--json'], io), 0);
    assert.equal((JSON.parse(out) as { checkpoints: unknown[] }).checkpoints.length, 7);
    assert.equal(
      await main(
        [
          'checkpoints',
          'export-onnx',
          '--checkpoint',
          join(root, 'verl', 'global_step_10', 'actor'),
          '--out',
          join(root, 'x'),
        ],
        io,
      ),
      2,
    );
    assert.match(err, /is not a Hugging Face checkpoint/);
    assert.equal(await main(['checkpoints', 'list', join(root, 'missing')], io), 2);
  },
);

test('quarry checkpoints list: the last checkpoint of a TRL run keeps its loss beside the run summary', async () => {
  const repoRoot = join(__dirname, '..', '..', '..', '..');
  const workspace = tempDir();
  const last = finishedJobCheckpoint(repoRoot, workspace, 'sft-run', { step: 4 });
  const out = join(last, '..');
  touch(join(out, 'checkpoint-2', 'config.json'), '{}');
  touch(join(out, 'checkpoint-2', 'model.safetensors'));
  // metrics.jsonl as quarry_trainer.train.callbacks.MetricsJsonl writes it: a row per logged step, then, at the
  // last step again, the summary transformers logs when training ends.
  const rows = [1, 2, 3, 4].map((step) => ({
    step,
    epoch: step / 4,
    seconds: step,
    loss: 3 - step / 2,
    grad_norm: 1,
    lr: 0.0005,
  }));
  const summary = { step: 4, epoch: 1, seconds: 4.5, train_runtime: 4.4, train_loss: 2.25, total_flos: 10 };
  writeFileSync(join(out, 'metrics.jsonl'), [...rows, summary].map((r) => JSON.stringify(r) + '\n').join(''));
  const found = findCheckpoints(out);
  assert.deepEqual(
    found.map((c) => [c.name, c.metrics?.loss]),
    [
      ['checkpoint-2', 2],
      ['checkpoint-4', 1],
    ],
  );
  assert.equal(found[1].metrics?.train_loss, 2.25, "the summary's values are kept too");
  const listed = await runQuarry(['checkpoints', 'list', out]);
  assert.equal(listed.code, 0, listed.err);
  assert.match(listed.out, /step +4 {2}checkpoint-4 {2}loadable {2}\(loss 1\.0000\)/);
});
