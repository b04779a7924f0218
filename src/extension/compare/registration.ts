// The Compare Checkpoints panel's registration in the panel kit (src/extension/webviews/kit.ts): view type
// `quarry.compare`, app webview/compare/, wire types src/protocol/compare.ts, saved state checked by compareRestore.
import { COMPARE_RULES, compareRestore, type CompareState, type ToHost } from '../../protocol/compare';
import type { PanelKind } from '../webviews/kit';

export const COMPARE: PanelKind<ToHost, CompareState> = {
  name: 'compare',
  title: 'Compare Checkpoints',
  rules: COMPARE_RULES,
  restore: compareRestore,
  retainContextWhenHidden: true,
};
