// The Ask panel's registration in the panel kit (src/extension/webviews/kit.ts): view type `quarry.ask`, app
// webview/ask/, wire types src/protocol/ask.ts, saved state checked by askRestore. It opens beside the editor.
import * as vscode from 'vscode';
import { ASK_RULES, type ToHost } from '../../protocol/ask';
import { askRestore, type AskRestore } from '../../protocol/restore';
import type { PanelKind } from '../webviews/kit';

export const ASK: PanelKind<ToHost, AskRestore> = {
  name: 'ask',
  title: 'Quarry: Ask',
  rules: ASK_RULES,
  restore: askRestore,
  column: vscode.ViewColumn.Beside,
};
