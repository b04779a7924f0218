// The labeling panel's registration in the panel kit (src/extension/webviews/kit.ts): view type `quarry.labeling`,
// app webview/labeling/, wire types src/protocol/labeling.ts, saved state checked by labelRestore.
import { LABEL_RULES, type ToHost } from '../../protocol/labeling';
import { labelRestore, type LabelRestore } from '../../protocol/restore';
import type { PanelKind } from '../webviews/kit';

export const LABELING: PanelKind<ToHost, LabelRestore> = {
  name: 'labeling',
  title: 'Quarry: Labeling',
  rules: LABEL_RULES,
  restore: labelRestore,
};
