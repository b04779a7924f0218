// `quarry jobs`: training jobs in the workspace's .quarry/jobs/ (the same folders the editor follows): submit a spec to
// a target, list, status, logs (--follow until the job ends), cancel (SIGTERM, then SIGKILL after a grace period).
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { FINAL_STATUSES, type JobRecord, type JobSpec } from '../../core/training/jobs/job';
import { JobStore, cancelJob, readLog, refreshJob, submitJob } from '../../app/jobs';

const usage = `Usage: quarry jobs submit --target NAME --spec job.json [--json]
       quarry jobs list [--json]
       quarry jobs status ID [--json]
       quarry jobs logs ID [--stderr] [--follow]
       quarry jobs cancel ID [--grace-s S]

Jobs live in .quarry/jobs/<id>/ under the working directory (job.json, stdout.log, stderr.log, exit_code, out/).
A spec is {"target", "command": [program, args…], "name"?, "engine"?, "recipe"?, "model"?, "data"?, "cwd"?, "env"?}.
Targets: local (a detached process group on this machine).
Exit codes: 0 done, 1 the job failed (status, logs --follow), 2 bad input.`;

function line(j: JobRecord): string {
  const took = j.startedAt
    ? Math.round(((j.endedAt ? Date.parse(j.endedAt) : Date.now()) - Date.parse(j.startedAt)) / 1000)
    : 0;
  return (
    `${j.id}  ${j.status.padEnd(9)}  ${j.target.padEnd(6)}  ${String(took).padStart(6)} ` +
    `s  ${j.name}${j.reason && j.status !== 'cancelled' ? `  (${j.reason})` : ''}`
  );
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = argv;
  const store = new JobStore(io.cwd);
  const { values, positionals } = parseArgs({
    args: rest,
    strict: true,
    allowPositionals: true,
    options: {
      target: { type: 'string' },
      spec: { type: 'string' },
      json: { type: 'boolean' },
      follow: { type: 'boolean' },
      stderr: { type: 'boolean' },
      'grace-s': { type: 'string' },
    },
  });
  const id = () => {
    if (positionals.length !== 1) throw new UsageError(`quarry jobs ${sub} needs one job id`);
    return positionals[0];
  };
  const known = async (f: () => Promise<number>): Promise<number> => {
    try {
      return await f();
    } catch (err) {
      if (err instanceof UsageError) throw err;
      io.stderr.write(`quarry jobs ${sub}: ${(err as Error).message}\n`);
      return EXIT.badInput;
    }
  };
  switch (sub) {
    case 'submit':
      return known(async () => {
        if (!values.spec) throw new UsageError('--spec job.json is required');
        const spec = JSON.parse(readFileSync(resolve(io.cwd, values.spec), 'utf8')) as JobSpec;
        if (values.target) spec.target = values.target;
        if (spec.cwd) spec.cwd = resolve(io.cwd, spec.cwd);
        const job = await submitJob(store, spec);
        io.stdout.write(
          values.json ? JSON.stringify(job) + '\n' : `${job.id} submitted to ${job.target}: ${store.dir(job.id)}\n`,
        );
        return EXIT.ok;
      });
    case 'list':
      return known(async () => {
        const jobs = await Promise.all(store.list().map((j) => refreshJob(store, j.id)));
        if (values.json) io.stdout.write(JSON.stringify(jobs) + '\n');
        else io.stdout.write(jobs.length ? jobs.map(line).join('\n') + '\n' : `no jobs in ${store.root}\n`);
        return EXIT.ok;
      });
    case 'status':
      return known(async () => {
        const job = await refreshJob(store, id());
        io.stdout.write(values.json ? JSON.stringify(job) + '\n' : line(job) + '\n');
        return job.status === 'failed' || job.status === 'lost' ? 1 : EXIT.ok;
      });
    case 'logs':
      return known(async () => {
        const which = values.stderr ? 'stderr' : 'stdout';
        const jobId = id();
        let offset = 0;
        for (;;) {
          const chunk = readLog(store, jobId, which, offset);
          if (chunk.text) io.stdout.write(chunk.text);
          offset = chunk.next;
          if (!values.follow) return EXIT.ok;
          const job = await refreshJob(store, jobId);
          if (FINAL_STATUSES.includes(job.status)) {
            const last = readLog(store, jobId, which, offset);
            if (last.text) io.stdout.write(last.text);
            io.stderr.write(`job ${jobId} ${job.status}${job.exitCode !== null ? ` (exit ${job.exitCode})` : ''}\n`);
            return job.status === 'succeeded' ? EXIT.ok : 1;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      });
    case 'cancel':
      return known(async () => {
        const grace = values['grace-s'] === undefined ? 10 : Number(values['grace-s']);
        if (!Number.isFinite(grace) || grace < 0) throw new UsageError('--grace-s must be a number of seconds');
        const job = await cancelJob(store, id(), grace * 1000);
        io.stdout.write(line(job) + '\n');
        return EXIT.ok;
      });
    default:
      throw new UsageError(sub ? `unknown subcommand '${sub}'` : 'a subcommand is required');
  }
}

export const jobsCommand: Command = {
  name: 'jobs',
  summary: 'Training jobs: submit to a target, list, status, logs (--follow), cancel',
  usage,
  run,
};
