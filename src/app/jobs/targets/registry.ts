// The targets a workspace names: `.quarry/targets.json` (and what the editor's `quarry.targets` setting adds), each
// made into its Target. `local` is always there. The ssh config file a target names is read and checked here (no
// directive that runs a command on this machine), and passed to ssh by its absolute path, the file that was checked;
// the workspace's own file may not name a config inside the workspace (a cloned repository's file, which could also
// make an attacker's host key known).
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parseTargets, type TargetConfig, type TargetsConfig } from '../../../core/training/jobs/targets';
import { sshConfigProblem } from '../../../core/training/jobs/sshConfigCheck';
import { QUARRY_LAYOUT, quarryPath } from '../../../core/workspace/quarryLayout';
import { LocalTarget } from './local';
import { RayTarget } from './ray';
import { SlurmTarget } from './slurm';
import { SshTarget } from './ssh';
import type { Target } from './target';

/** The workspace's targets.json merged under `extra` (the editor's setting wins on a name both define). */
export function loadTargets(workspace: string, extra: TargetsConfig = {}): TargetsConfig {
  const file = quarryPath(workspace, 'targets');
  let fromFile: TargetsConfig = {};
  if (existsSync(file)) {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`${file} is not JSON: ${(err as Error).message}`);
    }
    fromFile = checkSshConfigs(parseTargets(doc, file), file, workspace);
  }
  const setting = 'the quarry.targets setting';
  return { ...fromFile, ...checkSshConfigs(parseTargets(extra, setting), setting, null) };
}

function inside(dir: string, path: string): boolean {
  const r = relative(dir, path);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/**
 * Each target's sshConfig made absolute (`~/` is the home folder; a relative path is the workspace's) and checked:
 * it says nothing that runs a command here, and (for the workspace's file, `workspace` set) lies outside it.
 */
function checkSshConfigs(targets: TargetsConfig, source: string, workspace: string | null): TargetsConfig {
  const out: TargetsConfig = {};
  for (const [name, config] of Object.entries(targets)) {
    const given = config.kind === 'ssh' || config.kind === 'slurm' ? config.sshConfig : undefined;
    if (given === undefined || given === 'none' || (config.kind !== 'ssh' && config.kind !== 'slurm')) {
      out[name] = config;
      continue;
    }
    const bad = (why: string) => new Error(`${source}: target "${name}": "sshConfig" ${why}`);
    const path = given.startsWith('~/') ? join(homedir(), given.slice(2)) : resolve(workspace ?? '.', given);
    const exists = existsSync(path);
    if (workspace !== null) {
      const ws = realpathSync(workspace);
      if (inside(resolve(workspace), path) || (exists && inside(ws, realpathSync(path)))) {
        throw bad(
          `names ${path}, a file inside the workspace: a repository's own ssh config is not used ` +
            '(keep it outside the workspace, e.g. in ~/.ssh/, or in the quarry.targets user setting)',
        );
      }
    }
    // A file that is not there runs nothing: ssh says it cannot open it.
    const problem = exists ? sshConfigProblem(readFileSync(path, 'utf8')) : null;
    if (problem) {
      throw bad(
        `names ${path}, which ssh would use to run commands on this machine (${problem}): ` +
          'Quarry passes no such config to ssh; put what you need in ~/.ssh/config, which ssh reads itself',
      );
    }
    out[name] = { ...config, sshConfig: path };
  }
  return out;
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
    throw new Error(`unknown target '${name}' (known: ${known}): targets are named in ${QUARRY_LAYOUT.targets}`);
  }
  return config;
}
