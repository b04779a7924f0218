// Named targets, as written in `.quarry/targets.json` (or the editor's `quarry.targets` setting): where jobs run and
// how to reach it. Checks the shape and says what is wrong in words; splits a target's environment into plain values
// (recorded in job.json) and secrets (named only: their values come from the environment or the editor's
// SecretStorage at submit time and are passed to the job through its environment, never written down).
export type TargetKind = 'local' | 'ssh' | 'slurm' | 'ray';

/** A secret environment variable: its value comes from `from` (default: the same name) at submit time. */
export interface SecretEnv {
  secret: true;
  from?: string;
}
export type TargetEnv = Record<string, string | SecretEnv>;

/** How to reach a host over the system `ssh`: the user's OpenSSH config, keys, agent and known_hosts apply. */
export interface SshEndpoint {
  host: string;
  port?: number;
  user?: string;
  identityFile?: string;
  /** An ssh config file passed with -F instead of ~/.ssh/config. */
  sshConfig?: string;
}

interface Common {
  env?: TargetEnv;
  /** The Python that runs `python …` commands there (default `python3`). */
  python?: string;
  /** Refuse to submit when the remote directory has less free space than this (MB, default 1024). */
  minFreeMB?: number;
}

export interface LocalTargetConfig extends Common {
  kind: 'local';
}
export interface SshTargetConfig extends Common, SshEndpoint {
  kind: 'ssh';
  remoteDir: string;
}
export interface SlurmTargetConfig extends Common, Partial<SshEndpoint> {
  kind: 'slurm';
  /** A directory the login node and the compute nodes share. */
  remoteDir: string;
  partition?: string;
  /** GPUs per node, asked for with `--gres=gpu:N` (default) or `--gpus-per-node=N` (gpuFlag). */
  gpus?: number;
  gpuFlag?: 'gres' | 'gpus-per-node';
  nodes?: number;
  /** Slurm's time limit (e.g. `04:00:00`). */
  time?: string;
  account?: string;
  /** Further sbatch options, each one argument (e.g. `--qos=high`). */
  sbatchArgs?: string[];
}
export interface RayTargetConfig extends Common {
  kind: 'ray';
  /** The dashboard's address, e.g. `http://127.0.0.1:8265`. */
  address: string;
  /** Where on the cluster's node the job's folder goes (default /tmp/quarry-jobs). */
  remoteDir?: string;
}
export type TargetConfig = LocalTargetConfig | SshTargetConfig | SlurmTargetConfig | RayTargetConfig;
export type TargetsConfig = Record<string, TargetConfig>;

const KINDS: readonly TargetKind[] = ['local', 'ssh', 'slurm', 'ray'];

function stringProblem(t: Record<string, unknown>, key: string, required: boolean): string | null {
  if (t[key] === undefined) return required ? `"${key}" is required` : null;
  return typeof t[key] === 'string' && (t[key] as string).trim() !== '' ? null : `"${key}" must be a non-empty string`;
}

function numberProblem(t: Record<string, unknown>, key: string): string | null {
  if (t[key] === undefined) return null;
  return Number.isInteger(t[key]) && (t[key] as number) >= 0 ? null : `"${key}" must be a whole number`;
}

function envProblem(env: unknown): string | null {
  if (env === undefined) return null;
  if (!env || typeof env !== 'object' || Array.isArray(env)) return '"env" must be an object';
  for (const [k, v] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) return `"env.${k}" is not an environment variable name`;
    if (typeof v === 'string') continue;
    const s = v as Record<string, unknown> | null;
    if (s?.secret !== true || (s.from !== undefined && typeof s.from !== 'string')) {
      return `"env.${k}" must be a string or {"secret": true, "from"?: NAME}`;
    }
  }
  return null;
}

/** What is wrong with one target's config, or null. */
export function targetConfigProblem(config: unknown): string | null {
  if (!config || typeof config !== 'object' || Array.isArray(config)) return 'a target is a JSON object';
  const t = config as Record<string, unknown>;
  if (!KINDS.includes(t.kind as TargetKind)) return `"kind" must be one of ${KINDS.join(', ')}`;
  const problems = [envProblem(t.env), stringProblem(t, 'python', false), numberProblem(t, 'minFreeMB')];
  const ssh = (required: boolean) => [
    stringProblem(t, 'host', required),
    numberProblem(t, 'port'),
    stringProblem(t, 'user', false),
    stringProblem(t, 'identityFile', false),
    stringProblem(t, 'sshConfig', false),
  ];
  if (t.kind === 'ssh') problems.push(...ssh(true), stringProblem(t, 'remoteDir', true));
  if (t.kind === 'slurm') {
    problems.push(...ssh(false), stringProblem(t, 'remoteDir', true), stringProblem(t, 'partition', false));
    problems.push(numberProblem(t, 'gpus'), numberProblem(t, 'nodes'), stringProblem(t, 'time', false));
    problems.push(stringProblem(t, 'account', false));
    if (t.gpuFlag !== undefined && t.gpuFlag !== 'gres' && t.gpuFlag !== 'gpus-per-node') {
      problems.push('"gpuFlag" must be "gres" or "gpus-per-node"');
    }
    if (t.sbatchArgs !== undefined && (!Array.isArray(t.sbatchArgs) || t.sbatchArgs.some((a) => typeof a !== 'string')))
      problems.push('"sbatchArgs" must be a list of strings');
  }
  if (t.kind === 'ray') {
    problems.push(stringProblem(t, 'address', true), stringProblem(t, 'remoteDir', false));
    if (typeof t.address === 'string' && !/^https?:\/\//.test(t.address))
      problems.push('"address" must be the dashboard URL, e.g. http://127.0.0.1:8265');
  }
  return problems.find((p) => p !== null) ?? null;
}

/** Checks every target of a targets.json document; throws naming the first bad one. */
export function parseTargets(doc: unknown, source: string): TargetsConfig {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new Error(`${source}: expected an object of targets`);
  for (const [name, config] of Object.entries(doc)) {
    if (!/^[\w.-]+$/.test(name)) throw new Error(`${source}: target name ${JSON.stringify(name)} is not a plain name`);
    const problem = targetConfigProblem(config);
    if (problem) throw new Error(`${source}: target "${name}": ${problem}`);
  }
  return doc as TargetsConfig;
}

/** Plain variables (kept in job.json) and the secrets' names with where their values come from. */
export function splitEnv(env: TargetEnv | undefined): {
  plain: Record<string, string>;
  secrets: Record<string, string>;
} {
  const plain: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const [k, v] of Object.entries(env ?? {})) {
    if (typeof v === 'string') plain[k] = v;
    else secrets[k] = v.from ?? k;
  }
  return { plain, secrets };
}
