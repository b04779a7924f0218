// The status bar item naming the active model ("$(hubot) openai · qwen"); a click switches it (quarry.selectModel).
import * as vscode from 'vscode';
import type { Services } from './services';

const MODEL_STATUS_ID = 'quarry.model';

export function registerStatusBar(context: vscode.ExtensionContext, services: Services): vscode.StatusBarItem {
  const item = vscode.window.createStatusBarItem(MODEL_STATUS_ID, vscode.StatusBarAlignment.Right, 100);
  item.name = 'Quarry Model';
  item.command = 'quarry.selectModel';
  let generation = 0;
  const update = (label: string): void => {
    item.text = `$(hubot) ${label}`;
    item.tooltip = new vscode.MarkdownString(
      `**Quarry model:** ${label}\n\nClick to switch; *Quarry: Test Model Connection* checks it.`,
    );
    item.accessibilityInformation = { label: `Quarry model ${label}. Switch model`, role: 'button' };
  };
  const refresh = (): void => {
    const mine = ++generation;
    update(services.modelLabel());
    // vscode.lm only says which model "first available" means when asked; ask in the background.
    void services.resolveModelLabel().then((label) => {
      if (mine === generation) update(label);
    });
  };
  refresh();
  item.show();
  context.subscriptions.push(item, services.onDidChangeModel(refresh));
  return item;
}
