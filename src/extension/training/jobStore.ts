// The editor's JobStore: the workspace's job folders with the targets of the `quarry.targets` setting (over
// .quarry/targets.json) and secrets from VS Code's SecretStorage (a target's `{"secret": true, "from": NAME}`
// variables; set with "Quarry: Set Target Secret…"), falling back to the editor's environment.
import * as vscode from 'vscode';
import { JobStore } from '../../app/jobs/store';
import { parseTargets, type TargetsConfig } from '../../core/training/jobs/targets';

let secrets: vscode.SecretStorage | undefined;
let warned = '';

/** SecretStorage keys: one per secret name. */
const secretKey = (name: string) => `quarry.target.secret.${name}`;

function settingTargets(): TargetsConfig | undefined {
  const raw = vscode.workspace.getConfiguration('quarry').get<unknown>('targets');
  if (raw === undefined || raw === null || (typeof raw === 'object' && Object.keys(raw).length === 0)) return undefined;
  try {
    return parseTargets(raw, 'the quarry.targets setting');
  } catch (err) {
    const message = (err as Error).message;
    if (message !== warned) {
      warned = message;
      void vscode.window.showWarningMessage(`Quarry: ${message}; using .quarry/targets.json only.`);
    }
    return undefined;
  }
}

export function jobStore(workspace: string): JobStore {
  return new JobStore(workspace, {
    targets: settingTargets(),
    secret: async (name) => (await secrets?.get(secretKey(name))) ?? process.env[name],
  });
}

export function registerJobStore(context: vscode.ExtensionContext): void {
  secrets = context.secrets;
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.setTargetSecret', async () => {
      const name = await vscode.window.showInputBox({
        title: 'Quarry: Set Target Secret',
        prompt: 'The secret\'s name, as a target\'s env names it ({"secret": true, "from": NAME}), e.g. WANDB_API_KEY',
        validateInput: (v) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(v) ? null : 'a variable name: letters, digits, _'),
      });
      if (!name) return;
      const value = await vscode.window.showInputBox({ title: `Value of ${name}`, password: true });
      if (value === undefined) return;
      await context.secrets.store(secretKey(name), value);
      void vscode.window.showInformationMessage(`Quarry: ${name} is stored in the editor's secret storage.`);
    }),
  );
}
