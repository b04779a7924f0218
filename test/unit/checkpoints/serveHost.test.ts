// Where a job's checkpoint is served: here for a local job, on an ssh target's host with its ssh options and the
// checkpoint under the job's remote folder, and a clear refusal for Slurm/Ray jobs (no host to name).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveHostOfJob } from '../../../src/app/checkpoints/serveHost';
import { JobStore } from '../../../src/app/jobs/store';
import { newJobRecord, type JobRecord } from '../../../src/core/training/jobs/job';
import { tempDir } from '../../helpers/fixtures';

function workspace(): { ws: string; store: JobStore } {
  const ws = tempDir('quarry-servehost-');
  mkdirSync(join(ws, '.quarry'), { recursive: true });
  writeFileSync(
    join(ws, '.quarry', 'targets.json'),
    JSON.stringify({
      gpu: { kind: 'ssh', host: 'gpu-box', port: 2222, user: 'me', sshConfig: '/cfg', remoteDir: '/scratch/q' },
      cluster: { kind: 'slurm', host: 'login', remoteDir: '/shared/q' },
    }),
  );
  return { ws, store: new JobStore(ws) };
}

function job(store: JobStore, id: string, target: string, remote: JobRecord['remote'] = {}): string {
  return store.create({ ...newJobRecord({ target, command: ['true'] }, id), remote });
}

test('a job on an ssh target serves on its host, with its ssh options, the checkpoint under its remote folder', () => {
  const { ws, store } = workspace();
  const dir = job(store, 'j1', 'gpu', { dir: '/scratch/q/jobs/j1/', host: 'gpu-box' });
  const h = serveHostOfJob(ws, 'j1', join(dir, 'out', 'checkpoint-4'));
  assert.equal(h.host, 'gpu-box');
  assert.equal(h.remoteCheckpoint, '/scratch/q/jobs/j1/out/checkpoint-4');
  const o = h.sshOptions!;
  assert.deepEqual([o[o.indexOf('-F') + 1], o[o.indexOf('-p') + 1], o[o.indexOf('-l') + 1]], ['/cfg', '2222', 'me']);
  assert.equal(serveHostOfJob(ws, 'j1', '/elsewhere/ckpt').remoteCheckpoint, undefined, 'outside the job: unknown');
});

test('a local job serves here; a Slurm job is refused with what to do instead', () => {
  const { ws, store } = workspace();
  const dir = job(store, 'j2', 'local');
  assert.deepEqual(serveHostOfJob(ws, 'j2', join(dir, 'out', 'checkpoint-1')), { target: 'local' });
  job(store, 'j3', 'cluster');
  assert.throws(() => serveHostOfJob(ws, 'j3', '/x'), /slurm target 'cluster'.*--ssh HOST/);
  assert.throws(() => serveHostOfJob(ws, 'nope', '/x'), /no job nope/);
});
