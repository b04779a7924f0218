// A training job as Quarry records it: `.quarry/jobs/<id>/job.json` in the workspace, the one record the CLI and the
// editor both read and write (so a job started in one is followed in the other, and after a reload). Secrets never go
// in here: environment variables marked secret are named, not valued. A job is `staged` (starting) from its folder's
// making until its submitter records where it runs; only that submitter moves it on, unless it is gone (its pid, kept
// in `submitter`, no longer runs), for until then nothing else knows where the job runs.
import { isSlurmTime } from './targets';

const JOB_SCHEMA = 'quarry.job/1';

export type JobStatus = 'staged' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'lost';
export const FINAL_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled', 'lost'];

export interface JobSpec {
  /** A short name shown in lists. */
  name?: string;
  /** The target to run on (a name from .quarry/targets.json, or `local`). */
  target: string;
  engine?: string;
  recipe?: string | null;
  model?: string | null;
  data?: string | null;
  /** The program and its arguments, run in the job's folder (or `cwd`). */
  command: string[];
  cwd?: string;
  /** Plain environment variables for the job (never secrets: those come from the target's secret store). */
  env?: Record<string, string>;
  /** What the job asks of the target: GPUs per node, nodes, a time limit (Slurm's format). */
  resources?: JobResources;
}

interface JobResources {
  gpus?: number;
  nodes?: number;
  time?: string;
}

export interface JobRecord extends Required<Pick<JobSpec, 'target' | 'command'>> {
  schema: typeof JOB_SCHEMA;
  id: string;
  name: string;
  engine: string | null;
  recipe: string | null;
  model: string | null;
  data: string | null;
  cwd: string | null;
  env: Record<string, string>;
  /** The names of the secret variables the target passed to the job (their values are never recorded). */
  secretEnv?: string[];
  resources?: JobResources;
  createdAt: string;
  status: JobStatus;
  /** Bumped on each write (store.ts): a writer that read an older record leaves a newer one alone. */
  rev?: number;
  /** While the job is staged: the process submitting it (its pid and kernel start time, on this host). */
  submitter?: { pid: number; procStart: string | null; host: string };
  /** Where the job runs: for `local`, the process group leader's pid and its start time (so a reused pid is not it). */
  remote: {
    pid?: number;
    procStart?: string;
    slurmJobId?: string;
    rayJobId?: string;
    /** The job's folder on the remote side (ssh, slurm, ray). */
    dir?: string;
    host?: string;
  };
  startedAt: string | null;
  endedAt: string | null;
  exitCode: number | null;
  /** Why the job failed or was lost, in words. */
  reason: string | null;
}

/** What is wrong with a spec, or null. */
export function jobSpecProblem(spec: unknown): string | null {
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) return 'a job spec is a JSON object';
  const s = spec as Record<string, unknown>;
  if (typeof s.target !== 'string' || s.target.trim() === '') return '"target" must name a target (e.g. "local")';
  if (!Array.isArray(s.command) || s.command.length === 0 || s.command.some((c) => typeof c !== 'string')) {
    return '"command" must be a non-empty list of strings (the program and its arguments)';
  }
  for (const k of ['name', 'engine', 'recipe', 'model', 'data', 'cwd'] as const) {
    if (s[k] !== undefined && s[k] !== null && typeof s[k] !== 'string') return `"${k}" must be a string`;
  }
  if (s.env !== undefined) {
    if (!s.env || typeof s.env !== 'object' || Array.isArray(s.env)) return '"env" must be an object of strings';
    for (const [k, v] of Object.entries(s.env)) if (typeof v !== 'string') return `"env.${k}" must be a string`;
  }
  if (s.resources !== undefined) {
    const r = s.resources as Record<string, unknown> | null;
    if (!r || typeof r !== 'object' || Array.isArray(r)) return '"resources" must be an object';
    for (const k of ['gpus', 'nodes'] as const) {
      if (r[k] !== undefined && !(Number.isInteger(r[k]) && (r[k] as number) >= 0))
        return `"resources.${k}" must be a whole number`;
    }
    if (r.time !== undefined && (typeof r.time !== 'string' || !isSlurmTime(r.time)))
      return '"resources.time" must be a Slurm time limit: minutes, HH:MM:SS or D-HH:MM:SS';
  }
  return null;
}

const STATUSES: readonly JobStatus[] = ['staged', 'running', ...FINAL_STATUSES];

/**
 * What is wrong with a job.json as read (a workspace file, which a cloned repository may carry), or null: the fields
 * the targets act on (a pid to signal, a Slurm or Ray job to cancel, a folder) must have their form.
 */
export function jobRecordProblem(rec: unknown): string | null {
  const r = rec as Partial<JobRecord> | null;
  if (!r || typeof r !== 'object' || r.schema !== JOB_SCHEMA) return `not a ${JOB_SCHEMA} record`;
  if (typeof r.id !== 'string' || !/^[\w.-]+$/.test(r.id)) return '"id" is not a job id';
  if (!STATUSES.includes(r.status as JobStatus)) return `"status" must be one of ${STATUSES.join(', ')}`;
  if (!Array.isArray(r.command) || typeof r.target !== 'string') return '"command" and "target" are required';
  const m = (r.remote ?? {}) as Record<string, unknown>;
  if (typeof m !== 'object' || Array.isArray(m)) return '"remote" must be an object';
  if (m.pid !== undefined && !(Number.isInteger(m.pid) && (m.pid as number) > 1))
    return '"remote.pid" must be a process id above 1';
  if (m.procStart !== undefined && !/^\d+$/.test(String(m.procStart))) return '"remote.procStart" must be a number';
  if (m.slurmJobId !== undefined && !/^\d+(?:_\d+)?$/.test(String(m.slurmJobId)))
    return '"remote.slurmJobId" must be a Slurm job id';
  if (m.rayJobId !== undefined && !/^[\w.-]+$/.test(String(m.rayJobId))) return '"remote.rayJobId" is not a Ray job id';
  for (const k of ['dir', 'host'] as const) {
    if (m[k] !== undefined && (typeof m[k] !== 'string' || /[\0-\x1f\x7f]/.test(m[k] as string)))
      return `"remote.${k}" must be a string without control characters`;
  }
  if (typeof m.dir === 'string' && !m.dir.startsWith('/')) return '"remote.dir" must be an absolute path';
  return null;
}

/** A sortable id: the UTC time and a random tail. */
export function newJobId(now = new Date(), random = Math.random): string {
  const t = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${t}-${Math.floor(random() * 0x10000)
    .toString(16)
    .padStart(4, '0')}`;
}

export function newJobRecord(spec: JobSpec, id: string, now = new Date()): JobRecord {
  return {
    schema: JOB_SCHEMA,
    id,
    name:
      spec.name ??
      spec.command
        .map((c) => c.split('/').pop())
        .join(' ')
        .slice(0, 60),
    target: spec.target,
    engine: spec.engine ?? null,
    recipe: spec.recipe ?? null,
    model: spec.model ?? null,
    data: spec.data ?? null,
    command: [...spec.command],
    cwd: spec.cwd ?? null,
    env: { ...(spec.env ?? {}) },
    ...(spec.resources ? { resources: { ...spec.resources } } : {}),
    createdAt: now.toISOString(),
    status: 'staged',
    remote: {},
    startedAt: null,
    endedAt: null,
    exitCode: null,
    reason: null,
  };
}
