// The Training Jobs view in a real extension host: jobs in the workspace's .quarry/jobs/ (started here the way the
// CLI starts them, as real processes) show with their state and latest step; Cancel Job stops a running one; a job
// that fails shows as failed.
import * as assert from 'node:assert/strict';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import { JobStore, refreshJob, submitJob } from '../../src/app/jobs';
import type { QuarryApi } from '../../src/extension/extension';

async function api(): Promise<QuarryApi> {
  const ext = vscode.extensions.getExtension<QuarryApi>('quarry.quarry');
  assert.ok(ext);
  return ext.activate();
}

const until = async (what: string, f: () => Promise<boolean>, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
};

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
});
