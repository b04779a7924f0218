// The engine's own verdict on a launch: `python -m quarry_trainer.preflight` in the project's Python composes the
// engine's Hydra config with the launch's overrides (and, for verl, runs verl's startup validation and loads Quarry's
// plug-ins). Run from a checkout, its trainer/ folder goes first on PYTHONPATH, so the module matches this CLI.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LaunchEngine } from '../../core/training/recipe';

export interface EngineVerdict {
  ok: boolean;
  engine: LaunchEngine;
  engine_version: string | null;
  /** The engine config file composed. */
  config: string | null;
  config_from: string | null;
  composed: boolean;
  unknown_keys: string[];
  errors: { kind: string; message: string }[];
  /** Each override's key with the value the composed config holds. */
  values: Record<string, unknown>;
  /** verl: its validate_config passed (null: not run). */
  validated: boolean | null;
  /** Engine checks that passed, by name. */
  checks: string[];
  python: string | null;
}

interface EnginePreflightOptions {
  python: string;
  engine: LaunchEngine;
  /** Hydra arguments, `${QUARRY_TRAINER_DIR}` left for the module to fill in. */
  overrides: string[];
  skyrlConfig?: string;
  /** The checkout's root, when the CLI runs from one. */
  repoRoot?: string;
  timeoutMs?: number;
}

function failed(engine: LaunchEngine, kind: string, message: string): EngineVerdict {
  return {
    ok: false,
    engine,
    engine_version: null,
    config: null,
    config_from: null,
    composed: false,
    unknown_keys: [],
    errors: [{ kind, message }],
    values: {},
    validated: null,
    checks: [],
    python: null,
  };
}

/** Never throws: an interpreter that is missing or fails is a verdict with an error saying so. */
export function runEnginePreflight(o: EnginePreflightOptions): Promise<EngineVerdict> {
  const timeoutMs = o.timeoutMs ?? 300_000;
  const trainer = o.repoRoot ? join(o.repoRoot, 'trainer') : undefined;
  const pythonPath =
    trainer && existsSync(join(trainer, 'quarry_trainer', 'preflight.py'))
      ? [trainer, process.env.PYTHONPATH].filter(Boolean).join(':')
      : process.env.PYTHONPATH;
  const request = JSON.stringify({
    engine: o.engine,
    overrides: o.overrides,
    ...(o.skyrlConfig ? { skyrl_config: o.skyrlConfig } : {}),
  });
  return new Promise((done) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const child = spawn(o.python, ['-m', 'quarry_trainer.preflight'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONWARNINGS: 'ignore', ...(pythonPath ? { PYTHONPATH: pythonPath } : {}) },
    });
    const finish = (v: EngineVerdict): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(v);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(failed(o.engine, 'timeout', `the engine check did not finish within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 200_000) stderr += d;
    });
    child.on('error', (err) => {
      const why =
        (err as NodeJS.ErrnoException).code === 'ENOENT' ? `no Python interpreter at '${o.python}'` : err.message;
      finish(
        failed(
          o.engine,
          'python',
          `${why}: the engine check needs the project's Python (npm run setup:python, ` +
            'or --python / QUARRY_PYTHON)',
        ),
      );
    });
    child.stdin.on('error', () => {
      /* the child may exit before reading; its exit says why */
    });
    child.stdin.end(request);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        finish(JSON.parse(line) as EngineVerdict);
      } catch {
        const tail = stderr.trim().split('\n').slice(-4).join(' | ').slice(0, 600);
        const missing = /No module named 'quarry_trainer'/.test(stderr);
        finish(
          failed(
            o.engine,
            'python',
            missing
              ? `'${o.python}' has no quarry_trainer: install the trainer package (npm run setup:python in a checkout)`
              : `'${o.python} -m quarry_trainer.preflight' exited ${code} without a verdict: ${tail || 'no output'}`,
          ),
        );
      }
    });
  });
}
