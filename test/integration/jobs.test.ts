// The Training Jobs view in a real extension host: jobs in the workspace's .quarry/jobs/ (started here the way the
// CLI starts them, as real processes) show with their state and latest step; Cancel Job stops a running one; a job
// that fails shows as failed. The job panel opened on a running job receives the metrics lines the job appends while
// it is open, its log, a checkpoint it writes (and the notification event), an overlaid job, and comes back after a
// reload; messages the host did not offer are refused. "Train a Model…" answered from code submits a TRL job.
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import { JobStore, refreshJob, submitJob } from '../../src/app/jobs';
import { probeGpus } from '../../src/core/training/gpus';
import { choosePython } from '../../src/core/training/pythonEnv';
import type { QuarryApi } from '../../src/extension/extension';
import { until } from '../support/until';

async function api(): Promise<QuarryApi> {
  const ext = vscode.extensions.getExtension<QuarryApi>('quarry.quarry');
  assert.ok(ext);
  return ext.activate();
}

suite('Training Jobs view', () => {
  test('running, failed and cancelled jobs with their latest step; Cancel Job stops one', async function () {
    this.timeout(120_000);
    const quarry = await api();
    const ws = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const store = new JobStore(ws);
    const node = process.execPath;
    const running = await submitJob(store, {
      target: 'local',
      name: 'tiny grpo',
      command: [
        node,
        '-e',
        'let s = 0; setInterval(() => require("fs").appendFileSync("out/metrics.jsonl", JSON.stringify({ ' +
          'step: ++s, reward: 0.1 * s }) + "\\n"), 100);',
      ],
    });
    const failing = await submitJob(store, {
      target: 'local',
      name: 'broken run',
      command: [node, '-e', 'console.error("CUDA not found"); process.exit(1)'],
    });
    await vscode.commands.executeCommand('quarry.showJobs');
    const items = async () =>
      (await quarry.jobs!.getChildren()).map((i) => ({
        id: i.job.id,
        description: String(i.description),
        context: i.contextValue,
      }));
    await until('the running job to show a step', async () =>
      (await items()).some((i) => i.id === running.id && /^running · local · .* · step \d+$/.test(i.description)),
    );
    await until('the failing job to show as failed', async () =>
      (await items()).some((i) => i.id === failing.id && i.description.startsWith('failed · local')),
    );
    assert.equal((await items()).find((i) => i.id === running.id)?.context, 'quarry.job.running');
    const cancelled = await vscode.commands.executeCommand<{ status: string }>('quarry.cancelJob', running.id);
    assert.equal(cancelled?.status, 'cancelled');
    assert.equal((await refreshJob(store, running.id)).status, 'cancelled');
    await until('the view to say cancelled', async () =>
      (await items()).some((i) => i.id === running.id && i.description.startsWith('cancelled')),
    );
  });

  test(
    'the job panel follows a running job: ' + 'metrics appended while open, log, checkpoint, overlay, reload',
    async function () {
      this.timeout(120_000);
      await api();
      const ws = vscode.workspace.workspaceFolders![0].uri.fsPath;
      const store = new JobStore(ws);
      const node = process.execPath;
      // A finished job to overlay: its metrics are verl's file-logger lines.
      const before = await submitJob(store, {
        target: 'local',
        name: 'earlier verl run',
        command: [
          node,
          '-e',
          'for (let s = 1; s <= 5; s++) require("fs").appendFileSync("out/verl.jsonl", ' +
            'JSON.stringify({ step: s, data: { "critic/score/mean": s / 10, "actor/entropy": 1 } }) + "\\n")',
        ],
        env: { VERL_FILE_LOGGER_PATH: 'out/verl.jsonl' },
      });
      await until('the earlier job to end', async () => (await refreshJob(store, before.id)).status === 'succeeded');
      const job = await submitJob(store, {
        target: 'local',
        name: 'growing run',
        command: [
          node,
          '-e',
          'let s = 0; setInterval(() => { s++; console.log("step " + s); ' +
            'require("fs").appendFileSync("out/metrics.jsonl", ' +
            'JSON.stringify({ step: s, reward: 0.1 * s, loss: 2 / s }) + "\\n"); }, 150);',
        ],
      });
      const hook = <T>(op: string, ...args: unknown[]) =>
        vscode.commands.executeCommand<T>('quarry.jobs.testHook', op, ...args);
      type Posted = { type: string; [k: string]: unknown };
      // What the job panels posted: this job's panel is the only one open (checked below), so all of it is its.
      const posted = async (type: string) => (await hook<Posted[]>('posted')).filter((m) => m.type === type);
      await hook('clear');
      assert.equal(await vscode.commands.executeCommand('quarry.openJobPanel', job.id), job.id);
      assert.deepEqual(await hook<string[]>('open'), [job.id]);
      await until('the panel to send the rows it found', async () => (await posted('metrics')).some((m) => m.reset));
      const first = (await posted('metrics')).find((m) => m.reset) as unknown as { rows: Array<{ step: number }> };
      const seen = Math.max(0, ...first.rows.map((r) => r.step));
      await until('rows appended after the panel opened', async () =>
        (await posted('metrics')).some(
          (m) =>
            !m.reset && (m.rows as Array<{ step: number; values: Record<string, number> }>).some((r) => r.step > seen),
        ),
      );
      const appended = (await posted('metrics'))
        .filter((m) => !m.reset)
        .flatMap((m) => m.rows as Array<{ step: number; values: Record<string, number> }>);
      const row = appended[appended.length - 1];
      assert.ok(Math.abs(row.values.reward - 0.1 * row.step) < 1e-9, 'the values as the job wrote them');
      await until('the log tail to carry the job output', async () =>
        (await posted('log')).some((m) => m.stream === 'stdout' && /step \d+/.test(String(m.text))),
      );
      // The status bar counts the running job with its latest step.
      const look = await hook<{ statusText: string; events: Array<{ kind: string; name?: string }> }>('poke');
      assert.match(look.statusText, /\d+ jobs? · step \d+/);
      // A checkpoint appears: the panel lists it and the monitor announces it.
      const ckpt = join(store.dir(job.id), 'out', 'checkpoint-3');
      mkdirSync(ckpt, { recursive: true });
      writeFileSync(join(ckpt, 'config.json'), '{}');
      writeFileSync(join(ckpt, 'model.safetensors'), '');
      await until('the panel to list the checkpoint', async () =>
        (await posted('checkpoints')).some((m) =>
          (m.checkpoints as Array<{ path: string }>).some((c) => c.path === ckpt),
        ),
      );
      await until('the monitor to announce the checkpoint', async () =>
        (await hook<{ events: Array<{ kind: string; name?: string; job: { id: string } }> }>('poke')).events.some(
          (e) => e.kind === 'checkpoint' && e.job.id === job.id && e.name === 'checkpoint-3',
        ),
      );
      // Overlay the earlier job: its rows come as the overlay's.
      await hook('send', { type: 'setOverlay', id: before.id }, job.id);
      const overlay = (await posted('metrics')).filter((m) => m.which === 'overlay');
      assert.deepEqual(
        (overlay[overlay.length - 1].rows as Array<{ step: number; values: Record<string, number> }>).map((r) => [
          r.step,
          r.values['critic/score/mean'],
        ]),
        [
          [1, 0.1],
          [2, 0.2],
          [3, 0.3],
          [4, 0.4],
          [5, 0.5],
        ],
      );
      // What the host did not offer is refused.
      await hook('send', { type: 'setOverlay', id: 'no-such-job' }, job.id);
      await hook('send', { type: 'revealCheckpoint', path: '/etc' }, job.id);
      await hook('send', { type: 'openLogs', stream: '../../secret' }, job.id);
      await hook('send', { type: 'launch', command: 'rm' }, job.id);
      const rejected = await hook<string[]>('rejected');
      assert.equal(rejected.length, 4, rejected.join('\n'));
      assert.match(rejected[0], /not one of the offered jobs/);
      // After a reload: the panel comes back on the same job from its saved state.
      await hook('close', job.id);
      const revived = await vscode.commands.executeCommand<string | null>(
        'quarry.webviews.testHook',
        'revive',
        'quarry.jobs',
        {
          jobId: job.id,
          overlayId: before.id,
          range: null,
          stream: 'stdout',
          help: false,
        },
      );
      assert.equal(revived, null);
      assert.ok((await hook<string[]>('open')).includes(job.id));
      assert.match(
        String(
          await vscode.commands.executeCommand<string | null>('quarry.webviews.testHook', 'revive', 'quarry.jobs', {
            jobId: '../x',
          }),
        ),
        /is no job id/,
      );
      await vscode.commands.executeCommand('quarry.cancelJob', job.id);
      await hook('close', job.id);
    },
  );

  test(
    'Train a Model… answered from code writes the TRL job, ' + 'submits it, and a failure is announced',
    async function () {
      this.timeout(180_000);
      await api();
      const ws = vscode.workspace.workspaceFolders![0].uri.fsPath;
      const store = new JobStore(ws);
      const out = join(ws, '.quarry', 'launches', 'wizard-test');
      const id = await vscode.commands.executeCommand<string | undefined>('quarry.trainModel', {
        recipe: 'sql-trail',
        model: join(ws, 'no-such-model'),
        data: join(ws, 'no-such-data'),
        engine: 'trl',
        target: 'local',
        gpus: 0,
        nodes: 1,
        maxSteps: 3,
        out,
        review: 'submit',
      });
      assert.ok(id, 'a job was submitted');
      const job = store.get(id);
      assert.equal(job.engine, 'trl');
      assert.equal(job.recipe, 'sql-trail');
      assert.equal(job.target, 'local');
      const cmd = job.command;
      assert.deepEqual(cmd.slice(1, 3), ['-m', 'quarry_trainer.train.sft']);
      assert.equal(cmd[cmd.indexOf('--max-steps') + 1], '3');
      assert.equal(cmd[cmd.indexOf('--out') + 1], 'out', "the job's own out/, which every target pulls");
      assert.ok(cmd.includes('--cpu'));
      assert.ok((await vscode.commands.executeCommand<string[]>('quarry.jobs.testHook', 'open')).includes(id));
      // The model is not there: the run fails, and the monitor says so in one line: the exception that ended it.
      type Failed = { kind: string; tail?: string; summary?: string; job: { id: string } };
      let failed: Failed | undefined;
      await until(
        'the failure to be announced',
        async () => {
          const { events } = await vscode.commands.executeCommand<{ events: Failed[] }>('quarry.jobs.testHook', 'poke');
          failed = events.find((e) => e.kind === 'failed' && e.job.id === id && (e.tail ?? '').length > 0);
          return failed !== undefined;
        },
        150_000,
      );
      assert.match(failed?.summary ?? '', /^[\w.]*(Error|Exception)\b: \S/, failed?.summary);
      assert.doesNotMatch(failed?.summary ?? '', /\n|Traceback/);
      await vscode.commands.executeCommand('quarry.jobs.testHook', 'close', id);
    },
  );

  test('Train a Model… on a machine without CUDA refuses an 8-GPU launch before anything starts', async function () {
    this.timeout(120_000);
    await api();
    const ws = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const extensionPath = vscode.extensions.getExtension('quarry.quarry')!.extensionPath;
    // The interpreter the wizard trains with, probed as the wizard does: this test is about a machine without CUDA.
    const python = choosePython({ searchRoots: [ws, extensionPath] });
    if ((await probeGpus(python.path)).count > 0) this.skip();
    const store = new JobStore(ws);
    const before = store.list().length;
    const out = join(ws, '.quarry', 'launches', 'wizard-no-gpu');
    const id = await vscode.commands.executeCommand<string | undefined>('quarry.trainModel', {
      recipe: 'sql-trail',
      model: join(ws, 'no-such-model'),
      data: join(ws, 'no-such-data'),
      engine: 'trl',
      target: 'local',
      gpus: 8,
      nodes: 1,
      maxSteps: 3,
      out,
      review: 'submit',
    });
    assert.equal(id, undefined, 'nothing submitted');
    assert.equal(existsSync(out), false, 'nothing written');
    assert.equal(store.list().length, before);
  });
});
