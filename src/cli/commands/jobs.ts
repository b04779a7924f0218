// `quarry jobs`: training jobs in the workspace's .quarry/jobs/ (the same folders the editor follows): submit a spec or
// a `quarry train` launch to a target (local, or one named in .quarry/targets.json: ssh, slurm, ray), list, status,
// logs (--follow until the job ends), cancel (SIGTERM, then SIGKILL after a grace period), pull (metrics, logs, the
// checkpoint list; a checkpoint's files on request).
import { parseArgs } from 'node:util';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { FINAL_STATUSES, type JobRecord, type JobSpec } from '../../core/training/jobs/job';
import { JobStore, cancelJob, pullJob, readLog, refreshJob, submitJob } from '../../app/jobs';

const usage = `Usage: quarry jobs submit --target NAME (--spec job.json | --recipe LAUNCH_DIR) [--json]
       quarry jobs list [--json]
       quarry jobs status ID [--json]
       quarry jobs logs ID [--stderr] [--follow]
       quarry jobs cancel ID [--grace-s S]
       quarry jobs pull ID [--checkpoint NAME] [--json]

Jobs live in .quarry/jobs/<id>/ under the working directory (job.json, stdout.log, stderr.log, exit_code, out/
with metrics.jsonl, checkpoints.json). A spec is {"target", "command": [program, args…], "name"?, "engine"?,
"recipe"?, "model"?, "data"?, "cwd"?, "env"?, "resources"?: {"gpus"?, "nodes"?, "time"?}}; --recipe takes the folder
\`quarry train --engine verl|skyrl --out DIR\` wrote (its job.json).
Targets: local (a detached process group on this machine), and those named in .quarry/targets.json
({"NAME": {"kind": "ssh"|"slurm"|"ray", …}}: see docs/training.md, "Jobs").
Exit codes: 0 done, 1 the job failed (status, logs --follow), 2 bad input.`;

function line(j: JobRecord): string {
  const took = j.startedAt
    ? Math.round(((j.endedAt ? Date.parse(j.endedAt) : Date.now()) - Date.parse(j.startedAt)) / 1000)
    : 0;
  const status = j.status === 'staged' ? 'starting' : j.status;
  return (
    `${j.id}  ${status.padEnd(9)}  ${j.target.padEnd(6)}  ${String(took).padStart(6)} ` +
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
      recipe: { type: 'string' },
      checkpoint: { type: 'string' },
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
        if (!values.spec === !values.recipe) throw new UsageError('give one of --spec job.json or --recipe LAUNCH_DIR');
        let file = resolve(io.cwd, (values.spec ?? values.recipe)!);
        if (values.recipe) {
          if (!existsSync(file) || !statSync(file).isDirectory() || !existsSync(join(file, 'job.json'))) {
            throw new Error(`${file} is not a launch folder from \`quarry train --out\` (no job.json in it)`);
          }
          file = join(file, 'job.json');
        }
        const spec = JSON.parse(readFileSync(file, 'utf8')) as JobSpec;
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
        await refreshJob(store, jobId);
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
          await new Promise((r) => setTimeout(r, store.get(jobId).target === 'local' ? 250 : 2000));
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
    case 'pull':
      return known(async () => {
        const r = await pullJob(store, id(), values.checkpoint);
        if (values.json) {
          io.stdout.write(`${JSON.stringify({ ...r, dir: store.dir(r.job.id) })}\n`);
        } else {
          const dir = store.dir(r.job.id);
          const metrics = join(dir, 'out', 'metrics.jsonl');
          const lines = existsSync(metrics) ? readFileSync(metrics, 'utf8').split('\n').filter(Boolean).length : 0;
          io.stdout.write(`${line(r.job)}\n`);
          io.stdout.write(`pulled ${r.pull.bytes} bytes into ${dir}; ${lines} metrics lines in out/metrics.jsonl\n`);
          if (r.pull.error) io.stdout.write(`not pulled this time: ${r.pull.error}\n`);
          io.stdout.write(`checkpoints: ${r.checkpoints.length ? r.checkpoints.join(', ') : 'none yet'}\n`);
          if (r.fetched) io.stdout.write(`checkpoint ${values.checkpoint} copied to ${r.fetched}\n`);
        }
        return EXIT.ok;
      });
    default:
      throw new UsageError(sub ? `unknown subcommand '${sub}'` : 'a subcommand is required');
  }
}

export const jobsCommand: Command = {
  name: 'jobs',
  summary: 'Training jobs: submit to a target (local, ssh, slurm, ray), list, status, logs (--follow), cancel, pull',
  usage,
  run,
};
