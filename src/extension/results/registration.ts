// The Query Results panel's registration in the panel kit (src/extension/webviews/kit.ts): view type `quarry.results`,
// app webview/results/, wire types src/protocol/results.ts, saved state checked by resultsRestore. It opens beside the
// SQL document and leaves the focus there.
import * as vscode from 'vscode';
import { RESULTS_RULES, type ToHost } from '../../protocol/results';
import { resultsRestore, type ResultsRestore } from '../../protocol/restore';
import type { PanelKind } from '../webviews/kit';

export const RESULTS: PanelKind<ToHost, ResultsRestore> = {
  name: 'results',
  title: 'Query Results',
  rules: RESULTS_RULES,
  restore: resultsRestore,
  column: vscode.ViewColumn.Beside,
  preserveFocus: true,
};
