// Panels come back after a window reload, not only after hide/show: VS Code keeps each webview's saved state and, for a
// view type with a registered WebviewPanelSerializer (and `onWebviewPanel:<viewType>` among the activation events),
// hands it to deserializeWebviewPanel with a fresh panel. Each Quarry panel registers its `revive` here; revive checks
// the state (src/protocol/restore.ts), rebuilds what the panel showed, and returns why it could not (null: restored).
// Under tests `quarry.webviews.testHook` reaches the very same serializers with a panel the test creates.
import * as vscode from 'vscode';
import type { Services } from '../services';
import { webviewOptions } from './html';

/** Rebuilds a panel from its saved state; resolves to why the state was not used, or null. */
export type Revive = (panel: vscode.WebviewPanel, state: unknown) => Promise<string | null>;

const serializers = new Map<string, vscode.WebviewPanelSerializer>();
/** What the last revive of each view type said (tests read it through the hook). */
const outcomes = new Map<string, string | null>();

/** Sets up a revived panel the way a new one is: scripts on, the bundled resources only, the Quarry icon. */
export function preparePanel(panel: vscode.WebviewPanel, extensionUri: vscode.Uri): void {
  panel.webview.options = webviewOptions(extensionUri);
  panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'icons', 'quarry.svg');
}

export function registerPanelSerializer(
  context: vscode.ExtensionContext,
  services: Services,
  viewType: string,
  revive: Revive,
): void {
  const serializer: vscode.WebviewPanelSerializer = {
    async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
      try {
        const problem = await revive(panel, state);
        outcomes.set(viewType, problem);
        if (problem) services.log.warn(`${viewType}: the panel came back empty after a reload: ${problem}`);
        else services.log.info(`${viewType}: the panel came back after a reload`);
      } catch (err) {
        outcomes.set(viewType, (err as Error).message);
        services.log.error(`${viewType}: the panel could not come back after a reload`, err);
        panel.dispose();
      }
    },
  };
  serializers.set(viewType, serializer);
  context.subscriptions.push(vscode.window.registerWebviewPanelSerializer(viewType, serializer));
}

/**
 * Test-only: `quarry.webviews.testHook('revive', viewType, state)` creates a panel of that type and passes it with
 * `state` to the registered serializer, as VS Code does after a reload; it resolves to what the revive said (null:
 * restored). `viewTypes` lists the registered serializers. Registered only under tests.
 */
export function registerRestoreTestHook(context: vscode.ExtensionContext): void {
  if (context.extensionMode !== vscode.ExtensionMode.Test && process.env.QUARRY_TEST_HOOKS !== '1') return;
  const hook = async (op: unknown, viewType?: unknown, state?: unknown): Promise<unknown> => {
    switch (op) {
      case 'viewTypes':
        return [...serializers.keys()];
      case 'revive': {
        const serializer = typeof viewType === 'string' ? serializers.get(viewType) : undefined;
        if (!serializer) throw new Error(`quarry.webviews.testHook: no serializer for ${JSON.stringify(viewType)}`);
        const panel = vscode.window.createWebviewPanel(
          viewType as string,
          'Quarry',
          { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
          webviewOptions(context.extensionUri),
        );
        await serializer.deserializeWebviewPanel(panel, state);
        return outcomes.get(viewType as string) ?? null;
      }
      default:
        throw new Error(`quarry.webviews.testHook: unknown op ${JSON.stringify(op)}`);
    }
  };
  context.subscriptions.push(vscode.commands.registerCommand('quarry.webviews.testHook', hook));
}
