// `quarry doctor`: which Python interpreter training would use, each engine's version or why it is missing, the GPUs
// it sees, and what to run to fix it. The same report as the editor's "Quarry: Check Training Environment".
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command } from '../command';
import { UsageError, EXIT } from '../command';
import { choosePython, probePythonEnv, renderPythonEnvReport } from '../../core/training/pythonEnv';
import { repoRootOf } from '../repoRoot';

const usage = `Usage: quarry doctor [--python PATH] [--json] [--timeout-ms N]

Checks the Python environment training uses: the interpreter (--python, else QUARRY_PYTHON, else the nearest .venv/
from the working directory up, else python3 on PATH), each engine (quarry-trainer, torch, transformers, trl, peft,
accelerate, datasets, verl, skyrl-gym, skyrl-train, ray, vllm, onnx, onnxscript, onnxruntime): its version, or why it
is missing or does not import; the GPUs torch and nvidia-smi see; and what to run to fix what is missing.
Exit codes: 0 ready (quarry-trainer, torch, transformers and trl import), 1 not ready, 2 bad input.`;

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'Check the Python training environment: interpreter, engines, GPUs, and how to fix it',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { python: { type: 'string' }, json: { type: 'boolean' }, 'timeout-ms': { type: 'string' } },
    });
    const t = values['timeout-ms'];
    if (t !== undefined && !/^\d+$/.test(t)) throw new UsageError(`--timeout-ms must be a whole number, got '${t}'`);
    const python = choosePython({
      flag: values.python ? resolve(io.cwd, values.python) : undefined,
      setting: process.env.QUARRY_PYTHON,
      searchRoots: [io.cwd, repoRootOf(__dirname)].filter((d): d is string => d !== undefined),
    });
    const report = await probePythonEnv(python, {
      timeoutMs: t ? Number(t) : undefined,
      repoRoot: repoRootOf(__dirname),
    });
    io.stdout.write((values.json ? JSON.stringify(report, null, 2) : renderPythonEnvReport(report)) + '\n');
    return report.ready ? EXIT.ok : 1;
  },
};
