// The table preview's registration in the panel kit (src/extension/webviews/kit.ts): view type `quarry.preview`, app
// webview/preview/, wire types src/protocol/preview.ts, saved state checked by previewRestore.
import { PREVIEW_RULES, type ToHost } from '../../protocol/preview';
import { previewRestore, type PreviewRestore } from '../../protocol/restore';
import type { PanelKind } from '../webviews/kit';

export const PREVIEW: PanelKind<ToHost, PreviewRestore> = {
  name: 'preview',
  title: 'Preview',
  rules: PREVIEW_RULES,
  restore: previewRestore,
};
