// A place jobs run: this machine, an SSH host, a Slurm cluster, a Ray cluster — behind one interface, so the CLI, the
// editor and the job files do not care which.
import type { JobRecord, JobStatus } from '../../../core/training/jobs/job';

export interface StatusReport {
  status: JobStatus;
  exitCode: number | null;
  reason: string | null;
}

export interface Target {
  readonly name: string;
  readonly kind: 'local' | 'ssh' | 'slurm' | 'ray';
  /** What the target lacks to run this job, in words (empty when ready). */
  check(job: JobRecord): Promise<string[]>;
  /** Starts the job; fills job.remote; the job folder already exists. */
  submit(job: JobRecord, dir: string): Promise<void>;
  status(job: JobRecord, dir: string): Promise<StatusReport>;
  /** Stops the job: a polite signal first, then a forceful one after `graceMs`. */
  cancel(job: JobRecord, dir: string, graceMs?: number): Promise<void>;
}
