// Jobs, the use cases the CLI (`quarry jobs`) and the editor share: submit a spec to a target, refresh and read status,
// read logs from an offset (to follow them), cancel. The job folder is the source of truth; a target only runs things.
import { existsSync, openSync, readSync, closeSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FINAL_STATUSES,
  jobSpecProblem,
  newJobId,
  newJobRecord,
  type JobRecord,
  type JobSpec,
} from '../../core/training/jobs/job';
import type { JobStore } from './store';
import { LocalTarget } from './targets/local';
import type { Target } from './targets/target';

export { JobStore } from './store';

/** The targets known by name. Only `local` for now; ssh, slurm and ray come from .quarry/targets.json. */
export function targetNamed(name: string): Target {
  if (name === 'local') return new LocalTarget();
  throw new Error(`unknown target '${name}' (known: local)`);
}

export async function submitJob(store: JobStore, spec: JobSpec): Promise<JobRecord> {
  const problem = jobSpecProblem(spec);
  if (problem) throw new Error(`bad job spec: ${problem}`);
  const target = targetNamed(spec.target);
  const job = newJobRecord(spec, newJobId());
  const missing = await target.check(job);
  if (missing.length) throw new Error(`target ${target.name} cannot run this job: ${missing.join('; ')}`);
  const dir = store.create(job);
  writeFileSync(
    join(dir, 'launch.json'),
    JSON.stringify({ command: job.command, cwd: job.cwd, env: Object.keys(job.env) }, null, 2) + '\n',
  );
  try {
    await target.submit(job, dir);
  } catch (err) {
    job.status = 'failed';
    job.reason = (err as Error).message;
    job.endedAt = new Date().toISOString();
    store.save(job);
    throw err;
  }
  job.status = 'running';
  job.startedAt = new Date().toISOString();
  store.save(job);
  return job;
}

/** Asks the target and records what changed. A finished job is not asked again. */
export async function refreshJob(store: JobStore, id: string): Promise<JobRecord> {
  const job = store.get(id);
  if (FINAL_STATUSES.includes(job.status) && job.status !== 'cancelled') return job;
  const r = await targetNamed(job.target).status(job, store.dir(id));
  const changed = r.status !== job.status || r.exitCode !== job.exitCode;
  if (changed) {
    job.status = r.status;
    job.exitCode = r.exitCode;
    job.reason = r.reason;
    if (FINAL_STATUSES.includes(r.status) && job.endedAt === null) job.endedAt = new Date().toISOString();
    store.save(job);
  }
  return job;
}

export async function cancelJob(store: JobStore, id: string, graceMs?: number): Promise<JobRecord> {
  const job = await refreshJob(store, id);
  if (FINAL_STATUSES.includes(job.status)) return job;
  job.status = 'cancelled';
  job.reason = 'cancelled';
  store.save(job);
  await targetNamed(job.target).cancel(job, store.dir(id), graceMs);
  return refreshJob(store, id);
}

/** Bytes of a job's log from `offset` (stdout.log or stderr.log), and the offset to read from next. */
export function readLog(
  store: JobStore,
  id: string,
  which: 'stdout' | 'stderr',
  offset = 0,
): { text: string; next: number } {
  const file = join(store.dir(id), `${which}.log`);
  if (!existsSync(file)) return { text: '', next: offset };
  const size = statSync(file).size;
  if (size <= offset) return { text: '', next: size < offset ? 0 : offset };
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(Math.min(size - offset, 4 << 20));
    const n = readSync(fd, buf, 0, buf.length, offset);
    // Stop at the last whole UTF-8 character; the rest comes with the next read.
    let end = n;
    while (end > 0 && (buf[end - 1] & 0xc0) === 0x80) end--;
    if (end > 0 && buf[end - 1] >= 0xc0) end--;
    if (end === 0) end = n;
    return { text: buf.subarray(0, end).toString('utf8'), next: offset + end };
  } finally {
    closeSync(fd);
  }
}
