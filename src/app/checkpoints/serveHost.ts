// Where a checkpoint is served: on the host of the job that wrote it. A job on the `local` target serves here; a job
// on an `ssh` target serves on that host, reached with the target's own ssh options (its config file, port, user,
// key: src/app/jobs/targets/shell.ts sshOptions), the checkpoint at the same place under the job's remote folder.
// Slurm and Ray jobs run on nodes Quarry does not address by name: their checkpoints are served with --ssh HOST.
import { relative, resolve } from 'node:path';
import { JobStore } from '../jobs/store';
import { loadTargets, targetConfig } from '../jobs/targets/registry';
import { sshOptions } from '../jobs/targets/shell';

interface ServeHost {
  /** An ssh destination, or undefined for this machine. */
  host?: string;
  sshOptions?: string[];
  /** The checkpoint's path on that host. */
  remoteCheckpoint?: string;
  /** The target the host came from, for messages. */
  target: string;
}

export function serveHostOfJob(workspace: string, jobId: string, checkpoint: string): ServeHost {
  const store = new JobStore(workspace);
  const job = store.get(jobId);
  const config = targetConfig(loadTargets(workspace), job.target);
  if (config.kind === 'local') return { target: job.target };
  if (config.kind !== 'ssh')
    throw new Error(
      `job ${jobId} ran on the ${config.kind} target '${job.target}', whose nodes Quarry does not address by name: ` +
        'serve its checkpoint with --ssh HOST (and --remote-dir where it is there)',
    );
  const inJob = relative(store.dir(jobId), resolve(checkpoint));
  const remoteDir = job.remote.dir;
  return {
    target: job.target,
    host: config.host,
    sshOptions: sshOptions(config),
    remoteCheckpoint: remoteDir && !inJob.startsWith('..') ? `${remoteDir.replace(/\/+$/, '')}/${inJob}` : undefined,
  };
}
