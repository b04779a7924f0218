// "Quarry: Check Training Environment" in a real extension host: it probes the interpreter named by quarry.python
// (a real Python here), shows the report as a read-only document, and reports a path with no interpreter plainly.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { suite, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import type { PythonEnvReport } from '../../src/core/training/pythonEnv';

const cfg = () => vscode.workspace.getConfiguration('quarry');
const check = () => vscode.commands.executeCommand<PythonEnvReport | undefined>('quarry.checkTrainingEnvironment');

suite('training environment check', () => {
  suiteTeardown(async () => {
    await cfg().update('python', undefined, vscode.ConfigurationTarget.Workspace);
  });

  test('the interpreter from quarry.python is probed and its report opens read-only', async function () {
    this.timeout(240_000);
    const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
    await cfg().update('python', python, vscode.ConfigurationTarget.Workspace);
    const report = await check();
    assert.ok(report, 'the command returns its report');
    assert.equal(report.python.source, 'setting');
    assert.equal(report.ok, true, report.problem);
    assert.ok(
      report.engines.some((e) => e.name === 'trl'),
      'every engine is listed',
    );
    const doc = vscode.window.activeTextEditor?.document;
    assert.equal(doc?.uri.scheme, 'quarry-report');
    assert.match(
      doc.getText(),
      new RegExp(`^Python: ${python.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(the quarry\\.python setting\\)`),
    );
    assert.match(doc.getText(), /transformers\s+\S+\s+(ok|missing)/);
  });

  test('a quarry.python that is not there is reported, not thrown', async function () {
    this.timeout(60_000);
    await cfg().update('python', '/nonexistent/bin/python', vscode.ConfigurationTarget.Workspace);
    const report = await check();
    assert.ok(report);
    assert.equal(report.ok, false);
    assert.match(report.problem ?? '', /no Python interpreter at '\/nonexistent\/bin\/python'/);
    assert.match(vscode.window.activeTextEditor?.document.getText() ?? '', /problem: no Python interpreter/);
  });
});
