// Editor start-up, measured in a real extension host (bench/editorStartup runs this suite alone and keeps the numbers):
// the extension's activation time as it reports it, and the first Ask panel open — from the command to the webview's
// first message to the host. Nothing here asserts a duration; the numbers go to QUARRY_TIMINGS_OUT when it is set.
import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import type { QuarryApi } from '../../src/extension/extension';
import { until } from '../support/until';

suite('startup timings', () => {
  test(
    'activation time is reported and the first Ask ' + 'panel open is timed to its first webview message',
    async function () {
      this.timeout(120_000);
      const ext = vscode.extensions.getExtension<QuarryApi>('quarry.quarry');
      assert.ok(ext);
      const api = await ext.activate();
      assert.ok(Number.isFinite(api.activationMs) && api.activationMs > 0, `activationMs ${api.activationMs}`);
      const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
      await vscode.commands.executeCommand('quarry.ask.testHook', 'clear');
      const t0 = performance.now();
      await vscode.commands.executeCommand('quarry.ask', {
        db: join(folder, 'data', 'clinic.sqlite'),
        pickDatabase: true,
      });
      const opened = performance.now() - t0;
      // Polled every 10 ms: the wait is part of the timing it reports.
      const types = await until(
        "the Ask panel's first webview message",
        async () => {
          const seen = await vscode.commands.executeCommand<string[]>('quarry.ask.testHook', 'fromWebview');
          return seen.length > 0 ? seen : undefined;
        },
        120_000,
        10,
      );
      const firstMessage = performance.now() - t0;
      assert.ok(types.length > 0);
      const timings = {
        activationMs: api.activationMs,
        askPanelCommandMs: opened,
        askPanelFirstMessageMs: firstMessage,
        firstWebviewMessage: types[0],
      };
      console.log(`startup timings: ${JSON.stringify(timings)}`);
      if (process.env.QUARRY_TIMINGS_OUT) writeFileSync(process.env.QUARRY_TIMINGS_OUT, JSON.stringify(timings) + '\n');
      await vscode.commands.executeCommand('quarry.ask.testHook', 'close');
    },
  );
});
