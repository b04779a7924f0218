// Trajectory Replay's registration in the panel kit (src/extension/webviews/kit.ts): view type `quarry.replay`, app
// webview/replay/, wire types src/protocol/replay.ts, saved state checked by replayRestore. The panel registers
// through lazyPanel.ts, which loads the panel itself only on first use.
import { REPLAY_RULES, type ToHost } from '../../protocol/replay';
import { replayRestore, type ReplayRestore } from '../../protocol/restore';
import type { PanelKind } from '../webviews/kit';

export const REPLAY: PanelKind<ToHost, ReplayRestore> = {
  name: 'replay',
  title: 'Quarry: Replay',
  rules: REPLAY_RULES,
  restore: replayRestore,
};
