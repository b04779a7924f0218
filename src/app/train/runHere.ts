// Runs a written launch (launch.sh) on this machine, in the foreground: the trainer's output goes to this process's
// stdout/stderr, Ctrl-C and SIGTERM reach the trainer (which saves a checkpoint and stops), and the exit code is the
// launch's. `quarry train --engine trl` uses it; jobs that outlive the terminal go through `quarry jobs submit`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

interface RunHereOptions {
  script: string;
  /** The project's Python (PYTHON in the script). */
  python: string;
  /** The checkout's root: its trainer/ folder goes first on PYTHONPATH, so the trainer matches this CLI. */
  repoRoot?: string;
  extraArgs?: readonly string[];
}

export function runLaunchHere(o: RunHereOptions): Promise<number> {
  const trainer = o.repoRoot ? join(o.repoRoot, 'trainer') : undefined;
  const pythonPath =
    trainer && existsSync(join(trainer, 'quarry_trainer'))
      ? [trainer, process.env.PYTHONPATH].filter(Boolean).join(':')
      : process.env.PYTHONPATH;
  return new Promise((done) => {
    const child = spawn('bash', [o.script, ...(o.extraArgs ?? [])], {
      stdio: 'inherit',
      env: { ...process.env, PYTHON: o.python, ...(pythonPath ? { PYTHONPATH: pythonPath } : {}) },
    });
    const forward = (signal: NodeJS.Signals) => () => {
      child.kill(signal);
    };
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const finish = (code: number) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      done(code);
    };
    child.on('error', () => finish(127));
    child.on('exit', (code, signal) => finish(code ?? (signal ? 128 + 15 : 1)));
  });
}
