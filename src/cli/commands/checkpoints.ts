// `quarry checkpoints`: checkpoints and the forms they are loaded in. `list` finds a job's checkpoints in every
// engine's layout (src/core/training/checkpoints.ts); `export-onnx` exports a Hugging Face checkpoint with the
// project's
// Python (quarry_trainer.export) and checks greedy parity; `parity` decodes a reference's prompts greedily with the
// onnx backend and compares the tokens with the ones the trainer's framework (transformers) decoded: the same tokens,
// or the first divergence named.
import { parseArgs } from 'node:util';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { createOnnxModel } from '../../core/models/onnx';
import { checkParity, parityReferenceProblem, type ParityReference } from '../../core/models/onnx/parity';
import { ModelError } from '../../core/models/types';
import { findCheckpoints, hasHfWeights } from '../../core/training/checkpoints';
import { choosePython } from '../../core/training/pythonEnv';
import { repoRootOf } from '../repoRoot';
import { UNSAFE_CHECKPOINT_EXIT } from '../../app/checkpoints/load';
import { compareCmd, evalCmd, loadCmd, loadedCmd, registryUsage, unloadCmd } from './checkpointsRegistry';

const usage = `Usage: quarry checkpoints list DIR [--json]
       quarry checkpoints export-onnx --checkpoint DIR --out DIR [--prompts FILE] [--python PATH] [--json]
       quarry checkpoints parity --onnx DIR --reference FILE [--json]
${registryUsage}

list         The checkpoints under a job's output folder: TRL/Hugging Face checkpoint-N, verl global_step_N/actor
             (FSDP shards, with or without huggingface/ weights), SkyRL global_step_N/policy (export or trainer
             state); each with its step, whether it loads as it is (else what to do), and the job's metrics at that
             step (metrics.jsonl, else TRL's trainer_state.json).
export-onnx  Exports a Hugging Face checkpoint to ONNX for the onnx backend (model.onnx, tokenizer, configs) with the
             project's Python (quarry_trainer.export; the export extra), then checks greedy parity on a few prompts
             (--prompts: a JSON list of chats). Exit 1 when parity fails (the export is kept and the divergence named).

parity   Greedy parity between a checkpoint and its ONNX export. FILE is a reference written by the trainer's framework
         (quarry_trainer.parity, or a model folder's reference.json): {"stop_ids": [...], "cases": [{"messages":
         [{role, content}], "max_new_tokens": N, "output_ids": [...]}]}. Each case is decoded greedily by the onnx
         backend from DIR and compared token for token; a difference is reported at its first position.
         --json prints {"equal", "cases": [{"index", "equal", "firstDivergence", "expected", "got"}]}.
Exit codes: 0 every case equal, 1 a divergence, 2 bad input.`;

async function parity(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: { onnx: { type: 'string' }, reference: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (!values.onnx) throw new UsageError('--onnx DIR is required');
  if (!values.reference) throw new UsageError('--reference FILE is required');
  const refPath = resolve(io.cwd, values.reference);
  let reference: ParityReference;
  try {
    reference = JSON.parse(readFileSync(refPath, 'utf8')) as ParityReference;
  } catch (err) {
    io.stderr.write(`quarry checkpoints parity: cannot read ${refPath}: ${(err as Error).message}\n`);
    return EXIT.badInput;
  }
  const problem = parityReferenceProblem(reference);
  if (problem) {
    io.stderr.write(`quarry checkpoints parity: ${refPath} is not a parity reference: ${problem}\n`);
    return EXIT.badInput;
  }
  let model;
  try {
    model = await createOnnxModel(resolve(io.cwd, values.onnx));
  } catch (err) {
    io.stderr.write(`quarry checkpoints parity: ${err instanceof ModelError ? err.message : (err as Error).message}\n`);
    return EXIT.badInput;
  }
  try {
    const outcomes = await checkParity(model, reference);
    const equal = outcomes.every((o) => o.equal);
    if (values.json) {
      io.stdout.write(JSON.stringify({ equal, cases: outcomes }) + '\n');
    } else {
      for (const o of outcomes) {
        const d = o.firstDivergence;
        io.stdout.write(
          d === null
            ? `case ${o.index}: equal (${o.got.length} tokens)\n`
            : `case ${o.index}: differs at token ${d.position}: expected ${d.expected ?? 'end'}, ` +
                `got ${d.got ?? 'end'} ` +
                `(expected ${o.expected.length} tokens, got ${o.got.length})\n`,
        );
      }
      io.stdout.write(
        equal
          ? `parity: all ${outcomes.length} cases decode the same tokens\n`
          : `parity: ${outcomes.filter((o) => !o.equal).length} of ${outcomes.length} cases differ\n`,
      );
    }
    return equal ? EXIT.ok : 1;
  } finally {
    await model.close();
  }
}

async function listCheckpoints(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { json: { type: 'boolean' } },
  });
  if (positionals.length !== 1) throw new UsageError("give the job's output folder: quarry checkpoints list DIR");
  const dir = resolve(io.cwd, positionals[0]);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    io.stderr.write(`quarry checkpoints list: ${dir} is not a folder\n`);
    return EXIT.badInput;
  }
  const found = findCheckpoints(dir);
  if (values.json) {
    io.stdout.write(JSON.stringify({ dir, checkpoints: found }) + '\n');
    return EXIT.ok;
  }
  if (found.length === 0) {
    io.stdout.write(
      `no checkpoints under ${dir} (looked for checkpoint-N, global_step_N/actor, global_step_N/policy)\n`,
    );
    return EXIT.ok;
  }
  for (const c of found) {
    const metric = c.metrics
      ? ['reward', 'loss', 'train/loss']
          .map((k) => (typeof c.metrics![k] === 'number' ? `${k} ${(c.metrics![k] as number).toFixed(4)}` : null))
          .filter(Boolean)
          .join(', ')
      : '';
    io.stdout.write(
      `${c.engine.padEnd(5)} step ${String(c.step).padStart(6)}  ${c.name}  ` +
        `${c.loadable ? 'loadable' : `needs work: ${c.note}`}${metric ? `  (${metric})` : ''}\n`,
    );
  }
  return EXIT.ok;
}

async function exportOnnx(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      checkpoint: { type: 'string' },
      out: { type: 'string' },
      prompts: { type: 'string' },
      python: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!values.checkpoint) throw new UsageError('--checkpoint DIR is required');
  if (!values.out) throw new UsageError('--out DIR is required');
  const checkpoint = resolve(io.cwd, values.checkpoint);
  if (!hasHfWeights(checkpoint)) {
    io.stderr.write(
      `quarry checkpoints export-onnx: ${checkpoint} is not a Hugging Face checkpoint (config.json and ` +
        `model weights); ` +
        '`quarry checkpoints list` says how to get one from a sharded checkpoint\n',
    );
    return EXIT.badInput;
  }
  const out = resolve(io.cwd, values.out);
  const python = choosePython({
    flag: values.python,
    searchRoots: [io.cwd, repoRootOf(__dirname)].filter((d): d is string => d !== undefined),
  });
  const args = ['-m', 'quarry_trainer.export', '--checkpoint', checkpoint, '--out', out];
  if (values.prompts) args.push('--prompts', resolve(io.cwd, values.prompts));
  io.stderr.write(`exporting ${checkpoint} with ${python.path} (${python.source})…\n`);
  const run = spawnSync(python.path, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.status === UNSAFE_CHECKPOINT_EXIT) {
    const said = run.stderr.trim().split('\n').pop() ?? '';
    io.stderr.write(`quarry checkpoints export-onnx: the checkpoint was not loaded: ${said}\n`);
    return EXIT.badInput;
  }
  if (run.error || run.status !== 0) {
    const why = run.error
      ? run.error.message
      : run.stderr.trim().split('\n').slice(-5).join('\n') || `exit ${run.status}`;
    io.stderr.write(
      `quarry checkpoints export-onnx: the export failed: ${why}\n` +
        `(the exporter needs the project's Python environment with the export extra: npm run ` +
        `setup:python; quarry doctor checks it)\n`,
    );
    return run.status === 2 ? EXIT.badInput : 1;
  }
  const summary = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { reference: string; seconds: number };
  const reference = JSON.parse(readFileSync(summary.reference, 'utf8')) as ParityReference;
  const model = await createOnnxModel(out);
  try {
    const outcomes = await checkParity(model, reference);
    const equal = outcomes.every((o) => o.equal);
    if (values.json) io.stdout.write(JSON.stringify({ ...summary, parity: { equal, cases: outcomes } }) + '\n');
    else {
      io.stdout.write(`exported to ${out} in ${summary.seconds} s (model.onnx, tokenizer, configs)\n`);
      io.stdout.write(
        equal
          ? `parity: all ${outcomes.length} prompts decode the same tokens in transformers and onnxruntime\n`
          : `parity: ${outcomes.filter((o) => !o.equal).length} of ${outcomes.length} prompts differ; first ` +
              `at token ${outcomes.find((o) => !o.equal)!.firstDivergence!.position}\n`,
      );
      io.stdout.write(`use it: quarry ask --model onnx:${out} …\n`);
    }
    return equal ? EXIT.ok : 1;
  } finally {
    await model.close();
  }
}

export const checkpointsCommand: Command = {
  name: 'checkpoints',
  summary: 'Checkpoints of training jobs: find, load (ONNX or served), check parity, evaluate and compare them',
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === 'parity') return parity(rest, io);
    if (sub === 'list') return listCheckpoints(rest, io);
    if (sub === 'export-onnx') return exportOnnx(rest, io);
    if (sub === 'load') return loadCmd(rest, io);
    if (sub === 'unload') return unloadCmd(rest, io);
    if (sub === 'loaded') return loadedCmd(rest, io);
    if (sub === 'eval') return evalCmd(rest, io);
    if (sub === 'compare') return compareCmd(rest, io);
    throw new UsageError(sub ? `unknown subcommand '${sub}'` : 'a subcommand is required');
  },
};
