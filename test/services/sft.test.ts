// A TRL SFT run of the tiny model (four steps on the CPU) on each target, against real services: this machine, the
// loopback sshd, the loopback Slurm cluster (directly and over ssh) and the local Ray head. Each is followed to
// `succeeded`, its metrics (steps 1-4) and checkpoint list (checkpoint-2, checkpoint-4, final) are pulled into the job
// folder, and from the ssh host a checkpoint's files are fetched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pullJob, submitJob } from '../../src/app/jobs';
import { finished, metricSteps, services, sftCommand, sftFixture, targetsFor, workspace } from './services';

const { svc, skip } = services();

for (const target of ['local', 'box', 'hpc', 'hpcssh', 'ray']) {
  test(`SFT of the tiny model on the ${target} target: followed to the end, metrics and checkpoints pulled`, {
    skip,
  }, async () => {
    const targets = targetsFor(svc!, { local: { kind: 'local', python: svc!.python } });
    const { ws, store } = workspace(targets);
    const data = sftFixture(ws);
    const job = await submitJob(store, {
      target,
      name: `sft on ${target}`,
      engine: 'trl',
      data,
      command: sftCommand(data),
    });
    const done = await finished(store, job.id);
    const log = (f: string) =>
      existsSync(join(store.dir(job.id), f)) ? readFileSync(join(store.dir(job.id), f), 'utf8') : '';
    assert.equal(
      done.status,
      'succeeded',
      `${done.reason}\n${log('stderr.log').slice(-2000)}\n${log('stdout.log').slice(-2000)}`,
    );
    assert.deepEqual(
      metricSteps(store, job.id).filter((s, i, a) => a.indexOf(s) === i),
      [1, 2, 3, 4],
    );
    const pulled = await pullJob(store, job.id);
    assert.deepEqual([...pulled.checkpoints].sort(), ['checkpoint-2', 'checkpoint-4', 'final']);
    assert.match(log('stdout.log') + log('stderr.log'), /"steps": 4/, 'the trainer printed its summary');
    if (target === 'box') {
      const fetched = await pullJob(store, job.id, 'checkpoint-2');
      assert.ok(existsSync(join(fetched.fetched!, 'model.safetensors')), 'the checkpoint files came back');
    }
  });
}
