// Reward Diagnostics' registration in the panel kit (src/extension/webviews/kit.ts): view type `quarry.diagnostics`,
// app webview/diagnostics/, wire types src/protocol/diagnostics.ts, saved state checked by diagnosticsRestore.
import { DIAGNOSTICS_RULES, type ToHost } from '../../protocol/diagnostics';
import { diagnosticsRestore, type DiagnosticsRestore } from '../../protocol/restore';
import type { PanelKind } from '../webviews/kit';

export const DIAGNOSTICS: PanelKind<ToHost, DiagnosticsRestore> = {
  name: 'diagnostics',
  title: 'Quarry: Reward Diagnostics',
  rules: DIAGNOSTICS_RULES,
  restore: diagnosticsRestore,
};
