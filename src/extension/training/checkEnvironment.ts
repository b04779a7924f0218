// "Quarry: Check Training Environment": the same report as `quarry doctor` for the interpreter the editor would
// train with (quarry.python, else the Python extension's selected interpreter, else a workspace .venv/), shown as a
// read-only document, with the fix offered in a terminal or on the clipboard.
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Services } from '../services';
import { requireTrust } from '../trust';
import type { PythonEnvReport } from '../../core/training/pythonEnv';

const SCHEME = 'quarry-report';

/** The Python extension's selected interpreter for `resource`, when that extension is installed (its public API). */
async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = (ext.isActive ? ext.exports : await ext.activate()) as
      | {
          environments?: { getActiveEnvironmentPath(r?: vscode.Uri): { path: string } | undefined };
        }
      | undefined;
    return api?.environments?.getActiveEnvironmentPath(resource)?.path;
  } catch {
    return undefined;
  }
}

/** Reports shown so far, by URI query (each check is its own document, so an open one never shows stale text). */
const reports = new Map<string, string>();
let checks = 0;

export function registerCheckEnvironment(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
      provideTextDocumentContent: (uri) => reports.get(uri.query) ?? '',
    }),
  );
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.checkTrainingEnvironment', () => checkTrainingEnvironment(services)),
  );
}

/** Runs the check with progress and cancellation; returns the report (tests read it). */
async function checkTrainingEnvironment(services: Services): Promise<PythonEnvReport | undefined> {
  if (!requireTrust('checkEnvironment')) return undefined;
  const { choosePython, probePythonEnv, renderPythonEnvReport } = await import('../../core/training/pythonEnv');
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const python = choosePython({
    setting: services.settings().python,
    pythonExtension: await pythonExtensionInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri),
    searchRoots: folders,
  });
  const repoRoot = folders.find(
    (f) => existsSync(join(f, 'trainer', 'pyproject.toml')) && existsSync(join(f, 'scripts', 'python', 'setup.sh')),
  );
  const report = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      cancellable: true,
      title: `Quarry: checking the training environment (${python.path})`,
    },
    (_progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      return probePythonEnv(python, { signal: abort.signal, repoRoot });
    },
  );
  if (report.problem === 'cancelled') return undefined;
  const text = renderPythonEnvReport(report);
  services.log.info(`training environment check: ${report.ready ? 'ready' : 'not ready'} (${python.path})`);
  const uri = vscode.Uri.from({ scheme: SCHEME, path: '/Training Environment.txt', query: String(++checks) });
  reports.set(uri.query, text);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: true });

  const setupAction = repoRoot ? 'Run Setup in Terminal' : undefined;
  const copyAction = report.fixes.length > 0 ? 'Copy Fix Command' : undefined;
  const actions = [setupAction, copyAction, 'Set Interpreter…'].filter((a): a is string => a !== undefined);
  const message = report.ready
    ? `Quarry: the training environment is ready (${report.engines.filter((e) => e.imports).length} engines import).`
    : `Quarry: the training environment is not ready — ${report.problem ?? 'a required engine is missing'}.`;
  const show = report.ready ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  void Promise.resolve(show(message, ...(report.ready ? [] : actions))).then(async (choice) => {
    if (choice === setupAction && repoRoot) {
      const terminal = vscode.window.createTerminal({ name: 'Quarry: setup:python', cwd: repoRoot });
      terminal.show();
      terminal.sendText('npm run setup:python');
    } else if (choice === copyAction) {
      const pip = report.fixes.find((f) => f.includes('pip install')) ?? report.fixes[0];
      await vscode.env.clipboard.writeText(pip);
      void vscode.window.showInformationMessage('Quarry: copied the fix command.');
    } else if (choice === 'Set Interpreter…') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'quarry.python');
    }
  });
  return report;
}
