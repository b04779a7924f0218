// Trajectory Replay's panel, loaded on first use: the panel module (src/extension/replay/panel.ts, with the reader,
// the reward engine and the SQL parser) is imported when a panel opens or comes back after a reload, not at
// activation. Registers the kind (registration.ts) with the kit and adds Replay's own test-hook operations.
import type * as vscode from 'vscode';
import type { Services } from '../services';
import { registerPanel } from '../webviews/kit';
import { REPLAY } from './registration';
import type { LabelLookup } from './source';

/** The panel module, loaded when a panel opens or comes back, not at activation. */
export const panelModule = () => import('./panel');

/**
 * Registers the panel with the kit: after a window reload it comes back on the file and trajectory it showed.
 * `quarry.replay.testHook` adds `idle` (the scoring in progress has finished), `refreshLabels` and `forgetScores`
 * (the in-memory scorers go, as in a new session).
 */
export function registerReplay(context: vscode.ExtensionContext, services: Services, labels: LabelLookup): void {
  const current = async () => {
    const { ReplayPanel } = await panelModule();
    if (!ReplayPanel.current) throw new Error('the replay panel is not open');
    return ReplayPanel.current;
  };
  registerPanel(
    context,
    services,
    REPLAY,
    async (panel, saved) => (await panelModule()).ReplayPanel.revive(panel, context, services, labels, saved),
    {
      idle: async () => (await current()).idle().then(() => true),
      refreshLabels: async () => (await current()).refreshLabels().then(() => true),
      forgetScores: async () => {
        (await panelModule()).forgetScorers();
        return true;
      },
    },
  );
}
