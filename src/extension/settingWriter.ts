// Writes one `quarry.*` setting where the user keeps it: the workspace when it is set there, else the user settings.
// Its own module so the model picker (modelCommands) and the checkpoint commands share it without importing each other.
import * as vscode from 'vscode';

/** Writes a quarry.* setting where it is currently set (workspace if it is set there, else user settings). */
export async function updateSetting(key: string, value: unknown): Promise<void> {
  const cfg = vscode.workspace.getConfiguration('quarry');
  const info = cfg.inspect(key);
  const target =
    info?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await cfg.update(key, value, target);
}
