// What every view of the replay app is handed: the channel to the host, the one state object and the page's
// skeleton. Views take it as an argument instead of reaching for module-level variables.
import type { Host } from '../shared/host';
import type { ReplayAppState, ToApp, ToHost } from '../../src/protocol/replay';
import type { Layout } from './layout';
import type { ReplayState } from './state';

export interface ReplayContext {
  readonly host: Host<ToHost, ToApp, ReplayAppState>;
  readonly state: ReplayState;
  readonly ui: Layout;
}

/** Saves what survives hide/show (with the list's scroll position). */
export function persist(ctx: ReplayContext): void {
  ctx.state.app.scrollTop = ctx.ui.viewport.scrollTop;
  ctx.host.saveState(ctx.state.app);
}
