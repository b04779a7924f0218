// Transitional: the panels not yet on the kit (src/extension/webviews/kit.ts) register their serializers through it
// with this older signature. Removed once every panel is built from the kit.
import * as vscode from 'vscode';
import type { Services } from '../services';
import { webviewOptions } from './html';
import { registerLegacySerializer } from './kit';

export { registerRestoreTestHook } from './kit';

/** Rebuilds a panel from its saved state; resolves to why the state was not used, or null. */
type Revive = (panel: vscode.WebviewPanel, state: unknown) => Promise<string | null>;

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
  registerLegacySerializer(context, services, viewType, revive);
}
