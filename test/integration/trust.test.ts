// The Workspace Trust gate in a real extension host. The editor tests run code-server with Workspace Trust off (every
// folder trusted), so the test hook `quarry.trust.testHook` makes the extension see an untrusted folder ('untrust')
// and then the grant VS Code announces ('grant'); the real Restricted Mode is test/e2e/trust.e2e.ts. Untrusted: every
// command that could start a process or reach a host refuses before it asks or runs anything, and the jobs monitor
// lists a running job as recorded without asking its target. Granted: the job is followed at once, without a reload.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import { JobStore } from '../../src/app/jobs';
import { newJobRecord } from '../../src/core/training/jobs/job';
import type { QuarryApi } from '../../src/extension/extension';
import { until } from '../support/until';

async function api(): Promise<QuarryApi> {
  const ext = vscode.extensions.getExtension<QuarryApi>('quarry.quarry');
  assert.ok(ext);
  return ext.activate();
}

const trust = (op: 'untrust' | 'grant' | 'refusals') =>
  vscode.commands.executeCommand<unknown>('quarry.trust.testHook', op);

suite('Workspace Trust', () => {
  test('untrusted: process-starting commands refuse, a running job is not followed; trusted: it is', async function () {
    this.timeout(120_000);
    const quarry = await api();
    const ws = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const store = new JobStore(ws);
    const id = 'trust-planted-run';
    // A running job whose process is gone: asking its target (local) says "lost".
    const gone = spawnSync('true');
    store.create({
      ...newJobRecord({ target: 'local', name: id, command: ['sleep', '1000'] }, id),
      status: 'running',
      startedAt: new Date().toISOString(),
      remote: { pid: gone.pid },
    });
    const status = () =>
      (JSON.parse(readFileSync(join(store.dir(id), 'job.json'), 'utf8')) as { status: string }).status;
    const before = ((await trust('refusals')) as string[]).length;
    await trust('untrust');
    try {
      const answered = [
        await vscode.commands.executeCommand('quarry.trainModel', {
          recipe: 'sft-tiny',
          model: 'media/models/tiny-sql',
          data: ws,
          engine: 'trl',
          target: 'local',
          gpus: 0,
          nodes: 1,
          maxSteps: 1,
          review: 'submit',
        }),
        await vscode.commands.executeCommand('quarry.cancelJob', id),
        await vscode.commands.executeCommand('quarry.loadCheckpoint', { checkpoint: '/nowhere', serve: true }),
        await vscode.commands.executeCommand('quarry.unloadCheckpoint', 'planted-server'),
        await vscode.commands.executeCommand('quarry.evaluateCheckpoint', {
          name: 'planted-server',
          dataset: 'spider:/nowhere/dev.json',
          dbDir: '/nowhere',
          protocol: 'skyrl',
        }),
        await vscode.commands.executeCommand('quarry.checkTrainingEnvironment'),
      ];
      assert.deepEqual(answered, [undefined, undefined, undefined, undefined, undefined, undefined]);
      assert.deepEqual(((await trust('refusals')) as string[]).slice(before), [
        'train',
        'cancelJob',
        'loadCheckpoint',
        'unloadCheckpoint',
        'evaluateCheckpoint',
        'checkEnvironment',
      ]);
      await vscode.commands.executeCommand('quarry.jobs.testHook', 'poke');
      assert.equal(status(), 'running', 'the job is as recorded: its target was not asked');
      const item = (await quarry.jobs!.getChildren()).find((i) => i.job.id === id);
      assert.match(String(item?.description), /^running · local · .*not followed: folder untrusted$/);
      assert.equal(store.list().find((j) => j.id === id)?.status, 'running');
    } finally {
      await trust('grant');
    }
    // Trusted now (as onDidGrantWorkspaceTrust announces): the Jobs view looks again and asks the target.
    await until('the job to be followed (lost: its process is gone)', () => status() === 'lost');
    const item = (await quarry.jobs!.getChildren()).find((i) => i.job.id === id);
    assert.doesNotMatch(String(item?.description), /not followed/);
    rmSync(store.dir(id), { recursive: true, force: true });
    await vscode.commands.executeCommand('quarry.refreshJobs');
  });
});
