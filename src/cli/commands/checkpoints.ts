// `quarry checkpoints`: checkpoints and the forms they are loaded in. `parity` decodes a reference's prompts greedily
// with the onnx backend and compares the tokens with the ones the trainer's framework (transformers) decoded: the
// same tokens, or the first divergence named.
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { createOnnxModel } from '../../core/models/onnx';
import { checkParity, parityReferenceProblem, type ParityReference } from '../../core/models/onnx/parity';
import { ModelError } from '../../core/models/types';

const usage = `Usage: quarry checkpoints parity --onnx DIR --reference FILE [--json]

parity   Greedy parity between a checkpoint and its ONNX export. FILE is a reference written by the trainer's framework
         (quarry_trainer.parity, or a model folder's reference.json): {"stop_ids": [...], "cases": [{"messages":
         [{role, content}], "max_new_tokens": N, "output_ids": [...]}]}. Each case is decoded greedily by the onnx
         backend from DIR and compared token for token; a difference is reported at its first position.
         --json prints {"equal", "cases": [{"index", "equal", "firstDivergence", "expected", "got"}]}.
Exit codes: 0 every case equal, 1 a divergence, 2 bad input.`;

async function parity(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args: argv, strict: true, allowPositionals: false,
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
        io.stdout.write(d === null ? `case ${o.index}: equal (${o.got.length} tokens)\n`
          : `case ${o.index}: differs at token ${d.position}: expected ${d.expected ?? 'end'}, got ${d.got ?? 'end'} `
            + `(expected ${o.expected.length} tokens, got ${o.got.length})\n`);
      }
      io.stdout.write(equal ? `parity: all ${outcomes.length} cases decode the same tokens\n`
        : `parity: ${outcomes.filter((o) => !o.equal).length} of ${outcomes.length} cases differ\n`);
    }
    return equal ? EXIT.ok : 1;
  } finally {
    await model.close();
  }
}

export const checkpointsCommand: Command = {
  name: 'checkpoints',
  summary: 'Checkpoints and their loaded forms: greedy parity of an ONNX export against its trainer',
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === 'parity') return parity(rest, io);
    throw new UsageError(sub ? `unknown subcommand '${sub}'` : 'a subcommand is required');
  },
};
