// A place jobs run: this machine, an SSH host, a Slurm cluster, a Ray cluster — behind one interface, so the CLI, the
// editor and the job files do not care which.
import type { JobRecord, JobStatus } from '../../../core/training/jobs/job';

export interface StatusReport {
  status: JobStatus;
  exitCode: number | null;
  reason: string | null;
}

/** What a pull brought back: bytes written into the job folder, the checkpoints seen (null: not known this time). */
export interface PullReport {
  bytes: number;
  checkpoints: string[] | null;
  /** Why the pull did not happen (e.g. the host is unreachable); what was pulled before stays. */
  error: string | null;
}

export interface Target {
  readonly name: string;
  readonly kind: 'local' | 'ssh' | 'slurm' | 'ray';
  /** What the target lacks to run this job, in words (empty when ready). */
  check(job: JobRecord): Promise<string[]>;
  /**
   * Starts the job; fills job.remote; the job folder already exists. `secrets` are environment variables passed to
   * the job through its environment only (never written to a file or a command line Quarry makes).
   */
  submit(job: JobRecord, dir: string, secrets?: Record<string, string>): Promise<void>;
  status(job: JobRecord, dir: string): Promise<StatusReport>;
  /** Stops the job: a polite signal first, then a forceful one after `graceMs`. */
  cancel(job: JobRecord, dir: string, graceMs?: number): Promise<void>;
  /** Brings what is new of the job's logs and metrics into its folder, and the checkpoint list. */
  pull(job: JobRecord, dir: string): Promise<PullReport>;
  /** Copies one checkpoint's files into the job folder's out/<name>; returns that path. */
  fetchCheckpoint(job: JobRecord, dir: string, name: string): Promise<string>;
}
