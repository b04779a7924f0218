// Named targets, as written in `.quarry/targets.json` (or the editor's `quarry.targets` setting): where jobs run and
// how to reach it. Checks the shape and says what is wrong in words; splits a target's environment into plain values
// (recorded in job.json) and secrets (named only: their values come from the environment or the editor's
// SecretStorage at submit time and are passed to the job through its environment, never written down).
type TargetKind = 'local' | 'ssh' | 'slurm' | 'ray';

/** A secret environment variable: its value comes from `from` (default: the same name) at submit time. */
interface SecretEnv {
  secret: true;
  from?: string;
}
type TargetEnv = Record<string, string | SecretEnv>;

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

interface LocalTargetConfig extends Common {
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

// The file comes with a cloned repository, so every value is untrusted: a value ssh or sbatch would read as an option,
// a newline that becomes a line of a script, or a variable that makes the job load other code is refused, in words.
const CONTROL = /[\0-\x1f\x7f]/;
const HOST = /^[A-Za-z0-9_.@:%[\]-]+$/;
const USER = /^[A-Za-z0-9_.@-]+$/;
/** An absolute remote folder: no spaces or quotes (it goes into #SBATCH lines and sh). */
const REMOTE_DIR = /^\/[\w./+@,:=-]*$/;
/** A program name on PATH, or an absolute path to one. */
const PROGRAM = /^(?:[\w.+][\w.+-]*|\/[\w./+-]+)$/;
/** Slurm partition, account and QOS names. */
const SLURM_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.,-]*$/;
/** Variables that make the job's programs load or run other code than theirs (a dynamic loader, a shell's startup). */
const HIJACKING_ENV = new RegExp(
  '^(?:LD_\\w*|DYLD_\\w*|BASH_ENV|ENV|BASH_FUNC_\\w*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|PATH|NODE_OPTIONS|' +
    'PYTHONSTARTUP|PYTHONHOME|PERL5OPT|PERL5LIB|RUBYOPT|GIT_SSH|GIT_SSH_COMMAND)$',
);
/** The sbatch options a target may add (each `--name` or `--name=value`); none runs a command or moves the script. */
const SBATCH_OPTIONS: readonly string[] = (
  'qos constraint prefer exclusive oversubscribe mem mem-per-cpu mem-per-gpu cpus-per-task cpus-per-gpu ntasks ' +
  'ntasks-per-node ntasks-per-gpu gpus gpus-per-task gpus-per-socket gres gres-flags gpu-bind gpu-freq cpu-freq ' +
  'mem-bind hint threads-per-core cores-per-socket sockets-per-node distribution reservation exclude nodelist ' +
  'switches contiguous mincpus tmp licenses time-min begin deadline nice signal requeue no-requeue mail-type ' +
  'mail-user comment wckey dependency kill-on-invalid-dep network profile core-spec thread-spec use-min-nodes ' +
  'spread-job tres-per-task clusters'
).split(' ');
const SBATCH_VALUE = /^[\w.,:=@+/%*!&|[\]-]*$/;

/** Slurm's time limit: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED. */
export function isSlurmTime(s: string): boolean {
  return /^(?:\d+(?::\d{1,2}){0,2}|\d+-\d{1,2}(?::\d{1,2}){0,2}|UNLIMITED|INFINITE)$/.test(s);
}

function stringProblem(t: Record<string, unknown>, key: string, required: boolean): string | null {
  if (t[key] === undefined) return required ? `"${key}" is required` : null;
  if (typeof t[key] !== 'string' || (t[key] as string).trim() === '') return `"${key}" must be a non-empty string`;
  return CONTROL.test(t[key] as string) ? `"${key}" must not hold a newline or control character` : null;
}

/** A string field, then: not an option (a leading "-"), and of the form `pattern` says (in words: `what`). */
function fieldProblem(t: Record<string, unknown>, key: string, required: boolean, pattern: RegExp, what: string) {
  const p = stringProblem(t, key, required);
  if (p || t[key] === undefined) return p;
  const v = t[key] as string;
  if (v.startsWith('-')) return `"${key}" must not begin with "-"`;
  return pattern.test(v) ? null : `"${key}" must be ${what}`;
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
    if (HIJACKING_ENV.test(k)) return `"env.${k}" is not set by a target (it changes what code the job's programs run)`;
    if (typeof v === 'string') {
      if (v.includes('\0')) return `"env.${k}" must not hold a NUL character`;
      continue;
    }
    const s = v as Record<string, unknown> | null;
    if (s?.secret !== true || (s.from !== undefined && typeof s.from !== 'string')) {
      return `"env.${k}" must be a string or {"secret": true, "from"?: NAME}`;
    }
    if (s.from !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(s.from as string))
      return `"env.${k}.from" is not an environment variable name`;
  }
  return null;
}

function portProblem(t: Record<string, unknown>): string | null {
  if (t.port === undefined) return null;
  return Number.isInteger(t.port) && (t.port as number) >= 1 && (t.port as number) <= 65535
    ? null
    : '"port" must be a port number (1-65535)';
}

function sbatchArgsProblem(args: unknown): string | null {
  if (args === undefined) return null;
  if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) return '"sbatchArgs" must be a list of strings';
  for (const a of args as string[]) {
    const m = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(a);
    if (!m) return `"sbatchArgs": ${JSON.stringify(a)} is not --option or --option=value`;
    if (!SBATCH_OPTIONS.includes(m[1])) {
      return (
        `"sbatchArgs": --${m[1]} is not an sbatch option a target may add ` +
        '(e.g. --qos, --constraint, --mem, --exclusive; partition, account, time and nodes have their own fields)'
      );
    }
    if (m[2] !== undefined && !SBATCH_VALUE.test(m[2]))
      return `"sbatchArgs": the value of --${m[1]} holds a space, quote, newline or other character sbatch or sh reads`;
  }
  return null;
}

function addressProblem(address: unknown): string | null {
  if (typeof address !== 'string') return null;
  let url: URL | null = null;
  try {
    url = /^https?:\/\/[^\s]+$/.test(address) && !CONTROL.test(address) ? new URL(address) : null;
  } catch {
    url = null;
  }
  return url && (url.protocol === 'http:' || url.protocol === 'https:')
    ? null
    : '"address" must be the dashboard URL, e.g. http://127.0.0.1:8265';
}

/** What is wrong with one target's config, or null. */
export function targetConfigProblem(config: unknown): string | null {
  if (!config || typeof config !== 'object' || Array.isArray(config)) return 'a target is a JSON object';
  const t = config as Record<string, unknown>;
  if (!KINDS.includes(t.kind as TargetKind)) return `"kind" must be one of ${KINDS.join(', ')}`;
  const problems = [
    envProblem(t.env),
    fieldProblem(t, 'python', false, PROGRAM, 'a program name or an absolute path (no spaces or shell characters)'),
    numberProblem(t, 'minFreeMB'),
  ];
  const path = /^[^-]/;
  const ssh = (required: boolean) => [
    fieldProblem(t, 'host', required, HOST, 'a host name or ssh alias (letters, digits and . _ - @ : [ ])'),
    portProblem(t),
    fieldProblem(t, 'user', false, USER, 'a user name (letters, digits and . _ - @)'),
    fieldProblem(t, 'identityFile', false, path, 'a path'),
    fieldProblem(t, 'sshConfig', false, path, 'a path'),
  ];
  const remoteDir = (required: boolean) =>
    fieldProblem(t, 'remoteDir', required, REMOTE_DIR, 'an absolute path without spaces or quotes');
  const slurmName = (key: string) => fieldProblem(t, key, false, SLURM_NAME, 'a Slurm name (letters, digits, _ . , -)');
  if (t.kind === 'ssh') problems.push(...ssh(true), remoteDir(true));
  if (t.kind === 'slurm') {
    problems.push(...ssh(false), remoteDir(true), slurmName('partition'));
    problems.push(numberProblem(t, 'gpus'), numberProblem(t, 'nodes'), stringProblem(t, 'time', false));
    if (typeof t.time === 'string' && !isSlurmTime(t.time))
      problems.push('"time" must be a Slurm time limit: minutes, HH:MM:SS or D-HH:MM:SS');
    problems.push(slurmName('account'));
    if (t.gpuFlag !== undefined && t.gpuFlag !== 'gres' && t.gpuFlag !== 'gpus-per-node') {
      problems.push('"gpuFlag" must be "gres" or "gpus-per-node"');
    }
    problems.push(sbatchArgsProblem(t.sbatchArgs));
  }
  if (t.kind === 'ray') problems.push(stringProblem(t, 'address', true), addressProblem(t.address), remoteDir(false));
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
