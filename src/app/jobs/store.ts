// The jobs folder, `.quarry/jobs/` in the workspace: one folder per job with job.json (written whole: a temporary file
// renamed over it, so a reader never sees half a record), the launch as run, its logs (stdout.log, stderr.log), its
// exit code when it ends (exit_code), and out/ where the run writes metrics.jsonl and checkpoints.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TargetsConfig } from '../../core/training/jobs/targets';
import { JOB_SCHEMA, type JobRecord } from '../../core/training/jobs/job';

export const JOBS_DIR = '.quarry/jobs';

export interface JobStoreOptions {
  /** Targets from the editor's `quarry.targets` setting, over the workspace's .quarry/targets.json. */
  targets?: TargetsConfig;
  /** Where a secret's value comes from (the editor's SecretStorage); default: this process's environment. */
  secret?: (name: string) => Promise<string | undefined>;
}

export class JobStore {
  readonly root: string;

  constructor(
    readonly workspace: string,
    readonly options: JobStoreOptions = {},
  ) {
    this.root = join(workspace, JOBS_DIR);
  }

  dir(id: string): string {
    if (!/^[\w.-]+$/.test(id)) throw new Error(`not a job id: ${JSON.stringify(id)}`);
    return join(this.root, id);
  }

  create(job: JobRecord): string {
    const dir = this.dir(job.id);
    mkdirSync(join(dir, 'out'), { recursive: true });
    this.save(job);
    return dir;
  }

  save(job: JobRecord): void {
    const file = join(this.dir(job.id), 'job.json');
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(job, null, 2) + '\n');
    renameSync(tmp, file);
  }

  get(id: string): JobRecord {
    const file = join(this.dir(id), 'job.json');
    if (!existsSync(file)) throw new Error(`no job ${id} in ${this.root}`);
    const job = JSON.parse(readFileSync(file, 'utf8')) as JobRecord;
    if (job.schema !== JOB_SCHEMA) throw new Error(`${file} is not a ${JOB_SCHEMA} record`);
    return job;
  }

  /** Every job, newest first; a folder without a readable job.json is skipped. */
  list(): JobRecord[] {
    if (!existsSync(this.root)) return [];
    const out: JobRecord[] = [];
    for (const id of readdirSync(this.root).sort().reverse()) {
      try {
        out.push(this.get(id));
      } catch {
        /* a folder being created, or not a job */
      }
    }
    return out;
  }
}
