// The targets a workspace names: `.quarry/targets.json` (and what the editor's `quarry.targets` setting adds), each
// made into its Target. `local` is always there.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseTargets, type TargetConfig, type TargetsConfig } from '../../../core/training/jobs/targets';
import { LocalTarget } from './local';
import { RayTarget } from './ray';
import { SlurmTarget } from './slurm';
import { SshTarget } from './ssh';
import type { Target } from './target';

export const TARGETS_FILE = '.quarry/targets.json';

/** The workspace's targets.json merged under `extra` (the editor's setting wins on a name both define). */
export function loadTargets(workspace: string, extra: TargetsConfig = {}): TargetsConfig {
  const file = join(workspace, TARGETS_FILE);
  let fromFile: TargetsConfig = {};
  if (existsSync(file)) {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`${file} is not JSON: ${(err as Error).message}`);
    }
    fromFile = parseTargets(doc, file);
  }
  return { ...fromFile, ...parseTargets(extra, 'the quarry.targets setting') };
}

export function makeTarget(name: string, config: TargetConfig): Target {
  switch (config.kind) {
    case 'local':
      return new LocalTarget(name, config.python);
    case 'ssh':
      return new SshTarget(name, config);
    case 'slurm':
      return new SlurmTarget(name, config);
    case 'ray':
      return new RayTarget(name, config);
  }
}

/** The config of a named target (`local` needs none). */
export function targetConfig(targets: TargetsConfig, name: string): TargetConfig {
  const config = targets[name] ?? (name === 'local' ? { kind: 'local' as const } : undefined);
  if (!config) {
    const known = ['local', ...Object.keys(targets).filter((n) => n !== 'local')].join(', ');
    throw new Error(`unknown target '${name}' (known: ${known}): targets are named in ${TARGETS_FILE}`);
  }
  return config;
}
